"""Does a wall-clock value a task callable reads reach anything that matters? Followed through
local names, arithmetic, f-strings and value-preserving calls; logging, comparisons and bare
expressions are harmless (a timeout loop, a duration in a log line).

So are identifiers and stamps, which say when something happened, not which data it is about:
- a run's id: a variable, a keyword argument of any call or a dict key named `run_id`,
  `dag_run_id`, `trigger_run_id` or `*_run_id` (the payload that triggers a run through the
  REST API, `TriggerDagRunOperator(trigger_run_id=...)`);
- a stamp in metadata: the value of a dict key named like a stamp or an id (`generated_at`,
  `*_at`, `*_id`, `timestamp`), when the dict only goes to logging, to a notification, to an
  asset event's `extra` (`outlet_events[asset].extra = {...}`, `Metadata(..., extra={...})`) or
  back as the task's return value (its XCom);
- a message to people: what only reaches a notification call (a callee named like `notify`,
  `send_notification`, `slack`, `send_email`), directly, in an f-string or in a dict it is given.
Anything else, a file path, SQL, a key of a write, rows a task writes, still escapes.
"""

from __future__ import annotations

from typing import Union

import libcst as cst

from dagguard.model.tasks.callable_tree import CallableTree
from dagguard.model.basics.values import OTHER_CLOCK_FUNCTIONS, WALL_CLOCK_FUNCTIONS, simple_string_value

CLOCK_FUNCTIONS = (WALL_CLOCK_FUNCTIONS - {"airflow.utils.dates.days_ago"}) | OTHER_CLOCK_FUNCTIONS | frozenset({
    "airflow.utils.timezone.datetime.now",
})
_TRANSFORMS = frozenset({
    "str", "int", "float", "round", "abs", "repr", "datetime.datetime.fromtimestamp",
    "datetime.datetime.utcfromtimestamp", "pendulum.from_timestamp", "pendulum.instance",
})
_PASSED_UP = (cst.BinaryOperation, cst.UnaryOperation, cst.FormattedStringExpression, cst.FormattedString,
              cst.ConcatenatedString, cst.BooleanOperation, cst.IfExp)
RUN_ID_NAMES = frozenset({"run_id", "dag_run_id", "trigger_run_id"})
_STAMP_NAMES = frozenset({"timestamp", "time_stamp"})
_STAMP_SUFFIXES = ("_at", "_id", "_timestamp")
_MESSAGE_WORDS = ("notif", "slack", "send_email", "send_mail", "send_message", "post_message", "postmessage")
# How a value travels: as itself, as a stamp in a dict of metadata, or in a dict under another
# key (harmless only if the dict goes to logging or a notification).
_PLAIN, _STAMP, _INSIDE = 0, 1, 2
_Outcome = Union[bool, tuple[str, int]]


def escapes(tree: CallableTree, call: cst.Call, returns_xcom: bool = True) -> bool:
    """Does the clock value `call` returns reach anything but logging, comparisons, local names,
    a run's id or a stamp in metadata? `returns_xcom`: the function's return value is its task's
    XCom (a helper's goes back to its caller, and is followed no further)."""
    pending: list[tuple[cst.CSTNode, int]] = [(call, _PLAIN)]
    tainted: set[tuple[str, int]] = set()
    while pending:
        node, how = pending.pop()
        outcome = _follow(tree, node, how, returns_xcom)
        if outcome is True:
            return True
        if isinstance(outcome, tuple) and outcome not in tainted:
            tainted.add(outcome)
            pending.extend((use, outcome[1]) for use in tree.uses(outcome[0]))
    return False


def is_stamp_name(name: str) -> bool:
    """A key naming an id or a time stamp: `generated_at`, `batch_id`, `timestamp`."""
    lowered = name.lower()
    return lowered in _STAMP_NAMES or lowered in RUN_ID_NAMES or lowered.endswith(_STAMP_SUFFIXES)


def _follow(tree: CallableTree, node: cst.CSTNode, how: int, returns_xcom: bool) -> _Outcome:
    """Walk up from a value: True when it escapes, (name, how) when bound to a name, False
    when harmless."""
    current = node
    while True:
        parent = tree.parents.get(id(current))
        if parent is None:
            return False
        if isinstance(parent, _PASSED_UP):
            current = parent
        elif isinstance(parent, cst.Attribute) and parent.value is current:
            current = parent
        elif isinstance(parent, cst.Call) and parent.func is current:
            current = parent
        elif isinstance(parent, cst.Arg):
            call = tree.parents.get(id(parent))
            if not isinstance(call, cst.Call):
                return True
            keyword = parent.keyword.value if parent.keyword is not None else None
            if tree.is_logging(call) or _is_notification(call) or (keyword is not None and is_run_id(keyword)) \
                    or (how == _STAMP and keyword == "extra"):
                return False
            if tree.scope.qualname(call.func) in _TRANSFORMS or (
                    isinstance(call.func, cst.Name) and call.func.value in _TRANSFORMS):
                current = call
            else:
                return True
        elif isinstance(parent, cst.DictElement) and parent.value is current:
            key = _key_text(parent.key)
            if key is not None and is_run_id(key):
                return False  # a run's id, whatever the dict is for
            stamp = key is not None and is_stamp_name(key)
            how = _STAMP if stamp and how != _INSIDE else _INSIDE
            current = tree.parents.get(id(parent))  # the dict
            if current is None:
                return True
        elif isinstance(parent, cst.Return):
            return not (how == _STAMP and returns_xcom)
        elif isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Expr)):
            return False
        elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                else getattr(parent, "target", None)
            if isinstance(target, cst.Name):
                # A variable holding a run's id is one wherever it goes next.
                return False if is_run_id(target.value) else (target.value, how)
            return not _is_extra(target, how)
        else:
            return True


def is_run_id(name: str) -> bool:
    """`run_id`, `dag_run_id`, `trigger_run_id`, `child_run_id`: the id of a DAG run."""
    lowered = name.lower()
    return lowered in RUN_ID_NAMES or lowered.endswith("_run_id")


def _is_extra(target: object, how: int) -> bool:
    """`event.extra = {stamps}` or `event.extra["generated_at"] = value`: an asset event's metadata."""
    if isinstance(target, cst.Attribute):
        return how == _STAMP and target.attr.value == "extra"
    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute) \
            and target.value.attr.value == "extra" and len(target.slice) == 1:
        index = target.slice[0].slice
        key = _key_text(index.value) if isinstance(index, cst.Index) else None
        return key is not None and is_stamp_name(key)
    return False


def _key_text(key: object) -> Union[str, None]:
    if isinstance(key, cst.SimpleString):
        value = simple_string_value(key)
        return value if isinstance(value, str) else None
    return None


def _is_notification(call: cst.Call) -> bool:
    """A message to people: `notify_hook.send_notification(...)`, `slack.post_message(...)`."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    lowered = name.lower()
    return any(word in lowered for word in _MESSAGE_WORDS)
