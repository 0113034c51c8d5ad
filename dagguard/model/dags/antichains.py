"""The most tasks of one DAG run that can be running at once, from the "runs before" edges
alone: the linter (model/dags/serial_tasks.py) and the cluster policy (dagguard.policy) both ask.
No libcst here."""

from __future__ import annotations

from typing import Optional

# Trigger rules that wait for every upstream task to finish (`always` and the `one_*` rules do not).
WAITING_RULES = frozenset({
    "all_success", "all_failed", "all_done", "all_done_min_one_success", "all_skipped", "none_failed",
    "none_failed_min_one_success", "none_skipped", "none_failed_or_skipped", "all_done_setup_success",
})
MAX_TASKS = 128   # beyond this the bound is not worked out: its cost grows with the cube


def widest_antichain(downstream: list[list[int]]) -> Optional[int]:
    """The most tasks no two of which are ordered, for tasks 0..n-1 where `downstream[i]` lists
    the tasks that wait for task i (Dilworth: the tasks less the largest matching of 'runs
    before' pairs); None for a cycle, which Airflow refuses to load."""
    waiting = [0] * len(downstream)
    for targets in downstream:
        for j in targets:
            waiting[j] += 1
    # Each task's descendants as a bit set, filled in reverse topological order.
    order = [i for i, count in enumerate(waiting) if count == 0]
    for i in order:  # grows while read: Kahn's algorithm
        for j in downstream[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                order.append(j)
    if len(order) != len(downstream):
        return None
    below = [0] * len(downstream)
    for i in reversed(order):
        for j in downstream[i]:
            below[i] |= below[j] | (1 << j)
    later = [[j for j in range(len(downstream)) if below[i] >> j & 1] for i in range(len(downstream))]
    return len(downstream) - _largest_matching(later)


def _largest_matching(later: list[list[int]]) -> int:
    """The largest set of (task, later task) pairs using each task at most once on each side
    (Kuhn's augmenting paths, iteratively)."""
    partner: list[Optional[int]] = [None] * len(later)  # later task -> the earlier one it is paired with
    size = 0
    for start in range(len(later)):
        seen: set[int] = set()
        # Depth-first search for an augmenting path: frames of (earlier task, next edge index).
        path: list[tuple[int, int]] = [(start, 0)]
        chosen: list[int] = []
        found = False
        while path and not found:
            task, index = path[-1]
            if index == len(later[task]):
                path.pop()
                if chosen:
                    chosen.pop()
                continue
            path[-1] = (task, index + 1)
            other = later[task][index]
            if other in seen:
                continue
            seen.add(other)
            chosen.append(other)
            holder = partner[other]
            if holder is None:
                found = True
            else:
                path.append((holder, 0))
        if found:
            for (task, _), other in zip(path, chosen):
                partner[other] = task
            size += 1
    return size
