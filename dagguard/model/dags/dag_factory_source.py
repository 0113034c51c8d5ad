"""The Python that dag-factory's YAML stands for: one `with DAG(...)` per DAG block, with the
arguments dag-factory passes (dagbuilder.DagBuilder.build) and an operator call per task, each
entry on a line of its own that remembers the YAML place it comes from.

The linter's own model and rules then read it as any DAG file, unchanged; the engine maps
each finding's line back to the YAML (engine/yaml_check.py). Values are converted as
dag-factory converts them: `start_date`/`end_date` through its get_datetime (a date, a date
string in `timezone`, or a time relative to today), `schedule: none` to None, a list schedule
to assets, `concurrency` to max_active_tasks, `__type__` mappings to a call of that class. A
value that cannot be known here (an environment variable, an unknown tag, a datasets file)
becomes an unknown call, so the rules that need it stay silent.
"""

from __future__ import annotations

import datetime as dt
import keyword
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from dagguard.model.dags.dag_factory import Entry, Place, YamlDag, YamlDagFile, YamlTask, is_mapping, is_sequence, pairs

UNKNOWN = "_dagguard_unknown()"
# The scalar tags whose values are built here (PyYAML's safe ones): nothing is imported.
PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp"))
DAG_ALIAS = "_dagguard_DAG"
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
_RELATIVE = re.compile(
    r"((?P<hours>\d+?)\s+hour)?((?P<minutes>\d+?)\s+minute)?((?P<seconds>\d+?)\s+second)?((?P<days>\d+?)\s+day)?",
    re.IGNORECASE)   # dagfactory.utils.get_time_delta

# What DagBuilder.build passes to DAG() (Airflow 3), besides dag_id, schedule and default_args;
# any other key of a DAG block is dropped by dag-factory.
DAG_KEYS = ("description", "max_active_tasks", "timetable", "catchup", "max_active_runs", "dagrun_timeout",
            "render_template_as_native_obj", "params", "start_date", "end_date", "is_paused_upon_creation")
# Keys that decide when and how often the DAG runs: a value with `$` in it is expanded from the
# environment of the DAG processor (dag-factory runs os.path.expandvars on the file), unknown here.
_SCHEDULING = frozenset({"schedule", "schedule_interval", "timetable", "catchup", "start_date", "end_date",
                         "max_active_runs", "max_active_tasks", "concurrency", "timezone"})
# Task keys dag-factory reads itself, or turns into objects the linter cannot see (callbacks,
# callables imported from files, mapped-task arguments).
_TASK_KEYS_OF_DAG_FACTORY = frozenset({
    "operator", "decorator", "dependencies", "task_group_name", "task_id", "dag", "task_group",
    "python_callable", "python_callable_name", "python_callable_file", "expand", "partial",
    "variables_as_arguments", "execution_date_fn", "execution_date_fn_name", "execution_date_fn_file",
    "execution_delta", "inlets", "outlets", "success_check_file", "success_check_name",
    "success_check_lambda", "failure_check_file", "failure_check_name", "failure_check_lambda",
    "response_check_name", "response_check_file", "response_check_lambda",
})
_CALLBACKS = ("on_execute_callback", "on_success_callback", "on_failure_callback", "on_retry_callback",
              "on_skipped_callback", "sla_miss_callback")


@dataclass(frozen=True)
class LinePlace:
    """Where a line of the generated Python comes from: the YAML entry's key and value, and
    the column (1-based) where the value starts on the generated line."""

    key: Place
    value: Place
    value_column: int
    entry: Optional[Entry] = None     # the YAML entry written on this line, if any
    dag_id: Optional[str] = None      # the line opening this DAG's call


@dataclass
class GeneratedSource:
    text: str
    lines: dict[int, LinePlace]       # generated line (1-based) -> its YAML place
    dag_places: dict[str, Place] = field(default_factory=dict)


class _Writer:
    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.imports: dict[str, str] = {}    # module -> its import line
        self.from_imports: dict[tuple[str, str], str] = {}
        self.body: list[tuple[str, Optional[LinePlace]]] = []
        self.open_nodes: set[int] = set()    # the values being converted, against alias cycles

    # --- values -----------------------------------------------------------------------------

    def value(self, node: Any) -> Optional[str]:
        """The Python expression of a YAML value, or None when it cannot be known (a value
        that holds itself through an alias is unknown too)."""
        if id(node) in self.open_nodes:
            return None
        self.open_nodes.add(id(node))
        try:
            return self._value(node)
        finally:
            self.open_nodes.discard(id(node))

    def _value(self, node: Any) -> Optional[str]:
        import yaml

        if isinstance(node, yaml.ScalarNode):
            if node.tag not in PLAIN_TAGS:
                return None   # python/... tags, binary, custom tags: not read here
            try:
                value = self.loader.construct_object(node, deep=True)
            except Exception:   # a scalar PyYAML itself would fail on (a bad timestamp)
                return None
            return self.literal(value)
        if isinstance(node, yaml.SequenceNode):
            items = [self.value(item) for item in node.value]
            return None if any(i is None for i in items) else f"[{', '.join(items)}]"  # type: ignore[arg-type]
        if isinstance(node, yaml.MappingNode):
            entries = pairs(node)
            if "__type__" in entries:
                return self.typed(entries)
            if any(key in entries for key in ("__and__", "__or__", "__join__")):
                return None
            parts = []
            for key, (_, item) in entries.items():
                expression = self.value(item)
                if expression is None:
                    return None
                parts.append(f"{key!r}: {expression}")
            return "{" + ", ".join(parts) + "}"
        return None

    def literal(self, value: Any) -> Optional[str]:
        if value is None or isinstance(value, (bool, int, str)):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if math.isfinite(value) else None
        if isinstance(value, dt.datetime):
            self.imports["datetime"] = "import datetime"
            zone = ", tzinfo=datetime.timezone.utc" if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0) else ""
            if value.tzinfo is not None and not zone:
                return None
            return (f"datetime.datetime({value.year}, {value.month}, {value.day}, {value.hour}, {value.minute}, "
                    f"{value.second}, {value.microsecond}{zone})")
        if isinstance(value, dt.date):
            self.imports["datetime"] = "import datetime"
            return f"datetime.date({value.year}, {value.month}, {value.day})"
        return None

    def typed(self, entries: dict[str, tuple[Any, Any]]) -> Optional[str]:
        """`{__type__: datetime.timedelta, hours: 6}`: dag-factory's cast_with_type calls the class."""
        from dagguard.model.dags.dag_factory import scalar_text

        kind = scalar_text(entries["__type__"][1])
        if kind is None or not _DOTTED.fullmatch(kind):
            return None
        if kind == "builtins.list":
            return self.value(entries["items"][1]) if "items" in entries else None
        arguments: list[str] = []
        if "__args__" in entries:
            node = entries["__args__"][1]
            if not is_sequence(node):
                return None
            for item in node.value:
                expression = self.value(item)
                if expression is None:
                    return None
                arguments.append(expression)
        for key, (_, item) in entries.items():
            if key in ("__type__", "__args__"):
                continue
            expression = self.value(item)
            if expression is None or not key.isidentifier():
                return None
            arguments.append(f"{key}={expression}")
        module = kind.rsplit(".", 1)[0]
        self.imports[module] = f"import {module}"
        return f"{kind}({', '.join(arguments)})"

    def date(self, node: Any, timezone: str) -> Optional[str]:
        """dagfactory.utils.get_datetime: the date in `timezone`, or today's start minus a delta."""
        import pendulum

        from dagguard.model.dags.dag_factory import scalar_text

        text = scalar_text(node)
        if text is None:
            value = self._date_value(node)
            if value is None:
                return None
            return self._in_zone(value, timezone)
        if "$" in text:
            return None
        try:
            parsed = pendulum.parse(text)
        except pendulum.parsing.exceptions.ParserError:
            parsed = None
        except Exception:
            return None
        if parsed is not None:
            if not isinstance(parsed, dt.datetime):
                return None   # a time or a duration: dag-factory fails on it
            return self._in_zone(parsed, timezone)
        parts = _RELATIVE.match(text)
        if parts is None or all(v is None for v in parts.groupdict().values()):
            return None   # dag-factory raises "Invalid relative time": the file does not load
        delta = ", ".join(f"{unit}={int(amount)}" for unit, amount in parts.groupdict().items() if amount)
        self.imports["pendulum"] = "import pendulum"
        if not delta:
            return f"pendulum.today({timezone!r})"
        self.imports["datetime"] = "import datetime"
        return f"pendulum.today({timezone!r}) - datetime.timedelta({delta})"

    def _date_value(self, node: Any) -> Optional[dt.date]:
        """A timestamp scalar, or a `__type__: datetime.datetime` / `datetime.date` mapping of numbers."""
        import yaml

        from dagguard.model.dags.dag_factory import scalar_text

        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:timestamp":
            try:
                value = self.loader.construct_object(node, deep=True)
            except Exception:
                return None
            return value if isinstance(value, dt.date) else None
        if not is_mapping(node):
            return None
        entries = pairs(node)
        kind = scalar_text(entries["__type__"][1]) if "__type__" in entries else None
        if kind not in ("datetime.datetime", "datetime.date"):
            return None
        numbers: list[int] = []
        named: dict[str, int] = {}
        if "__args__" in entries:
            args = entries["__args__"][1]
            if not is_sequence(args):
                return None
            for item in args.value:
                number = self._number(item)
                if number is None:
                    return None
                numbers.append(number)
        for key, (_, item) in entries.items():
            if key not in ("__type__", "__args__"):
                number = self._number(item)
                if number is None:
                    return None
                named[key] = number
        try:
            return (dt.datetime if kind == "datetime.datetime" else dt.date)(*numbers, **named)
        except (TypeError, ValueError, OverflowError):
            return None

    def _number(self, node: Any) -> Optional[int]:
        import yaml

        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int":
            try:
                return int(self.loader.construct_object(node))
            except Exception:
                return None
        return None

    def _in_zone(self, value: dt.date, timezone: str) -> str:
        """The wall time of `value` in `timezone`: get_datetime replaces the zone, never converts."""
        self.imports["pendulum"] = "import pendulum"
        if isinstance(value, dt.datetime):
            return (f"pendulum.datetime({value.year}, {value.month}, {value.day}, {value.hour}, {value.minute}, "
                    f"{value.second}, tz={timezone!r})")
        return f"pendulum.datetime({value.year}, {value.month}, {value.day}, tz={timezone!r})"

    def schedule(self, node: Any) -> Optional[str]:
        from dagguard.model.dags.dag_factory import scalar_text

        text = scalar_text(node)
        if text is not None:
            if "$" in text:
                return None
            return "None" if text.strip().lower() == "none" else repr(text)
        if is_sequence(node):
            uris = []
            for item in node.value:
                uri = scalar_text(item)
                if uri is None or "$" in uri:
                    return None
                if uri.strip():
                    uris.append(f"airflow.sdk.Asset({uri.strip()!r})")
            self.imports["airflow.sdk"] = "import airflow.sdk"
            return f"[{', '.join(uris)}]"
        if is_mapping(node) and "__type__" not in pairs(node):
            return None   # datasets from a file, conditions: built by dag-factory
        return self.value(node)

    # --- lines --------------------------------------------------------------------------------

    def line(self, text: str, place: Optional[LinePlace] = None) -> None:
        self.body.append((text, place))

    def entry_line(self, indent: str, name: str, expression: Optional[str], entry: Entry,
                   keyword: bool = True) -> None:
        head = f"{indent}{name}=" if keyword else f"{indent}{name!r}: "
        self.line(f"{head}{expression if expression is not None else UNKNOWN},",
                  LinePlace(entry.key_place, entry.value_place, len(head) + 1, entry))


def _timezone(entries: dict[str, Entry], writer: _Writer) -> Optional[str]:
    entry = entries.get("timezone")
    if entry is None:
        return "UTC"
    from dagguard.model.dags.dag_factory import scalar_text

    text = scalar_text(entry.node)
    if text is None or "$" in text:
        return None
    import pendulum

    try:
        pendulum.timezone(text)
    except Exception:   # dag-factory fails on a zone pendulum does not know
        return None
    return text


def generate(dag_file: YamlDagFile) -> GeneratedSource:
    """The Python source for the file's DAGs, and where each of its lines comes from."""
    writer = _Writer(dag_file.loader)
    dag_places: dict[str, Place] = {}
    operators: dict[str, str] = {}
    for dag in dag_file.dags:
        dag_places[dag.dag_id] = dag.place
        _write_dag(writer, dag, operators)
    header = ["# Generated by dagguard from dag-factory YAML", f"from airflow.sdk import DAG as {DAG_ALIAS}"]
    header += sorted(writer.imports.values())
    header += sorted(writer.from_imports.values())
    lines: dict[int, LinePlace] = {}
    text_lines = list(header)
    for text, place in writer.body:
        text_lines.append(text)
        if place is not None:
            lines[len(text_lines)] = place
    return GeneratedSource("\n".join(text_lines) + "\n", lines, dag_places)


def _write_dag(writer: _Writer, dag: YamlDag, operators: dict[str, str]) -> None:
    entries = {entry.key: entry for entry in dag.entries}
    opening = LinePlace(dag.place, dag.place, 1, None, dag.dag_id)
    writer.line(f"with {DAG_ALIAS}(", opening)
    writer.line(f"    dag_id={dag.dag_id!r},", LinePlace(dag.place, dag.place, 12, None))
    timezone = _timezone(entries, writer)
    for name, entry in entries.items():
        if name in ("schedule", "schedule_interval"):
            expression = writer.schedule(entry.node)
        elif name in ("start_date", "end_date"):
            expression = writer.date(entry.node, timezone) if timezone is not None else None
        elif name == "concurrency":
            writer.entry_line("    ", "max_active_tasks", _scheduling(writer, entry), entry)
            continue
        elif name == "max_active_tasks" and "concurrency" in entries:
            continue   # dag-factory takes concurrency over it
        elif name == "timetable":
            expression = _scheduling(writer, entry)
            if expression in ("None", "False", "''", "0", "[]", "{}"):
                continue   # dag_params.get("timetable") is false: not passed
        elif name in DAG_KEYS:
            expression = _scheduling(writer, entry) if name in _SCHEDULING else writer.value(entry.node)
        else:
            continue
        writer.entry_line("    ", name, expression, entry)
    if dag.default_args:
        place = dag.default_args_place or dag.place
        writer.line("    default_args={", LinePlace(place, place, 18, None))
        _write_default_args(writer, dag.default_args)
        writer.line("    },", LinePlace(place, place, 1, None))
    writer.line("):", opening)
    wrote_task = False
    for task in dag.tasks:
        wrote_task = _write_task(writer, task, operators) or wrote_task
    if not wrote_task:
        writer.line("    pass", opening)


def _scheduling(writer: _Writer, entry: Entry) -> Optional[str]:
    from dagguard.model.dags.dag_factory import scalar_text

    text = scalar_text(entry.node)
    if text is not None and "$" in text:
        return None
    return writer.value(entry.node)


def _write_default_args(writer: _Writer, default_args: tuple[Entry, ...]) -> None:
    entries = {entry.key: entry for entry in default_args}
    timezone = _timezone(entries, writer)
    for name, entry in entries.items():
        if name in _CALLBACKS or name.endswith(("_callback_name", "_callback_file")):
            continue   # dag-factory imports them: callables the linter does not see
        if name in ("start_date", "end_date"):
            expression = writer.date(entry.node, timezone) if timezone is not None else None
        elif name in _SCHEDULING:
            expression = _scheduling(writer, entry)
        else:
            expression = writer.value(entry.node)
        writer.entry_line("        ", name, expression, entry, keyword=False)


def _write_task(writer: _Writer, task: YamlTask, operators: dict[str, str]) -> bool:
    if task.operator is None or task.task_id is None or not _DOTTED.fullmatch(task.operator):
        return False   # a decorator task, or an operator path given otherwise: not modelled
    alias = operators.get(task.operator)
    if alias is None:
        alias = operators[task.operator] = f"_dagguard_operator_{len(operators) + 1}"
        module, name = task.operator.rsplit(".", 1)
        writer.from_imports[(module, name)] = f"from {module} import {name} as {alias}"
    opening = LinePlace(task.place, task.place, 1, None)
    writer.line(f"    {alias}(", opening)
    writer.line(f"        task_id={task.task_id!r},", LinePlace(task.place, task.place, 17, None))
    for entry in task.entries:
        name = entry.key
        if name in _TASK_KEYS_OF_DAG_FACTORY or name in _CALLBACKS or not name.isidentifier() \
                or keyword.iskeyword(name) \
                or name.endswith(("_callback_name", "_callback_file")):
            continue
        writer.entry_line("        ", name, writer.value(entry.node), entry)
    writer.line("    )", opening)
    return True
