"""The static values every evaluator shares: UNKNOWN (a value that cannot be known without
running the code), the depth guard and a statically built dict with its entries. Below both the
evaluator (values.py) and the reader of a function's returned dict (returned_dicts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst

from dagguard.model.basics.scope import Scope


class _Unknown:
    """A value that cannot be known without running the code."""

    _instance: Optional["_Unknown"] = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()
MAX_DEPTH = 20  # guards against `A = B; B = A` style cycles through constants


@dataclass(frozen=True)
class DictEntry:
    key_node: Optional[cst.BaseExpression]
    value_node: cst.BaseExpression
    value: Any
    # The scope the nodes are read in: a dict built in another module (an imported
    # default_args) has its nodes in that module's tree, not in the checked file's.
    scope: Optional[Scope] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class StaticDict:
    """A dict built statically; `complete` is False when an unresolvable `**x` may add keys."""

    entries: dict[str, DictEntry]
    complete: bool
