"""Find the Python files to check under the given paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from dagguard.config import ConfigError, Settings
from dagguard.engine.ignore_files import IgnoreFiles
from dagguard.engine.selection import matches_glob

SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".eggs", "site-packages", "__pypackages__",
})


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover_files(paths: Iterable[Path], settings: Settings) -> list[Path]:
    """Every .py file under `paths` (explicit files of any name too), minus exclusions, sorted.

    As in ruff, a path given explicitly is checked even if excluded, unless force-exclude.
    """
    found: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
        skip = path_filter(path, settings)
        if path.is_file():
            if not (settings.force_exclude and skip(path, False)):
                found.add(path)
            continue
        for folder, subfolders, files in os.walk(path):
            here = Path(folder)
            subfolders[:] = sorted(
                name for name in subfolders
                if name not in SKIPPED_FOLDERS and not _is_virtualenv(here / name)
                and not skip(here / name, True)
            )
            for name in files:
                candidate = here / name
                if name.endswith(".py") and not skip(candidate, False):
                    found.add(candidate)
    return sorted(found)


def path_filter(top: Path, settings: Settings) -> Callable[[Path, bool], bool]:
    """Whether a path below `top` is left out: `exclude`, and the ignore files unless
    respect-gitignore is off. Called with (path, is it a folder)."""
    ignore_files = IgnoreFiles(top) if settings.respect_gitignore else None

    def skip(path: Path, is_dir: bool) -> bool:
        return _excluded(path, settings) or (ignore_files is not None and ignore_files.ignored(path, is_dir))
    return skip


def _excluded(path: Path, settings: Settings) -> bool:
    return any(matches_glob(path, pattern, settings.root) for pattern in settings.exclude)
