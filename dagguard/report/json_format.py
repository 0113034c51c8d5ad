"""JSON: an array of findings and nothing else; JSON Lines: one finding object per line."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii   # C, as json.dumps uses for strings
from typing import Any

from dagguard.engine.results import CheckResult

_LITERALS = {True: "true", False: "false", None: "null"}


def format_json(result: CheckResult, color: bool) -> str:
    # The bytes of json.dumps(..., indent=2), which has no C encoder for indented output: its
    # pure-Python one took a fifth of a warm run's CPU on 1,160 files (issue 25).
    return indented_json([f.to_dict() for f in result.findings]) + "\n"


def format_json_lines(result: CheckResult, color: bool) -> str:
    return "".join(json.dumps(f.to_dict()) + "\n" for f in result.findings)


def indented_json(value: Any, depth: int = 0) -> str:
    """`json.dumps(value, indent=2)`, byte for byte, for plain JSON values: strings, numbers,
    booleans, None, and lists, tuples and dicts of them (string keys)."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return int.__repr__(value)
    if value is None or kind is bool:
        return _LITERALS[value]
    if kind is dict and all(type(key) is str for key in value):
        if not value:
            return "{}"
        inner = "\n" + "  " * (depth + 1)
        items = [encode_basestring_ascii(key) + ": " + indented_json(item, depth + 1) for key, item in value.items()]
        return "{" + inner + ("," + inner).join(items) + "\n" + "  " * depth + "}"
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        inner = "\n" + "  " * (depth + 1)
        return "[" + inner + ("," + inner).join([indented_json(item, depth + 1) for item in value]) + \
            "\n" + "  " * depth + "]"
    # Anything else (floats, non-string keys, subclasses): json's own text, indented at this depth.
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * depth)
