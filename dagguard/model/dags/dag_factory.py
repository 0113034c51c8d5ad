"""dag-factory YAML (Astronomer's dag-factory 1.x): which YAML files it loads as DAGs, and each
DAG's settings as dag-factory passes them to `DAG(...)`, every value with its place in the file.

Read with PyYAML's composer (dag-factory loads with PyYAML's FullLoader), so each value keeps
its line and column; nothing is imported or run. What dag-factory does, from its 1.1 source
(dagfactory/dagfactory.py, dagbuilder.py, utils.py): every top-level key but `default` and
`task_groups` is a DAG; the `default` block fills what a DAG block leaves out (dicts such as
`default_args` merged key by key); `defaults.yml` files in the folder (and parent folders up
to the DAGs folder) come before both for DAG-level keys, and under the `default` block for
`default_args`; `tasks` is a mapping of task id to config, or a list of configs with `task_id`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

YAML_SUFFIXES = (".yml", ".yaml")
DEFAULTS_FILE_NAMES = ("defaults.yml", "defaults.yaml")   # dagfactory/constants.py
SYSTEM_PARAMS = frozenset({"default", "task_groups"})     # top-level keys that are no DAG

# A YAML file is read only when a line starts with one of dag-factory's keys: a quick sieve
# before the (pure Python) composer.
_SIEVE = re.compile(rb"^[ \t-]*['\"]?(tasks|default_args|operator|schedule_interval)['\"]?[ \t]*:", re.MULTILINE)


class YamlError(Exception):
    """The YAML cannot be read: `line` and `column` (1-based) say where."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Place:
    """A span of the YAML file: 1-based line and column, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int
    start_index: int = 0              # character offsets in the file's text, for fixes
    end_index: int = 0


@dataclass(frozen=True)
class Entry:
    """One `key: value` of a DAG, task or default_args block, as dag-factory reads it."""

    key: str
    key_place: Place
    value_place: Place
    node: Any                         # the value's PyYAML node (None for a value made here)
    here: bool = True                 # written in this file (not in a defaults.yml)
    plain_key: bool = True            # the key is a plain scalar: a fix may rename it in place
    source: Optional[Path] = None     # the defaults.yml it is written in, when not here


@dataclass(frozen=True)
class YamlTask:
    task_id: Optional[str]
    place: Place                      # the task's key (mapping form) or its `task_id` entry
    operator: Optional[str]           # the dotted class path, when given as plain text
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class YamlDag:
    dag_id: str
    place: Place                      # the DAG block's key
    entries: tuple[Entry, ...]        # DAG-level keys, merged with `default` and defaults.yml
    default_args: tuple[Entry, ...]   # merged likewise, key by key
    default_args_place: Optional[Place]
    tasks: tuple[YamlTask, ...]
    block_indent: Optional[int] = None   # the column (0-based) of the block's own keys, for inserts


@dataclass(frozen=True)
class NotADagBlock:
    """A top-level key dag-factory takes for a DAG whose value is not a mapping: the file fails."""

    key: str
    place: Place


@dataclass
class YamlDagFile:
    """The DAGs dag-factory would build from one YAML file."""

    dags: list[YamlDag]
    problems: list[NotADagBlock] = field(default_factory=list)
    read_files: set[Path] = field(default_factory=set)
    loader: Any = None                # constructs the scalar values


def may_be_dag_factory(source: bytes) -> bool:
    """Cheap sieve: does a line start with one of dag-factory's keys?"""
    return _SIEVE.search(source) is not None


def surely_meant_for_dag_factory(source: bytes) -> bool:
    """Two of dag-factory's keys (`tasks`, `operator`, `default_args`...) start lines: a file that
    does not parse is reported only then (a Kubernetes manifest has `operator:` alone)."""
    return len({match.group(1) for match in _SIEVE.finditer(source)}) >= 2


def yaml_available() -> bool:
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


def _place(node: Any) -> Place:
    start, end = node.start_mark, node.end_mark
    return Place(start.line + 1, start.column + 1, end.line + 1, end.column + 1, start.index, end.index)


def compose(text: str) -> Any:
    """The document's node tree (None for an empty document); YamlError when it does not parse."""
    import yaml

    loader = yaml.FullLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _flatten(loader, node, set())
        return node, loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise YamlError(f"cannot parse YAML: {problem}", line, column) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"cannot parse YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise YamlError("cannot parse YAML: nested too deeply") from None


def _flatten(loader: Any, node: Any, seen: set[int]) -> None:
    """Apply `<<` merge keys in every mapping, as PyYAML's constructor does."""
    import yaml

    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            loader.flatten_mapping(current)
            stack.extend(v for pair in current.value for v in pair)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


def is_mapping(node: Any) -> bool:
    import yaml

    return isinstance(node, yaml.MappingNode)


def is_sequence(node: Any) -> bool:
    import yaml

    return isinstance(node, yaml.SequenceNode)


def scalar_text(node: Any) -> Optional[str]:
    """A plain or quoted string scalar's text (keys, operator paths); None otherwise."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
        return node.value
    return None


def pairs(node: Any) -> dict[str, tuple[Any, Any]]:
    """A mapping's entries by key text, the last of a repeated key winning (as PyYAML builds it)."""
    found: dict[str, tuple[Any, Any]] = {}
    for key, value in node.value:
        text = scalar_text(key)
        if text is None:
            import yaml

            if isinstance(key, yaml.ScalarNode):   # `1:` or `true:` keys: dag-factory sees their value
                text = key.value
            else:
                continue
        found[text] = (key, value)
    return found


def _looks_like_tasks(node: Any) -> bool:
    if is_mapping(node):
        configs = [value for _, value in node.value]
    elif is_sequence(node):
        configs = list(node.value)
        if not all(is_mapping(c) and "task_id" in pairs(c) for c in configs):
            return False
    else:
        return False
    return any(is_mapping(c) and ("operator" in pairs(c) or "decorator" in pairs(c)) for c in configs)


def looks_like_dag_block(node: Any) -> bool:
    """A mapping with dag-factory tasks (`operator:`/`decorator:` configs) or a default_args mapping."""
    if not is_mapping(node):
        return False
    entries = pairs(node)
    if "tasks" in entries and _looks_like_tasks(entries["tasks"][1]):
        return True
    return "default_args" in entries and is_mapping(entries["default_args"][1])


def is_dag_factory_document(root: Any) -> bool:
    """Would dag-factory load DAGs from this document? Recognised by content: a top-level
    mapping with a `default` block or a DAG block that looks like dag-factory's."""
    if not is_mapping(root):
        return False
    return any(looks_like_dag_block(value) for _, (_, value) in pairs(root).items())


def _entries(node: Any, here: bool, fallback: Optional[Place] = None,
             source: Optional[Path] = None) -> dict[str, Entry]:
    import yaml

    found: dict[str, Entry] = {}
    for key_node, value_node in node.value:
        key = scalar_text(key_node)
        if key is None:
            continue
        plain = isinstance(key_node, yaml.ScalarNode) and key_node.style is None
        key_place = _place(key_node) if fallback is None else fallback
        value_place = _place(value_node) if fallback is None else fallback
        found[key] = Entry(key, key_place, value_place, value_node, here, plain and here, source)
    return found


def read_dag_file(text: str, path: Optional[Path], defaults: list[tuple[Path, Any]] = ()) -> Optional[YamlDagFile]:
    """The DAGs of a dag-factory YAML text; None when it is not dag-factory YAML. `defaults`
    are the composed defaults.yml documents that apply, nearest folder first."""
    root, loader = compose(text)
    if not is_dag_factory_document(root):
        return None
    result = YamlDagFile([], loader=loader)
    top = pairs(root)
    default_key, default_block = top.get("default", (None, None))
    if default_block is not None and not is_mapping(default_block):
        result.problems.append(NotADagBlock("default", _place(default_key)))
    default_entries = _entries(default_block, True) if is_mapping(default_block) else {}
    default_default_args = _default_args(default_entries)
    # defaults.yml: DAG-level keys beat the `default` block, default_args lose to it.
    global_dag: dict[str, Entry] = {}
    global_default_args: dict[str, Entry] = {}
    for defaults_path, defaults_root in reversed(list(defaults)):
        if not is_mapping(defaults_root):
            continue
        result.read_files.add(defaults_path)
        for key, entry in _entries(defaults_root, False, Place(1, 1, 1, 1), defaults_path).items():
            if key == "default_args":
                if is_mapping(entry.node):
                    global_default_args.update(_entries(entry.node, False, Place(1, 1, 1, 1), defaults_path))
            else:
                global_dag[key] = entry
    for name, (key_node, block) in top.items():
        if name in SYSTEM_PARAMS or scalar_text(key_node) is None:
            continue   # a `1:` or `null:` key is no dag_id dag-factory can build
        if not is_mapping(block):
            result.problems.append(NotADagBlock(name, _place(key_node)))
            continue
        result.dags.append(_dag(name, key_node, block, default_entries, default_default_args,
                                global_dag, global_default_args))
    return result


def _default_args(entries: dict[str, Entry]) -> dict[str, Entry]:
    entry = entries.get("default_args")
    return _entries(entry.node, True) if entry is not None and is_mapping(entry.node) else {}


def _dag(name: str, key_node: Any, block: Any, default_entries: dict[str, Entry],
         default_default_args: dict[str, Entry], global_dag: dict[str, Entry],
         global_default_args: dict[str, Entry]) -> YamlDag:
    place = _place(key_node)
    own = _entries(block, True)
    merged: dict[str, Entry] = {}
    for key, entry in global_dag.items():   # defaults.yml: reported at the DAG's key
        merged[key] = Entry(key, place, place, entry.node, False, False, entry.source)
    merged.update(own)
    for key, entry in default_entries.items():
        merged.setdefault(key, entry)
    default_args = {key: Entry(key, place, place, e.node, False, False, e.source)
                    for key, e in global_default_args.items()}
    default_args.update(default_default_args)
    default_args.update(_default_args(own))
    default_args_place = merged["default_args"].key_place if "default_args" in merged else None
    tasks_entry = merged.get("tasks")
    default_tasks = default_entries.get("tasks")
    # merge_configs merges the `default` block's tasks mapping into the DAG's, task by task.
    inherited = default_tasks.node if default_tasks is not None and tasks_entry is not default_tasks else None
    tasks = _tasks(tasks_entry.node, inherited) if tasks_entry is not None else ()
    indent = block.value[0][0].start_mark.column if block.value and block.flow_style is not True else None
    return YamlDag(name, place, tuple(merged.values()), tuple(default_args.values()), default_args_place,
                   tasks, indent)


def _by_task_id(node: Any) -> dict[Optional[str], tuple[Any, Any]]:
    last: dict[Optional[str], tuple[Any, Any]] = {}
    for key_node, config in node.value:   # a repeated task key: the last one wins, as in PyYAML
        last.pop(scalar_text(key_node), None)
        last[scalar_text(key_node)] = (key_node, config)
    return last


def _tasks(node: Any, inherited: Any = None) -> tuple[YamlTask, ...]:
    found: list[YamlTask] = []
    if is_mapping(node):
        own = _by_task_id(node)
        base = _by_task_id(inherited) if is_mapping(inherited) else {}
        for task_id in [*own, *(t for t in base if t not in own)]:
            key_node, config = own.get(task_id) or base[task_id]
            if not is_mapping(config):
                continue
            fallback = base.get(task_id, (None, None))[1] if task_id in own else None
            found.append(_task(task_id, _place(key_node), config, fallback if is_mapping(fallback) else None))
    elif is_sequence(node):
        for config in node.value:
            if is_mapping(config):
                entries = pairs(config)
                task_key = entries.get("task_id")
                if task_key is not None:
                    found.append(_task(scalar_text(task_key[1]), _place(task_key[0]), config))
    return tuple(found)


def _task(task_id: Optional[str], place: Place, config: Any, inherited: Any = None) -> YamlTask:
    entries = _entries(config, True)
    for key, entry in (_entries(inherited, True) if inherited is not None else {}).items():
        entries.setdefault(key, entry)
    operator_entry = entries.get("operator")
    operator = scalar_text(operator_entry.node) if operator_entry is not None else None
    return YamlTask(task_id, place, operator, tuple(e for k, e in entries.items() if k != "task_id"))


def defaults_files(path: Path) -> list[Path]:
    """The defaults.yml files dag-factory merges into `path`'s DAGs, nearest first: the file's
    folder, then its parents up to a folder named `dags` (Airflow's DAGs folder), if any."""
    folder = path.resolve().parent
    chain = [folder]
    parents = list(folder.parents)
    if any(p.name == "dags" for p in [folder, *parents]) and folder.name != "dags":
        for parent in parents:
            chain.append(parent)
            if parent.name == "dags":
                break
    found: list[Path] = []
    for candidate_folder in chain:
        for name in DEFAULTS_FILE_NAMES:
            candidate = candidate_folder / name
            if candidate.is_file():
                found.append(candidate)
                break   # dag-factory takes the first name it finds in a folder
    return found


def is_defaults_file(path: Path) -> bool:
    """defaults.yml is merged into its folder's DAG files, and is no DAG file itself."""
    return path.name in DEFAULTS_FILE_NAMES
