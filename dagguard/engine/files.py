"""Find the Python files to check under the given paths, and read them."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

from dagguard.config import ConfigError, Settings
from dagguard.engine.ignore_files import IgnoreFiles, git_root
from dagguard.engine.selection import matches_glob

SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".eggs", "site-packages", "__pypackages__",
})
_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


# Python, and YAML for dag-factory (its default suffixes; engine/yaml_check.py reads only
# the YAML that is dag-factory's).
CHECKED_SUFFIXES = (".py", ".yml", ".yaml")
MAX_FILE_BYTES = 10 * 1024 * 1024   # larger files are a DG000 finding, not read


class UnreadableFile(Exception):
    """A file that is not read: not a regular file, too large, or an OS error; the message says which."""


@dataclass(frozen=True)
class Discovery:
    """The files to check, and what could not be looked into, with why."""

    files: tuple[Path, ...]
    problems: tuple[tuple[Path, str], ...] = ()


def _is_virtualenv(folder: Path) -> bool:
    try:
        return (folder / "pyvenv.cfg").is_file()
    except OSError:  # an unreadable folder: os.walk reports it when it tries to list it
        return False


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def discover_files(paths: Iterable[Path], settings: Settings) -> Discovery:
    """Every .py, .yml and .yaml file under `paths` (explicit files of any name too), minus
    exclusions, sorted.

    As in ruff, a path given explicitly is checked even if excluded, unless force-exclude.
    Special files (pipes, devices) are never read: skipped in folders, reported when named.
    """
    found: set[Path] = set()
    problems: list[tuple[Path, str]] = []
    # A named file's filter depends only on where its ignore files start (its git root, else
    # its folder): files named one by one (pre-commit passes thousands) share one, and each
    # ignore file is read once.
    roots: dict[str, Optional[str]] = {}
    file_filters: dict[Path, Callable[[Path, bool], bool]] = {}

    def file_filter(path: Path) -> Callable[[Path, bool], bool]:
        folder = Path(os.path.dirname(os.path.abspath(path)))
        base = git_root(folder, roots) or folder
        return file_filters.get(base) or file_filters.setdefault(base, path_filter(path, settings, base))

    for path in paths:
        # One stat per named file (a warm pre-commit run names every file): the filter of a
        # named file is needed only with force-exclude.
        try:
            mode = os.stat(path).st_mode
        except OSError:
            if not os.path.lexists(path):
                raise ConfigError(f"{path}: no such file or directory") from None
            # A broken symlink, an unreachable file: reading it reports why.
            if not (settings.force_exclude and file_filter(path)(path, False)):
                found.add(path)
            continue
        if stat.S_ISDIR(mode):
            found.update(_walk(path, path_filter(path, settings), problems))
        elif settings.force_exclude and file_filter(path)(path, False):
            continue
        elif stat.S_ISREG(mode):
            found.add(path)
        else:
            problems.append((path, f"not checked: {_kind(mode)}, not a regular file"))
    return Discovery(tuple(sorted(found)), tuple(problems))


def _walk(root: Path, skip: Callable[[Path, bool], bool], problems: list[tuple[Path, str]]) -> Iterable[Path]:
    def unreadable(error: OSError) -> None:
        problems.append((Path(error.filename or root), f"cannot read the folder: {error.strerror or error}"))

    for folder, subfolders, files in os.walk(root, onerror=unreadable):
        here = Path(folder)
        subfolders[:] = sorted(
            name for name in subfolders
            if name not in SKIPPED_FOLDERS and not _is_virtualenv(here / name)
            and not skip(here / name, True)
        )
        for name in files:
            candidate = here / name
            if name.endswith(CHECKED_SUFFIXES) and not skip(candidate, False) and _may_be_source(candidate):
                yield candidate


def _may_be_source(path: Path) -> bool:
    """False for special files (a FIFO would block the read forever, /dev/zero never ends)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return True  # a broken symlink or an unreadable file: reading it reports why


def read_source(path: Path, max_bytes: int) -> bytes:
    """The file's bytes; UnreadableFile unless it is a regular file of at most `max_bytes`."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it changes nothing for files.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"not checked: {_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise UnreadableFile(too_large_message(info.st_size, max_bytes))
        try:
            data = file.read(max_bytes + 1)
        except OSError as exc:
            raise UnreadableFile(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew since fstat
        raise UnreadableFile(too_large_message(len(data), max_bytes))
    return data


def too_large_message(size: int, max_bytes: int) -> str:
    return f"file is too large to check ({size // 1024 // 1024} MiB, limit {max_bytes // 1024 // 1024} MiB)"


def path_filter(top: Path, settings: Settings, base: Optional[Path] = None) -> Callable[[Path, bool], bool]:
    """Whether a path below `top` is left out: `exclude`, and the ignore files (from `base`
    down, default: top's git root) unless respect-gitignore is off. Called with (path, is it a
    folder)."""
    ignore_files = IgnoreFiles(top, base) if settings.respect_gitignore else None

    def skip(path: Path, is_dir: bool) -> bool:
        return _excluded(path, settings) or (ignore_files is not None and ignore_files.ignored(path, is_dir))
    return skip


def _excluded(path: Path, settings: Settings) -> bool:
    return any(matches_glob(path, pattern, settings.root) for pattern in settings.exclude)
