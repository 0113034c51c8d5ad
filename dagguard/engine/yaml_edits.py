"""The YAML text edits that do what a rule's fix does to the Python generated from a dag-factory
file: a renamed keyword renames the key, a new literal replaces the scalar, a keyword added to a
DAG's call becomes a `key: value` line. Below engine/yaml_check.py (which offers only the fixes
the YAML can take) and engine/yaml_fixes.py (which applies them)."""

from __future__ import annotations

import ast
import difflib
import json
import re
from typing import Any, Optional

Edit = tuple[int, int, str]   # (start, end) character offsets in the YAML text, and the new text

_KEYWORD_LINE = re.compile(r"^(?P<indent>\s*)(?P<name>[A-Za-z_]\w*)=(?P<value>.*),$")
_DICT_LINE = re.compile(r"^(?P<indent>\s*)(?P<name>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"): (?P<value>.*),$")
_PLAIN = re.compile(r"[A-Za-z_][\w./-]*")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})
_OPENING = "with _dagguard_DAG("


def yaml_edits(text: str, generated: Any, dag_file: Any, module: Any, fix: Any) -> Optional[list[Edit]]:
    """The YAML text edits that do what `fix` does to the generated Python; None when it cannot."""
    from dagguard.engine.fix_apply import _apply

    if module is None:
        return None
    fixed = _apply(module, [fix])
    if fixed is None:
        return None
    old = generated.text.splitlines()
    new = fixed.decode("utf-8").splitlines()
    edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for offset in range(i2 - i1):
                found = _replaced(old[i1 + offset], new[j1 + offset], generated.lines.get(i1 + offset + 1))
                if found is None:
                    return None
                edits.extend(found)
        elif tag == "insert":
            found = _inserted(new[j1:j2], i1, old, text, generated, dag_file)
            if found is None:
                return None
            edits.extend(found)
        else:
            return None
    return edits or None


def _parse(line: str) -> Optional[tuple[str, str]]:
    match = _KEYWORD_LINE.match(line)
    if match is not None:
        return match.group("name"), match.group("value")
    match = _DICT_LINE.match(line)
    if match is not None:
        return ast.literal_eval(match.group("name")), match.group("value")
    return None


def _replaced(old_line: str, new_line: str, where: Any) -> Optional[list[Edit]]:
    entry = where.entry if where is not None else None
    if entry is None or not entry.here:
        return None
    before, after = _parse(old_line), _parse(new_line)
    if before is None or after is None:
        return None
    edits: list[Edit] = []
    if before[0] != after[0]:
        if not entry.plain_key or not _PLAIN.fullmatch(after[0]):
            return None
        edits.append((entry.key_place.start_index, entry.key_place.end_index, after[0]))
    if before[1] != after[1]:
        import yaml

        node = entry.node
        if not isinstance(node, yaml.ScalarNode) or node.style not in (None, "'", '"'):
            return None
        scalar = _scalar(after[1], node.style)
        if scalar is None:
            return None
        edits.append((entry.value_place.start_index, entry.value_place.end_index, scalar))
    return edits


def _inserted(lines: list[str], at: int, old: list[str], text: str, generated: Any,
              dag_file: Any) -> Optional[list[Edit]]:
    """Keywords added to a DAG's call: `key: value` lines under the DAG block's key."""
    opening = None
    for index in range(at - 1, -1, -1):
        if old[index].startswith(_OPENING):
            opening = index + 1
            break
        if old[index] == "):":
            return None   # after the call: a task, or code around it
    if opening is None:
        return None
    dag_id = generated.lines[opening].dag_id
    dag = next((d for d in dag_file.dags if d.dag_id == dag_id), None)
    if dag is None or dag.block_indent is None:
        return None
    starts = _line_starts(text)
    if dag.place.line >= len(starts):
        return None
    added = []
    for line in lines:
        parsed = _parse(line)
        if parsed is None or not _PLAIN.fullmatch(parsed[0]):
            return None
        scalar = _scalar(parsed[1], None)
        if scalar is None:
            return None
        added.append(f"{' ' * dag.block_indent}{parsed[0]}: {scalar}{_newline(text)}")
    position = starts[dag.place.line]   # the start of the line after the DAG's key
    return [(position, position, "".join(added))]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, character in enumerate(text):
        if character == "\n":
            starts.append(index + 1)
    return starts


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _scalar(python: str, style: Optional[str]) -> Optional[str]:
    """A Python literal as YAML, in the scalar's own quoting where it can be."""
    try:
        value = ast.literal_eval(python)
    except (ValueError, SyntaxError):
        return None
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        return None
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style is None and _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value)


def _apply_edits(text: str, edits: list[Edit]) -> str:
    for start, end, new in sorted(set(edits), key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _overlaps(a: Edit, b: Edit) -> bool:
    if a == b:
        return False
    return a[0] < b[1] and b[0] < a[1] or (a[0] == a[1] == b[0] == b[1])
