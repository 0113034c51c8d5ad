"""`.gitignore` and `.ignore` files, read as git (and ruff) read them.

Each file's patterns apply to the paths below its folder; a deeper file overrides a shallower
one, `.ignore` overrides `.gitignore` in the same folder, and `!pattern` re-includes. Inside a
git repository the files from its root down count, and `.git/info/exclude`; outside one, those
from the checked folder down. The pattern matching itself is pathspec's gitwildmatch.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILES = (".gitignore", ".ignore")  # later wins


def _read_spec(path: Path) -> Optional[GitIgnoreSpec]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # absent, a folder, unreadable: nothing ignored by it
        return None
    from pathspec import GitIgnoreSpec  # 70 ms: only once there is an ignore file to read

    return GitIgnoreSpec.from_lines(lines)


def git_root(folder: Path, known: Optional[dict[str, Optional[str]]] = None) -> Optional[Path]:
    """The nearest folder at or above `folder` holding `.git` (a folder, or a worktree's file).
    `known` remembers the answers for every folder looked at, for callers asking about many."""
    known = {} if known is None else known
    walked: list[str] = []
    current = os.path.abspath(folder)
    while current not in known:
        walked.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            known[current] = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            known[current] = None
            break
        current = parent
    found = known[current]
    known.update((folder_walked, found) for folder_walked in walked)
    return Path(found) if found is not None else None


class IgnoreFiles:
    """Answers "is this path ignored?" for paths below `top`, reading each ignore file once."""

    def __init__(self, top: Path, base: Optional[Path] = None) -> None:
        """`base`: where the ignore files start counting, when the caller knows (git_root)."""
        top = Path(os.path.abspath(top))
        folder = top if top.is_dir() else top.parent
        self._base = str(base or git_root(folder) or folder)
        self._specs = lru_cache(maxsize=None)(self._folder_specs)
        if top.is_dir() and self.ignored(top, True):
            # A folder given explicitly is checked although ignored (as in ruff); only the ignore
            # files inside it still count.
            self._base = str(top)

    def _folder_specs(self, folder: str) -> tuple["GitIgnoreSpec", ...]:
        names = [os.path.join(folder, name) for name in IGNORE_FILES]
        if folder == self._base:
            names.insert(0, os.path.join(folder, ".git", "info", "exclude"))
        return tuple(spec for spec in (_read_spec(Path(name)) for name in names) if spec is not None)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether the deepest ignore pattern that matches `path` excludes it."""
        # Plain strings, not Path objects: this runs for every file and folder walked, and a
        # warm cached run is little more than this walk.
        text = os.path.abspath(path)
        base = self._base
        if text == base or not text.startswith(base.rstrip(os.sep) + os.sep):
            return False
        folder = os.path.dirname(text)
        while True:
            specs = self._specs(folder)
            if specs:
                relative = text[len(folder.rstrip(os.sep)) + 1:].replace(os.sep, "/") + ("/" if is_dir else "")
                for spec in reversed(specs):
                    include = spec.check_file(relative).include
                    if include is not None:
                        return include
            if folder == base:
                return False
            folder = os.path.dirname(folder)
