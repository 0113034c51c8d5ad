"""Branch paths as plain data: what cross-file rules compare, with no tree in sight (a cached
run compares them without parsing, or importing libcst)."""

from __future__ import annotations

# (id of an if / match / conditional expression, the index of the branch taken), root first.
BranchPath = tuple[tuple[int, int], ...]


def exclusive(first: BranchPath, second: BranchPath) -> bool:
    """Do the two paths take different branches of one `if` or `match`, so that only one of
    the two nodes ever runs? (A loop or a function called twice could still run both: that
    is for the callers' other checks.)"""
    for mine, theirs in zip(first, second):
        if mine != theirs:
            return mine[0] == theirs[0]
    return False
