"""Which keyword a factory call takes for a DAG argument: what a fix may add to the call.

`create_dag(...)` gains `max_active_runs=1` only when the factory passes that keyword on to the
DAG it builds: a parameter of that name that reaches `DAG(...)`, or `**kwargs` forwarded into
it. Anything else is a TypeError when the scheduler parses the file, worse than the finding.
The answer comes from resolving the call again with the keyword added, through the same
factory analysis that made the DAG, so it follows wrappers, nested factories and defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.basics.arguments import Arguments
from dagguard.model.project.factories import Resolver
from dagguard.model.basics.scope import Scope


@dataclass(frozen=True)
class FactoryCall:
    """A call that made a DAG through a factory, and what resolved it."""

    resolver: Resolver
    call: cst.Call
    scope: Scope
    factory: str                     # the factory's qualified name

    def keyword_for(self, name: str, made: Arguments) -> Optional[str]:
        """The keyword that, added to the call, sets the DAG's `name`; None when none surely
        does. `made` is the DAG's arguments as the call stands."""
        declared = next((d for d in self.resolver.declared if d.qualname == self.factory), None)
        if declared is not None:
            # Out of the tree: only what the declaration names is known to be accepted.
            renamed = next((param for param, target in declared.arguments if target == name), None)
            if renamed is not None:
                return renamed
            return name if name in dict(declared.defaults) and name not in dict(declared.arguments) else None
        probe = cst.Arg(value=cst.Name("None"), keyword=cst.Name(name))
        remade = self.resolver.dag_from_call(self.call.with_changes(args=[*self.call.args, probe]), self.scope)
        reached = remade.args.get(name) if remade is not None else None
        if reached is None or reached.report_node is not probe:
            return None   # refused (no such parameter) or not passed on to DAG(...)
        before = made.get(name)
        # A value the factory sets itself would be passed twice (`DAG(catchup=x, **kwargs)`):
        # only a default of the parameter the keyword binds gives way to it.
        if before is not None and (before.factory_default is None or before.factory_default.parameter != name):
            return None
        return name
