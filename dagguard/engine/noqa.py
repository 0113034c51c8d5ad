"""`# noqa` comments: bare (silence everything on the line) or with a list of codes.

Comments are read with the tokenizer, so a `# noqa` inside a string is not one. A line that
cannot end in a comment (inside a multi-line string, or continued with a backslash) takes the
noqa of the line where the statement can carry one: the string's last line, as in ruff.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Collection, Iterator, Mapping, Optional

# flake8/ruff syntax: `# noqa`, `# noqa: DG101`, `# noqa: DG101, DG102`, `#noqa:DG101 DG102`.
_NOQA = re.compile(r"#\s*noqa(?![\w-])(?P<list>\s*:\s*(?P<rest>[^#]*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")
_SEPARATOR = re.compile(r"[,\s]+")

ALL = None  # a bare noqa silences every code


@dataclass(frozen=True)
class NoqaDirective:
    """One `# noqa` comment: where it is, the codes it names (None: bare), the words after
    `noqa:` that are not codes, and its text's span on the line (start, end columns)."""

    line: int
    codes: Optional[tuple[str, ...]]
    not_codes: tuple[str, ...]
    start: int
    end: int


def _directive(line: int, column: int, comment: str) -> Optional[NoqaDirective]:
    match = _NOQA.search(comment)
    if match is None:
        return None
    if match.group("list") is None:
        return NoqaDirective(line, ALL, (), column + match.start(), column + match.end())
    words = [w for w in _SEPARATOR.split(match.group("rest")) if w]
    codes: list[str] = []
    for word in words:
        if not _CODE.fullmatch(word):
            break   # the rest is an explanation (`# noqa: DG101 backfill is bounded`)
        codes.append(word.upper())
    end = column + match.start("rest") + _codes_length(match.group("rest"), len(codes))
    not_codes = tuple(words[:1]) if not codes else ()
    return NoqaDirective(line, tuple(codes), not_codes, column + match.start(), end)


def directive_of(line: int, column: int, comment: str) -> Optional[NoqaDirective]:
    """The noqa directive in a comment found some other way (a YAML file's comments)."""
    return _directive(line, column, comment)


def _codes_length(rest: str, count: int) -> int:
    """How many characters of `rest` the first `count` codes (and their separators) take."""
    if count == 0:
        return 0
    matches = list(_CODE.finditer(rest))
    return matches[count - 1].end()


def _comments(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, text) of every comment; every `#` of a line when the tokenizer fails."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.start[1], token.string
        return
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    for number, line in enumerate(physical_lines(text), start=1):
        if "#" in line:
            yield number, line.index("#"), line[line.index("#"):]


def directives(text: str) -> dict[int, NoqaDirective]:
    """Every noqa comment of the text, by 1-based line."""
    if "noqa" not in text.lower():
        return {}
    found: dict[int, NoqaDirective] = {}
    for line, column, comment in _comments(text):
        directive = _directive(line, column, comment)
        if directive is not None:
            found[line] = directive
    return found


def comment_line(text: str) -> dict[int, int]:
    """Lines that cannot end in a comment, mapped to the line whose comment covers them."""
    moved: dict[int, int] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return moved
    for token in tokens:
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            for line in range(token.start[0], token.end[0]):
                moved[line] = token.end[0]
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    for number in range(len(lines), 0, -1):
        if number not in moved and lines[number - 1].endswith("\\"):
            moved[number] = moved.get(number + 1, number + 1)
    # Follow chains: a string ending on a backslash-continued line.
    return {line: _final(moved, target) for line, target in moved.items()}


def physical_lines(text: str) -> list[str]:
    """The lines as Python counts them (\\n, \\r\\n or \\r), endings kept."""
    return io.StringIO(text, newline="").readlines()


def _final(moved: Mapping[int, int], line: int) -> int:
    seen = set()
    while line in moved and line not in seen:
        seen.add(line)
        line = moved[line]
    return line


def parse_noqa(text: str, found: Optional[Mapping[int, NoqaDirective]] = None
               ) -> Mapping[int, Optional[frozenset[str]]]:
    """Map 1-based line numbers to the codes their noqa comment names (None: all codes);
    `found` is directives(text) when the caller has it already."""
    found = directives(text) if found is None else found
    if not found:
        return {}
    codes: dict[int, Optional[frozenset[str]]] = {
        line: (ALL if d.codes is ALL else frozenset(d.codes)) for line, d in found.items()
    }
    for line, target in comment_line(text).items():
        if target in codes and line not in codes:
            codes[line] = codes[target]
    return codes


def noqa_warnings(text: str, known_codes: Collection[str],
                  found: Optional[Mapping[int, NoqaDirective]] = None) -> list[tuple[int, str]]:
    """(line, message) for a `# noqa:` that names no code, or a dagguard code that does not exist.
    Other tools' codes (E501, F401...) are theirs to check."""
    warnings: list[tuple[int, str]] = []
    for line, directive in sorted((directives(text) if found is None else found).items()):
        if directive.codes is ALL:
            continue
        if not directive.codes:
            word = directive.not_codes[0] if directive.not_codes else ""
            warnings.append((line, f"`# noqa:` names no rule code ({word!r}), so it silences nothing"))
            continue
        for code in directive.codes:
            if code.startswith("DG") and code not in known_codes:
                warnings.append((line, f"`# noqa` names {code}, which is not a dagguard rule"))
    return warnings


def is_suppressed(noqa: Mapping[int, Optional[frozenset[str]]], code: str, lines: tuple[int, ...]) -> bool:
    """True when a noqa comment on any of `lines` covers `code`."""
    for line in lines:
        if line in noqa:
            codes = noqa[line]
            if codes is ALL or code in codes:
                return True
    return False
