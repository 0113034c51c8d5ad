"""`--add-noqa`: a `# noqa: CODES` comment for every current finding, merged into the line's
existing noqa comment (never a second one); every other byte of the file is kept."""

from __future__ import annotations

import datetime as dt
import io
import tokenize
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

from dagguard.config import Settings
from dagguard.engine.fixes import write_atomically
from dagguard.engine.noqa import ALL, comment_line, directives, physical_lines
from dagguard.engine.runner import check_paths
from dagguard.engine.yaml_check import is_yaml_path, yaml_directives
from dagguard.rules import SYNTAX_ERROR


def add_noqa_to_text(text: str, codes_by_line: Mapping[int, Iterable[str]], yaml: bool = False) -> str:
    """The text with each line's codes added to its noqa comment (or a new one at its end);
    `yaml`: the text is dag-factory YAML, whose comments are read as YAML's."""
    moved = comment_line(text) if not yaml else {}
    wanted: dict[int, set[str]] = defaultdict(set)
    for line, codes in codes_by_line.items():
        wanted[moved.get(line, line)].update(codes)
    existing = directives(text) if not yaml else dict(yaml_directives(text))
    lines = physical_lines(text)
    for number, codes in wanted.items():
        if not 1 <= number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        directive = existing.get(number)
        if directive is None:
            lines[number - 1] = f"{body}  # noqa: {', '.join(sorted(codes))}{ending}"
            continue
        if directive.codes is ALL:
            continue
        missing = sorted(codes - set(directive.codes))
        if not missing:
            continue
        if directive.codes:    # into its list, after the codes it names; an explanation stays
            merged = ", ".join(list(directive.codes) + missing)
            lines[number - 1] = f"{body[:directive.start]}# noqa: {merged}{body[directive.end:]}{ending}"
        else:                  # `# noqa: typo`: the codes go first, the words stay as explanation
            words = body[directive.start:].split(":", 1)[1].strip()
            lines[number - 1] = (f"{body[:directive.start]}# noqa: {', '.join(missing)}"
                                 f"{' ' + words if words else ''}{ending}")
    return "".join(lines)


def _decode(source: bytes) -> tuple[str, str]:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding), encoding


def add_noqa(paths: Iterable[Path], settings: Settings, now: dt.datetime) -> int:
    """Add noqa comments for every current finding under `paths`; returns how many lines changed."""
    result = check_paths(paths, settings, now)
    by_file: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for finding in result.findings:
        if finding.code != SYNTAX_ERROR.code:   # a file that does not parse cannot be edited safely
            by_file[finding.path][finding.line].add(finding.code)
    changed_lines = 0
    for shown, codes_by_line in by_file.items():
        path = Path(shown)
        source = path.read_bytes()
        try:
            text, encoding = _decode(source)
        except (SyntaxError, UnicodeDecodeError, LookupError):
            continue
        fixed = add_noqa_to_text(text, codes_by_line, yaml=is_yaml_path(path))
        if fixed != text:
            changed_lines += sum(a != b for a, b in zip(text.splitlines(), fixed.splitlines()))
            write_atomically(path, fixed.encode(encoding))
    return changed_lines
