"""Find the Python files to check under the given paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from dagguard.config import ConfigError, Settings
from dagguard.engine.selection import matches_glob

SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".eggs", "site-packages", "__pypackages__",
})


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover_files(paths: Iterable[Path], settings: Settings) -> list[Path]:
    """Every .py file under `paths` (explicit files of any name too), minus exclusions, sorted."""
    found: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
        if path.is_file():
            if not _excluded(path, settings):
                found.add(path)
            continue
        for folder, subfolders, files in os.walk(path):
            here = Path(folder)
            subfolders[:] = sorted(
                name for name in subfolders
                if name not in SKIPPED_FOLDERS and not _is_virtualenv(here / name)
                and not _excluded(here / name, settings)
            )
            for name in files:
                candidate = here / name
                if name.endswith(".py") and not _excluded(candidate, settings):
                    found.add(candidate)
    return sorted(found)


def _excluded(path: Path, settings: Settings) -> bool:
    return any(matches_glob(path, pattern, settings.root) for pattern in settings.exclude)
