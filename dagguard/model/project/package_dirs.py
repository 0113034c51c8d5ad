"""Where the project's import names live when a folder of that name does not hold them.

A repository installed under another name (`workflows/` at its root, imported as
`acme_pipelines.workflows.x`) is found through `[tool.dagguard] packages = { "acme_pipelines" =
"." }`, or through what its `pyproject.toml` says about its build when that is simple and
certain: `[tool.setuptools.package-dir]`, `[tool.setuptools.packages.find] where`, hatch's wheel
`packages` and `sources`, and last the `[project] name` itself (`acme-pipelines` is imported as
`acme_pipelines`) when no folder of that name exists. Nothing is imported or installed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class PackageLayout:
    """More module roots, and import names mapped to the folder that is their package."""

    roots: tuple[Path, ...] = ()
    packages: tuple[tuple[str, Path], ...] = ()   # longest name first


def normalised_name(name: str) -> str:
    """A distribution name as Python imports it: `Acme-Pipelines` -> `acme_pipelines`."""
    return re.sub(r"[-_.]+", "_", name).lower()


def package_layout(base: Optional[Path], config_path: Optional[Path],
                   declared: Sequence[tuple[str, str]] = (), declared_base: Optional[Path] = None) -> PackageLayout:
    """The declared `packages` (relative to `declared_base`: the config file's folder, or the
    working folder for `--config 'packages = ...'` alone), then what the nearest pyproject.toml
    (the config file, else the first at or above `base`) says of its build."""
    roots: list[Path] = []
    packages: dict[str, Path] = {}
    if declared_base is not None:
        packages.update((name, (declared_base / folder).resolve()) for name, folder in declared)
    pyproject = _nearest_pyproject(config_path, base)
    if pyproject is not None:
        found_roots, found_packages = _build_layout(pyproject)
        roots.extend(found_roots)
        for name, folder in found_packages:
            packages.setdefault(name, folder)
    ordered = sorted(packages.items(), key=lambda item: -len(item[0]))
    return PackageLayout(tuple(dict.fromkeys(roots)), tuple(ordered))


def _nearest_pyproject(config_path: Optional[Path], base: Optional[Path]) -> Optional[Path]:
    if config_path is not None and config_path.name == "pyproject.toml":
        return config_path
    if base is None:
        return None
    for folder in (base, *base.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _build_layout(pyproject: Path) -> tuple[list[Path], list[tuple[str, Path]]]:
    """Roots and packages from one pyproject.toml; nothing when it cannot be read (its own
    errors are not this linter's to report)."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return [], []
    folder = pyproject.parent.resolve()
    roots: list[Path] = []
    packages: list[tuple[str, Path]] = []
    tool = _table(data, "tool")
    setuptools = _table(tool, "setuptools")
    for name, where in _table(setuptools, "package-dir").items():
        if isinstance(where, str):
            _add(folder / where, name, roots, packages)
    find = _table(_table(setuptools, "packages"), "find")
    for where in _strings(find.get("where")):
        _add(folder / where, "", roots, packages)
    wheel = _table(_table(_table(_table(tool, "hatch"), "build"), "targets"), "wheel")
    for package in _strings(wheel.get("packages")):
        path = folder / package
        _add(path, path.name, roots, packages)
    sources = wheel.get("sources")
    if isinstance(sources, list):
        for prefix in _strings(sources):
            _add(folder / prefix, "", roots, packages)   # the prefix is stripped: a root
    elif isinstance(sources, dict):
        for prefix, target in sources.items():
            if isinstance(target, str):
                _add(folder / prefix if prefix else folder, target.strip("/").replace("/", "."), roots, packages)
    name = _table(data, "project").get("name")
    if isinstance(name, str) and normalised_name(name).isidentifier():
        imported = normalised_name(name)
        laid_out = any(n == imported or n.startswith(imported + ".") for n, _ in packages)
        if not laid_out and not _holds(folder, imported) and not _holds(folder / "src", imported):
            packages.append((imported, folder))
    return roots, packages


def _add(path: Path, name: str, roots: list[Path], packages: list[tuple[str, Path]]) -> None:
    """A folder that exists: a root when `name` is empty, else the package `name`."""
    if not path.is_dir():
        return
    if not name:
        roots.append(path.resolve())
    elif all(part.isidentifier() for part in name.split(".")):
        packages.append((name, path.resolve()))


def _holds(folder: Path, name: str) -> bool:
    return (folder / name).is_dir() or (folder / f"{name}.py").is_file()


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

