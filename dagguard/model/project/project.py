"""The project index: the checked project's own modules, found and parsed statically.

`from common.factory import create_dag` names a module of the project when
`common/factory.py` sits under a module root. Roots are searched the way Airflow's `sys.path`
would find the module; nothing is imported or run. Each module is read and parsed at most
once per run, on first use. A module that is missing, does not parse, or is reached again
while following its own re-exports (an import cycle) answers nothing: its names stay unknown.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional, Sequence

import libcst as cst

from dagguard.model.project.package_dirs import PackageLayout, package_layout
from dagguard.model.basics.parsing import parse_module
from dagguard.model.basics.scope import (Binding, ConstantBinding, FunctionBinding, ImportBinding, ModuleScope,
                                  ProjectLink, Scope, module_scope)

MAX_FOLLOW = 8                     # re-export hops (`from .a import f` in __init__.py ...)
MAX_MODULE_BYTES = 2 * 1024 * 1024
# Checked files' trees kept in case a later file imports them (a tree is about 500 bytes per
# byte of source, so only a few): the most recent library-like modules, not the DAG files.
MAX_REMEMBERED = 32
# Names under these packages are never project modules: skip the file-system lookups.
_FOREIGN = frozenset({
    "airflow", "datetime", "pendulum", "os", "sys", "typing", "json", "logging", "re",
    "collections", "functools", "pathlib", "dataclasses", "time", "__future__",
})


class ProjectModule:
    """One parsed module of the project; its bindings are read on first use."""

    def __init__(self, name: str, path: Path, module: cst.Module, index: "ProjectIndex") -> None:
        self.name = name           # dotted module name
        self.path = path
        self.module = module
        self._index = index
        self._scope: Optional[ModuleScope] = None

    @property
    def scope(self) -> ModuleScope:
        if self._scope is None:
            self._scope = module_scope(self.module)
            self._scope.project = ModuleLink(self._index, self.path)
        return self._scope


@dataclass(frozen=True)
class Resolved:
    """What a qualified name means: a binding in a project module."""

    module: ProjectModule
    name: str
    binding: Binding

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.name}"


class ProjectIndex:
    """Answers "what does this imported name mean" for every file checked in one run."""

    def __init__(self, roots: Iterable[Path], packages: Iterable[tuple[str, Path]] = ()) -> None:
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(_resolved(root) for root in roots))
        # Import names whose package is a folder of another name (dagguard.model.project.package_dirs),
        # longest first: consulted before the roots.
        self.packages: tuple[tuple[str, Path], ...] = tuple(
            sorted(((name, _resolved(folder)) for name, folder in packages), key=lambda item: -len(item[0])))
        self._by_name: dict[str, Optional[ProjectModule]] = {}
        self._by_path: dict[Path, Optional[ProjectModule]] = {}
        self._tops: dict[str, tuple[Path, ...]] = {}
        self._root_order = {root: index for index, root in reversed(list(enumerate(self.roots)))}
        self._remembered: "OrderedDict[Path, cst.Module]" = OrderedDict()
        self.analyses: dict[int, object] = {}   # per-node facts (dagguard.model.project.factories)
        # Modules resolved through since the last `reset_touched`: what a file's result depends
        # on, so that a cache re-checks the callers of an edited factory.
        # The chains are kept by id: a file follows the same few hundred times, and hashing
        # their paths each time cost more than following them.
        self._touched: dict[int, tuple[Path, ...]] = {}
        self._retired: list[ProjectModule] = []
        self._resolutions: dict[str, tuple[Optional[Resolved], tuple[Path, ...]]] = {}
        self._absent: dict[str, tuple[Path, ...]] = {}

    def absent_modules(self, names: Iterable[str]) -> frozenset[Path]:
        """The files that would make the imported `names` project modules, for the names that
        are none today (their top is no project package, or the module is missing from it);
        relative imports come as real paths without `.py`. The standard library's and the
        known outside packages' names are left out: no project file can become them."""
        found: list[Path] = []
        for name in names:
            known = self._absent.get(name)
            if known is None:
                known = self._absent[name] = self._absent_candidates(name)
            found.extend(known)
        return frozenset(found)

    def _absent_candidates(self, name: str) -> tuple[Path, ...]:
        if os.path.isabs(name):
            candidates: tuple[Path, ...] = (Path(name + ".py"), Path(name) / "__init__.py")
        else:
            top = name.split(".", 1)[0]
            if top in _FOREIGN or top in sys.stdlib_module_names:
                return ()
            relative = Path(*name.split("."))
            candidates = tuple(candidate for root in (self._roots_with(top) or self.roots)
                               for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"))
        return () if any(candidate.is_file() for candidate in candidates) else candidates

    def reset_touched(self) -> frozenset[Path]:
        """The modules resolved through since the last call, and start afresh."""
        touched = frozenset(path for chain in self._touched.values() for path in chain)
        self._touched = {}
        return touched

    # --- modules ---------------------------------------------------------------------------

    def module_named(self, name: str) -> Optional[ProjectModule]:
        """The project module `name` (a.b.c), parsed on first use; None when not in the project."""
        if name in self._by_name:
            return self._by_name[name]
        found = self._mapped_module(name)
        top = name.split(".", 1)[0]
        if found is None and top not in _FOREIGN and self._roots_with(top):
            relative = Path(*name.split("."))
            for root in self._roots_with(top):
                for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
                    if candidate.is_file():
                        found = self._load(name, candidate)
                        break
                if found is not None:
                    break
        self._by_name[name] = found
        return found

    def _mapped_module(self, name: str) -> Optional[ProjectModule]:
        """`name` under a mapped package: `acme_pipelines.workflows.common` is
        `<folder>/workflows/common.py` when `acme_pipelines` maps to `<folder>`."""
        for package, folder in self.packages:
            if name != package and not name.startswith(package + "."):
                continue
            rest = name[len(package) + 1:]
            relative = Path(*rest.split(".")) if rest else None
            candidates = ((folder / "__init__.py",) if relative is None
                          else (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"))
            for candidate in candidates:
                if candidate.is_file():
                    return self._load(name, candidate)
        return None

    def module_at(self, path: Path) -> Optional[ProjectModule]:
        """The parsed module at `path` when the index has already read it (or can)."""
        path = _resolved(path)
        if path in self._by_path:
            return self._by_path[path]
        return self._load(self.module_name_of(path) or path.stem, path)

    def parsed(self, path: Path) -> Optional[cst.Module]:
        """The tree of `path` if the index parsed it already: the engine reuses it."""
        path = _resolved(path)
        module = self._by_path.get(path)
        return module.module if module is not None else self._remembered.get(path)

    def remember(self, path: Path, module: cst.Module) -> None:
        """Keep a tree the engine parsed for a while, so that an import of it soon after is
        not parsed again. Imported modules stay for the run; remembered ones make way."""
        path = _resolved(path)
        if path in self._by_path:
            return
        self._remembered[path] = module
        self._remembered.move_to_end(path)
        while len(self._remembered) > MAX_REMEMBERED:
            self._remembered.popitem(last=False)

    def forget(self, path: Path) -> None:
        """Drop the tree of `path` (its text changed: a fix pass); the next use reads the new one."""
        path = _resolved(path)
        self._remembered.pop(path, None)
        self._resolutions.clear()   # names may now mean something else
        old = self._by_path.pop(path, None)
        if old is not None:
            # Facts about nodes are keyed by id(): keeping the old tree alive keeps its ids unused.
            self._retired.append(old)
            self._by_name = {name: m for name, m in self._by_name.items() if m is not old}

    def _load(self, name: str, path: Path) -> Optional[ProjectModule]:
        path = _resolved(path)
        if path in self._by_path:
            return self._by_path[path]
        loaded: Optional[ProjectModule] = None
        kept = self._remembered.pop(path, None)
        if kept is not None:
            self._by_path[path] = ProjectModule(name, path, kept, self)
            return self._by_path[path]
        try:
            if path.stat().st_size <= MAX_MODULE_BYTES:
                tree = parse_module(path.read_bytes())
                loaded = ProjectModule(name, path, tree, self)
        except Exception:  # unreadable, or does not parse: its names stay unknown
            loaded = None
        self._by_path[path] = loaded
        return loaded

    def _roots_with(self, top: str) -> tuple[Path, ...]:
        """The roots holding a package or module `top`, in order. Explicitly named files make
        each of their folders a root: hundreds of them, so each is asked once per name."""
        known = self._tops.get(top)
        if known is None:
            known = self._tops[top] = tuple(
                root for root in self.roots if (root / top).is_dir() or (root / f"{top}.py").is_file())
        return known

    def module_name_of(self, path: Path) -> Optional[str]:
        """The dotted name `path` has under the first root that holds it."""
        path = _resolved(path)
        # The first root among the path's folders (a few), not a pass over every root.
        holding = [self._root_order[folder] for folder in path.parents if folder in self._root_order]
        for index in sorted(holding):
            relative = path.relative_to(self.roots[index])
            parts = list(relative.with_suffix("").parts)
            if parts and parts[-1] == "__init__":
                parts.pop()
            if parts:
                return ".".join(parts)
        for package, folder in self.packages:   # a module only a mapped package holds
            if folder in path.parents:
                parts = list(path.relative_to(folder).with_suffix("").parts)
                if parts and parts[-1] == "__init__":
                    parts.pop()
                return ".".join([package, *parts])
        return None

    # --- names -----------------------------------------------------------------------------

    def absolute(self, qualname: str, importer: Optional[Path]) -> Optional[str]:
        """`qualname` with a relative import's leading dots replaced by the importer's package."""
        if not qualname.startswith("."):
            return qualname
        if importer is None:
            return None
        level = len(qualname) - len(qualname.lstrip("."))
        rest = qualname[level:]
        package = self.module_name_of(importer)
        if package is None:
            return None
        parts = package.split(".")
        if _resolved(importer).name != "__init__.py":
            parts = parts[:-1]
        if level - 1 > len(parts):
            return None
        base = parts[:len(parts) - (level - 1)]
        return ".".join([*base, rest] if rest else base) or None

    def resolve(self, qualname: str, importer: Optional[Path] = None) -> Optional[Resolved]:
        """The project binding `qualname` names, following re-exports; None when not static."""
        start = self.absolute(qualname, importer)
        if start is None:
            return None
        # Every file asks for the same few names (its operators, its factory): each absolute
        # name is followed once per run, and the modules it went through are touched again.
        known = self._resolutions.get(start)
        if known is None:
            known = self._resolutions[start] = self._follow(start)
        found, through = known
        self._touched[id(through)] = through
        return found

    def _follow(self, start: str) -> tuple[Optional[Resolved], tuple[Path, ...]]:
        seen: set[str] = set()
        through: list[Path] = []
        current: Optional[str] = start
        for _ in range(MAX_FOLLOW):
            if current is None or current in seen:
                break   # an import cycle
            seen.add(current)
            module, found = self._binding(current)
            if module is not None:   # a name it lacks today may be defined by an edit
                through.append(module.path)
            if found is None:
                break
            if type(found.binding) is not ImportBinding:
                return found, tuple(through)
            current = self.absolute(found.binding.qualname, found.module.path)  # type: ignore[union-attr]
        return None, tuple(through)

    def _binding(self, qualname: str) -> tuple[Optional[ProjectModule], Optional[Resolved]]:
        """The project module `qualname` points into, and its one binding of the name."""
        module_name, _, name = qualname.rpartition(".")
        if not module_name or qualname.split(".", 1)[0] in _FOREIGN:
            return None, None
        module = self.module_named(module_name)
        if module is None:
            return None, None
        bindings = module.scope.bindings.get(name, ())
        if len(bindings) != 1:
            return module, None
        return module, Resolved(module, name, bindings[0])


class ModuleLink(ProjectLink):
    """A module's way into the index: its imports resolve relative to its own path."""

    def __init__(self, index: ProjectIndex, path: Optional[Path]) -> None:
        self.index = index
        self.path = path

    def constant(self, qualname: str) -> Optional[tuple[cst.BaseExpression, Scope]]:
        found = self.index.resolve(qualname, self.path)
        if found is None or type(found.binding) is not ConstantBinding:
            return None
        return found.binding.value, found.module.scope  # type: ignore[union-attr]

    def function(self, qualname: str) -> Optional[tuple[cst.FunctionDef, Scope]]:
        found = self.index.resolve(qualname, self.path)
        if found is None or type(found.binding) is not FunctionBinding:
            return None
        return found.binding.node, found.module.scope  # type: ignore[union-attr]


def project_roots(paths: Sequence[Path], config_path: Optional[Path], src: Sequence[str],
                  files: Sequence[Path] = ()) -> list[Path]:
    """Where the project's modules are found: the config's folder (else the paths' common
    parent), each folder given, each folder named dags or plugins on the way to a given path or
    to one of the checked `files` (Airflow puts both on sys.path), and `src`: the configured
    entries, else ruff's default `[".", "src"]`."""
    resolved = [_resolved(p) for p in paths]
    folders = [p if p.is_dir() else p.parent for p in resolved]
    base = config_path.parent if config_path is not None else _common_parent(folders)
    roots: list[Path] = []
    if base is not None:
        roots.append(base)
    if src:
        # Entries are relative to the config file; `--config 'src = [...]'` alone, as for
        # exclude globs, to the working folder.
        src_base = config_path.parent if config_path is not None else Path(os.getcwd())
        roots.extend(_resolved(src_base / entry) for entry in src)
    else:
        default_base = _resolved(config_path.parent if config_path is not None else Path(os.getcwd()))
        roots.extend(root for root in (default_base, default_base / "src")
                     if root not in roots and root.is_dir())
    for path, folder in zip(resolved, folders):
        # A folder given is a root; the folder of a file named alone is not (pre-commit names
        # files one by one, and must resolve them as `dagguard check .` does).
        if path == folder:
            roots.append(folder)
        roots.extend(parent for parent in (folder, *folder.parents)
                     if parent.name in ("dags", "plugins"))
    # `dagguard check .` reaches dags/team/x.py, whose `from common import f` is dags/common.py.
    for folder in dict.fromkeys(_resolved(f).parent for f in files):
        roots.extend(parent for parent in (folder, *folder.parents)
                     if parent.name in ("dags", "plugins") and parent not in roots)
    return roots


def project_layout(paths: Sequence[Path], config_path: Optional[Path], src: Sequence[str],
                   packages: Sequence[tuple[str, str]] = (), files: Sequence[Path] = (),
                   ) -> tuple[tuple[Path, ...], tuple[tuple[str, Path], ...]]:
    """The index's module roots (project_roots, then those the build configuration names) and
    its mapped packages (`[tool.dagguard] packages`, then the nearest pyproject.toml's build
    configuration: dagguard.model.project.package_dirs)."""
    roots = project_roots(paths, config_path, src, files)
    folders = [p if p.is_dir() else p.parent for p in (_resolved(p) for p in paths)]
    base = config_path.parent if config_path is not None else _common_parent(folders)
    # Declared folders are relative to the config file, or to the working folder when given
    # with `--config 'packages = ...'` alone (as config.py checks them).
    declared_base = config_path.parent if config_path is not None else Path(os.getcwd())
    layout: PackageLayout = package_layout(base, config_path, packages, declared_base)
    return (*roots, *layout.roots), layout.packages


def _common_parent(folders: Sequence[Path]) -> Optional[Path]:
    if not folders:
        return None
    common = folders[0]
    for folder in folders[1:]:
        while common not in (folder, *folder.parents):
            common = common.parent
    return common


def _resolved(path: Path) -> Path:
    # The same paths are resolved for every file, a dozen system calls each; a relative one
    # means another file in another working folder.
    return _resolved_from(path if path.is_absolute() else Path(os.getcwd(), path))


@lru_cache(maxsize=16384)
def _resolved_from(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
