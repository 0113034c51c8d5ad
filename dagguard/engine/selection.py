"""Which rule codes are enabled for a file: select/ignore prefixes and per-file-ignores."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from dagguard.config import Settings


def _longest_match(code: str, prefixes: tuple[str, ...]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


def is_enabled(code: str, settings: Settings) -> bool:
    """The more specific of a matching select and ignore prefix wins; ties are ignored."""
    selected = _longest_match(code, settings.select)
    ignored = _longest_match(code, settings.ignore)
    return selected >= 0 and selected > ignored


def relative_posix(path: Path, root: Path) -> str:
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve())).as_posix()
    except ValueError:
        return PurePosixPath(path).as_posix()


def matches_glob(path: Path, pattern: str, root: Path) -> bool:
    """ruff-style matching: against the path relative to the config folder, or the file name."""
    rel = relative_posix(path, root)
    pattern = pattern.rstrip("/")
    if fnmatch(rel, pattern) or fnmatch(path.name, pattern):
        return True
    # A folder pattern excludes everything below it.
    parts = PurePosixPath(rel).parts
    return any(fnmatch("/".join(parts[:i]), pattern) or fnmatch(parts[i - 1], pattern)
               for i in range(1, len(parts)))


def ignored_for_file(code: str, path: Path, settings: Settings) -> bool:
    for pattern, codes in settings.per_file_ignores:
        if matches_glob(path, pattern, settings.root) and any(code.startswith(c) for c in codes):
            return True
    return False
