"""What calling a project function runs: the calls its body makes, followed into the project
functions it calls in turn, a few levels deep.

`CFG = get_config()` at module level runs `get_config`'s body whenever the file is parsed; if
that body calls `Variable.get(...)`, the read is paid at every parse, at the call site. The
callee is a function (or a class's `__init__`) of the same file, or of a project module reached
through the project index; nothing is imported or run. Followed: the body's statements, not its
nested functions, lambdas or classes (they run later, if ever), and only plain functions (or
ones memoised by functools): a decorated one may never run its body (`@task` makes a task of
it), and an `@dag` function's body is already read as the file's own parse-time code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

import libcst as cst

from dagguard.model.project.project import ModuleLink
from dagguard.model.basics.scope import ClassBinding, FunctionBinding, Scope, function_scope
from dagguard.model.basics.tree import branch_nodes

# Functions followed below the one called: `get_config()` -> `_load()` -> `_read()`. Deeper
# helpers are rare and each level multiplies the bodies read.
MAX_CHAIN_DEPTH = 3
# Decorators that keep the body running when the function is called (once per parse).
_TRANSPARENT_DECORATORS = frozenset({"functools.cache", "functools.lru_cache", "staticmethod", "classmethod"})

CallTest = Callable[[cst.Call, Scope], bool]


@dataclass(frozen=True)
class Step:
    """One function on the way: its name as called, where it lives, and the call in its body
    that leads on (to the next function, or the call found)."""

    name: str                        # as written at the call: `get_config`, `config.load`
    path: Optional[Path]             # its file; None: the checked file
    module: Optional[cst.Module]     # that file's tree; None: the checked file's
    call: cst.Call                   # the call in its body that leads on


@dataclass(frozen=True)
class CallChain:
    """A call passing the test, reached through `steps` from a call site."""

    steps: tuple[Step, ...]
    found: cst.Call                  # the same node as steps[-1].call
    scope: Scope                     # where `found` is read


@dataclass(frozen=True)
class _Callee:
    function: cst.FunctionDef
    module_scope: Scope              # the scope the function is defined in
    path: Optional[Path]
    module: Optional[cst.Module]


_Frame = tuple[Optional[Path], Optional[cst.Module]]


class CallFollower:
    """Follows calls into project functions for one file; what a function reaches is worked out
    once per file however many call sites call it."""

    def __init__(self, test: CallTest, max_depth: int = MAX_CHAIN_DEPTH) -> None:
        self.test = test
        self.max_depth = max_depth
        # (id of the function, levels left) -> what its body reaches.
        self._reached: dict[tuple[int, int], list[_Reach]] = {}
        # The functions being read, by id: a call back into one of them is a cycle (recursion,
        # or helpers calling each other), and reaches nothing the first reading does not.
        self._active: set[int] = set()

    def chains(self, call: cst.Call, scope: Scope) -> list[CallChain]:
        """The calls passing the test that `call` runs through project functions, in the order
        of the bodies; empty when it calls none (or calls something not statically known)."""
        return self._through(call, scope, (None, None), self.max_depth)

    def _through(self, call: cst.Call, scope: Scope, frame: _Frame, left: int) -> list[CallChain]:
        if left <= 0:
            return []
        callee = _callee(call, scope, frame)
        if callee is None:
            return []
        key = (id(callee.function), left)
        if id(callee.function) in self._active:
            return []
        if key not in self._reached:
            self._active.add(id(callee.function))
            try:
                self._reached[key] = self._body(callee, left)
            finally:
                self._active.discard(id(callee.function))
        reached = self._reached[key]
        if not reached:
            return []
        name = cst.Module([]).code_for_node(call.func)
        return [CallChain((Step(name, callee.path, callee.module, leading),) + rest.steps, rest.found, rest.scope)
                for leading, rest in reached]

    def _body(self, callee: _Callee, left: int) -> list[_Reach]:
        """What the function's body reaches: each call found, directly or through a call of it."""
        scope = function_scope(callee.function, callee.module_scope)
        frame: _Frame = (callee.path, callee.module)
        found: list[_Reach] = []
        stack: list[cst.CSTNode] = [callee.function.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                continue   # runs later, if ever
            if isinstance(node, cst.Call):
                if self.test(node, scope):
                    found.append((node, CallChain((), node, scope)))
                    continue
                found.extend((node, chain) for chain in self._through(node, scope, frame, left - 1))
            stack.extend(reversed(branch_nodes(node)))
        return found


# A call in a function's body, and the chain it starts (no steps: the call is the one found).
_Reach = tuple[cst.Call, CallChain]


def _callee(call: cst.Call, scope: Scope, frame: _Frame) -> Optional[_Callee]:
    """The project function (or class `__init__`) `call` calls, with where it is defined."""
    func = call.func
    if type(func) is cst.Name:
        binding = scope.single(func.value)  # type: ignore[attr-defined]
        if type(binding) is FunctionBinding or type(binding) is ClassBinding:
            return _made(binding, _defining_scope(scope, func.value), *frame)  # type: ignore[arg-type,attr-defined]
    elif type(func) is not cst.Attribute:
        return None
    elif type(func.value) is cst.Name:  # type: ignore[attr-defined]
        # `Config.load()`: a static or class method of a class of this module.
        owner = scope.single(func.value.value)  # type: ignore[attr-defined]
        if type(owner) is ClassBinding:
            return _made(_class_method(owner.node, func.attr.value),  # type: ignore[attr-defined,union-attr]
                         _defining_scope(scope, func.value.value), *frame)  # type: ignore[attr-defined]
    qual = scope.qualname(func)
    link = scope.project_link()
    if qual is None or qual.startswith("airflow.") or not isinstance(link, ModuleLink):
        return None
    found = link.index.resolve(qual, link.path)
    if found is not None:
        return _made(found.binding, found.module.scope, found.module.path, found.module.module)
    # `Config.load()` with Config imported from a project module.
    owner_name, _, method = qual.rpartition(".")
    holder = link.index.resolve(owner_name, link.path) if owner_name else None
    if holder is None or type(holder.binding) is not ClassBinding:
        return None
    return _made(_class_method(holder.binding.node, method), holder.module.scope,  # type: ignore[union-attr]
                 holder.module.path, holder.module.module)


def _defining_scope(scope: Scope, name: str) -> Scope:
    """The scope whose bindings hold `name`: a module function called from inside another
    function is read in its module's scope, not in its caller's."""
    current: Optional[Scope] = scope
    while current is not None:
        if name in current.bindings:
            return current.whole
        current = current.parent
    return scope.whole


def _made(binding: object, module_scope: Scope, path: Optional[Path],
          module: Optional[cst.Module]) -> Optional[_Callee]:
    node: Union[cst.FunctionDef, cst.ClassDef, None] = getattr(binding, "node", None)
    if isinstance(node, cst.ClassDef):
        node = _init_of(node)
    if not isinstance(node, cst.FunctionDef) or node.asynchronous is not None:
        return None
    if not all(_transparent(decorator, module_scope) for decorator in node.decorators):
        return None
    return _Callee(node, module_scope, path, module)


def _class_method(cls: cst.ClassDef, name: str) -> Optional[FunctionBinding]:
    """The class's static or class method `name`: what `Config.load()` runs (a plain method
    needs an instance, whose state is not followed)."""
    for stmt in _class_body(cls):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name and any(
                isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
                for d in stmt.decorators):
            return FunctionBinding(stmt)
    return None


def _class_body(cls: cst.ClassDef) -> tuple[cst.BaseStatement, ...]:
    return tuple(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else ()  # type: ignore[arg-type]


def _init_of(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    """The class's own `__init__`: what `Settings()` runs."""
    return next((stmt for stmt in _class_body(cls)
                 if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__"), None)


def _transparent(decorator: cst.Decorator, scope: Scope) -> bool:
    target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
    if isinstance(target, cst.Name) and target.value in ("staticmethod", "classmethod") \
            and not scope.lookup(target.value):
        return True
    return scope.qualname(target) in _TRANSPARENT_DECORATORS
