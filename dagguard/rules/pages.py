"""The rule pages (rules/DGnnn.md): where they live, and the examples they carry.

An example is a fenced block whose info string is `python bad` or `python good`, optionally
followed by settings for that example, e.g. ```python bad airflow-version=2```. A block tagged
```sql file=NAME``` or ```python file=NAME``` before it is a file the example reads (a SQL
script, a factory module it imports), written beside it as NAME. A block tagged ```python fixed```
right after a bad example is what `--fix --unsafe-fixes` makes of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

_FENCE = re.compile(r"^```(?:python[ \t]+(?P<kind>bad|good|fixed)(?P<options>[^\n]*)|(?:sql|python)[ \t]+file=(?P<file>[\w./-]+)[ \t]*)"
                    r"\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Example:
    kind: str                         # "bad" or "good"
    code: str
    options: tuple[tuple[str, str], ...]
    number: int                       # 1-based among examples of the same kind
    files: tuple[tuple[str, str], ...] = ()   # (name, text) of files written beside it
    fixed: Optional[str] = None       # a bad example's text after its rule's fixes


def pages_folder() -> Optional[Path]:
    """rules/ beside the package in a checkout, or the copy a wheel carries."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "rule_pages", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    return None


def page_text(code: str) -> Optional[str]:
    folder = pages_folder()
    if folder is None:
        return None
    page = folder / f"{code}.md"
    return page.read_text(encoding="utf-8") if page.is_file() else None


def examples(text: str) -> list[Example]:
    """Every tagged example of a page, in order."""
    counts = {"bad": 0, "good": 0}
    found = []
    files: list[tuple[str, str]] = []
    for match in _FENCE.finditer(text):
        if match.group("file"):
            files.append((match.group("file"), match.group("code")))
            continue
        kind = match.group("kind")
        if kind == "fixed":
            if not found or found[-1].kind != "bad" or found[-1].fixed is not None:
                raise ValueError("a ```python fixed``` block must follow a bad example")
            found[-1] = replace(found[-1], fixed=match.group("code"))
            continue
        counts[kind] += 1
        options = tuple(
            tuple(item.split("=", 1)) for item in match.group("options").split() if "=" in item
        )
        found.append(Example(kind, match.group("code"), options, counts[kind], tuple(files)))  # type: ignore[arg-type]
        files = []
    return found


_INFO_STRING = re.compile(r"^```(?P<language>python|sql)[ \t]+(?P<tags>\S[^\n]*)$", re.MULTILINE)


def labelled_for_terminal(text: str) -> str:
    """The page with each tagged example's label (`bad`, `good airflow-version=2`, `file=q.sql`)
    as a line above its block: a Markdown renderer shows only the language of an info string."""
    def label(match: re.Match[str]) -> str:
        return f"\n*{match.group('tags').strip()}:*\n\n```{match.group('language')}"
    return _INFO_STRING.sub(label, text)
