"""What a task reads and writes, computed once per task and shared by the DG2xx rules.

`task_io(file, dag, task, path)` gathers a task's templated strings (its static arguments,
`.sql` files next to the DAG, a TaskFlow call's arguments), its SQL in execution order (parsed
by sqlglot after Jinja expressions become placeholders) and its callable's facts, and caches
the result on the FileModel so every rule reads the same analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, TypeVar

import libcst as cst

from dagguard.model.sql.built_strings import builds_text
from dagguard.model.tasks.callable_clock import is_run_id
from dagguard.model.dags.models import DagModel, FileModel, TaskModel
from dagguard.model.dags.dependencies import task_index, xcom_producer
from dagguard.model.schedules.schedules import Recurrence, dag_recurrence
from dagguard.model.basics.scope import Scope, module_of
from dagguard.model.tasks.python_tasks import CallableFacts, analyse_callable, formatted_text
from dagguard.model.basics.airflow_names import IDEMPOTENT_OPERATORS
from dagguard.model.sql.sql import SQL_ARGUMENTS, ParsedSql, dialect_for, parse_sql
from dagguard.model.sql.sql_facts import write_effects
from dagguard.model.sql.sql_parameters import bind_parameters
from dagguard.model.tasks.assembled_strings import Piece, assembled_text
from dagguard.model.basics.scope import Scope
from dagguard.model.sql.templates import Template, analyse_template, display, has_jinja
from dagguard.model.basics.values import UNKNOWN, Evaluator, StaticDict

SQL_FILE_SUFFIXES = (".sql", ".hql")
MAX_SQL_FILE_BYTES = 1024 * 1024
# Arguments that never carry data, a destination or its key: their values don't matter here.
DATE_ARGUMENTS = frozenset({"start_date", "end_date"})
NON_DATA_ARGUMENTS = frozenset({
    "task_id", "dag", "python_callable", "retries", "retry_delay", "retry_exponential_backoff",
    "max_retry_delay", "pool", "pool_slots", "queue", "priority_weight", "weight_rule",
    "trigger_rule", "owner", "email", "email_on_failure", "email_on_retry", "on_failure_callback",
    "on_success_callback", "on_retry_callback", "on_execute_callback", "on_skipped_callback",
    "execution_timeout", "depends_on_past", "wait_for_downstream", "doc", "doc_md", "doc_rst",
    "doc_json", "doc_yaml", "task_group", "default_args", "max_active_tis_per_dag",
    "max_active_tis_per_dagrun", "executor_config", "executor", "outlets", "inlets", "deferrable",
    "poke_interval", "timeout", "mode", "do_xcom_push", "multiple_outputs", "autocommit",
    "split_statements", "return_last", "handler", "show_return_value_in_logs", "sla", "resources",
    "run_as_user", "start_date", "end_date", "map_index_template", "impersonation_chain",
    "location", "region", "hook_params", "params", "provide_context", "retry_on_failure",
    "wait_for_completion", "poll_interval", "soft_fail", "exponential_backoff", "max_wait",
    "reschedule", "ignore_downstream_trigger_rules",
})
_CACHE_KEY = "task_io"
T = TypeVar("T")
_BUILDING_KEY = "task_io_building"
RENDERED_RETURN_DECORATORS = (".task.bash",)
# The operator dagguard names an @asset function's task by (model/dags/builder.py).
ASSET_TASK_OPERATORS = frozenset({"airflow.sdk.asset", "airflow.sdk.asset.multi"})


def asset_context_parameters(task: TaskModel) -> Optional[frozenset[str]]:
    """An @asset function's parameter that receives the context: only one named `context`
    (Airflow 3.3.2's _AssetMainOperator fills `self`, `outlet_events` and inlet assets by name,
    never context keys). None for other tasks: Airflow fills their parameters from the context."""
    if task.operator not in ASSET_TASK_OPERATORS or task.callable is None:
        return None
    params = task.callable.params
    named = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return frozenset(named & {"context"})
CALLABLE_ORIGIN = "a query in the callable"
# Arguments whose expression is written in the task's call (not a `**splat` of a dict that may
# live in another module): a string built there is read from its pieces in this file's scope.
_WRITTEN_IN_THE_CALL = frozenset({"keyword", "positional"})


@dataclass(frozen=True)
class TemplatedString:
    """A static string a task hands to Airflow (a template field, or any argument)."""

    node: cst.CSTNode                # where findings about it point
    argument: str
    template: Template
    # For a string built from pieces (`"{{ " + x + " }}"`, f-strings, `%`, `.format`): its
    # literal pieces written in this file, for findings to point at the one they are about.
    pieces: tuple[Piece, ...] = ()


@dataclass(frozen=True)
class SqlSource:
    """One piece of SQL a task runs, in order; `parsed` is None when the text is not static."""

    node: cst.CSTNode
    origin: str                      # "sql", "file queries/x.sql", "a query in the callable"
    template: Optional[Template]
    parsed: Optional[ParsedSql]
    # Not static, but a string built at run time (`.format`, `%`, `+`): SQL whose tables are unknown.
    built: bool = False

    @property
    def in_callable(self) -> bool:
        """SQL run by Python code, whose VALUES come from the task rather than the SQL."""
        return self.origin == CALLABLE_ORIGIN


@dataclass(frozen=True)
class TaskIO:
    task: TaskModel
    dag: DagModel
    strings: tuple[TemplatedString, ...]
    sql: tuple[SqlSource, ...]
    callable: Optional[CallableFacts]
    unknown_data: bool               # an argument that may carry data or a key is not static
    # Clock reads in the task's arguments: evaluated once, when the DAG file is parsed, so
    # every run gets the parse time. (argument, call) pairs.
    parse_time_clock: tuple[tuple[str, cst.Call], ...] = ()

    @property
    def label(self) -> str:
        return self.task.label

    @property
    def templated_interval(self) -> bool:
        """Does any string the task hands to Airflow use an interval variable?"""
        return any(s.template.interval for s in self.strings) or any(
            s.template is not None and s.template.interval for s in self.sql)

    @property
    def unknown_macros(self) -> bool:
        """Does a template call a user-defined macro, whose value dagguard cannot know?"""
        return any(s.template.unknown_roots for s in self.strings) or any(
            s.template is not None and bool(s.template.unknown_roots) for s in self.sql)

    @property
    def keyed(self) -> bool:
        """The task's output may depend on the run's interval (or it is unknowable)."""
        if self.templated_interval or self.unknown_macros or self.unknown_data:
            return True
        if self.uses_dagguard_helper:
            return True
        return self.callable is not None and self.callable.uses_interval

    @property
    def uses_dagguard_helper(self) -> bool:
        """Does the task write through dagguard.idempotent (which needs a non-empty interval)?"""
        if self.task.operator in IDEMPOTENT_OPERATORS:
            return True
        return self.callable is not None and self.callable.idempotent_helper

    def statements(self) -> Iterator[tuple[SqlSource, Any]]:
        """(source, Statement) in execution order; Statement None for SQL that is not static."""
        for source in self.sql:
            if source.parsed is None:
                yield source, None
                continue
            for statement in source.parsed.statements:
                yield source, statement

    def first_fact(self, facts: Callable[[Any, Callable[[str], Any]], list[T]]) -> Optional[tuple[SqlSource, T]]:
        """The first of `facts(tree, lookup)` over the task's parsed statements, with its source."""
        for source, statement in self.statements():
            if statement is not None and statement.tree is not None:
                found = facts(statement.tree, self.lookup)
                if found:
                    return source, found[0]
        return None

    def lookup(self, token: str) -> Any:
        for source in self.sql:
            if source.template is not None:
                found = source.template.expression(token)
                if found is not None:
                    return found
        return None


def task_io(file: FileModel, dag: DagModel, task: TaskModel, path: Path) -> TaskIO:
    """The task's analysis, computed on first use and cached on the file model."""
    cache: dict[int, TaskIO] = file.analyses.setdefault(_CACHE_KEY, {})
    found = cache.get(id(task))
    if found is None:
        found = _build(file, dag, task, path)
        cache[id(task)] = found
    return found


def carries_data(argument: str) -> bool:
    """May the task argument hold the task's data (not scheduling, retries or a connection id)?"""
    return argument not in NON_DATA_ARGUMENTS and not argument.endswith("conn_id")


def _template(file: FileModel, text: str) -> Template:
    cache: dict[str, Template] = file.analyses.setdefault("templates", {})
    found = cache.get(text)
    if found is None:
        found = analyse_template(text)
        cache[text] = found
    return found


def _names(file: FileModel) -> dict[str, str]:
    """Placeholder -> "{expr}" for the file's f-strings, shared so messages can respell them."""
    names: dict[str, str] = file.analyses.setdefault("fstring_names", {})
    return names


def readable(file: FileModel, text: str) -> str:
    """`text` (a table name, a column) with placeholders respelled as `{{ expr }}` / `{expr}`."""
    if "__dgt_" not in text:
        return text
    templates = list(file.analyses.get("templates", {}).values())
    return display(text, templates, _names(file))


def _build(file: FileModel, dag: DagModel, task: TaskModel, path: Path) -> TaskIO:
    strings: list[TemplatedString] = []
    sql: list[SqlSource] = []
    unknown = not task.args.complete
    dialect = dialect_for(task.operator)
    folders = _search_folders(dag, path)
    parameters = task.args.values.get("parameters")
    bound = parameters.value if parameters is not None else None
    clock: list[tuple[str, cst.Call]] = []
    evaluator = Evaluator(task.scope)
    # An upstream task's call in an argument is its XCom at run time: nothing of it runs at parse time.
    xcoms = task_index(file)
    here = module_of(file.scope)
    for name, arg in task.args.values.items():
        if not carries_data(name):
            continue
        scope = arg.read_in(task.scope)
        reader = evaluator if scope is task.scope else Evaluator(scope)
        # A task's own start_date is DG104's; a run id made from the clock names a run, no data.
        if name not in DATE_ARGUMENTS and not is_run_id(name):
            clock.extend((name, call) for call in reader.wall_clock_calls(arg.node, deferred=xcoms))
        if name in SQL_ARGUMENTS:
            value = arg.value
            if value is UNKNOWN and module_of(scope) is here:
                # An f-string: its Python parts are unknown (so the task counts as keyed), but
                # its SQL can still be read for clock reads and statement order.
                value = formatted_text(arg.node, task.scope, file.module, _names(file)) or UNKNOWN
            # SQL another module writes (`**task_kwargs` imported) is reported at the argument.
            local = module_of(scope) is here
            node = arg.node if local else arg.report_node
            sql.extend(_sql_sources(file, name, node, value, folders, dialect, bound, task.scope if local else None))
            if value is UNKNOWN and arg.origin in _WRITTEN_IN_THE_CALL:
                strings.extend(_assembled(file, name, arg.node, value, task.scope))
        elif name == "configuration" and isinstance(arg.value, StaticDict):
            query = _nested(arg.value, ("query", "query"))
            if query is not None:
                query = (query[0], query[1] if query[1] is not UNKNOWN
                         else formatted_text(query[0], task.scope, file.module, _names(file)) or UNKNOWN)
                sql.extend(_sql_sources(file, "configuration.query.query", query[0], query[1], folders, "bigquery"))
        for node, text in _strings(arg.node, arg.value):
            if name not in SQL_ARGUMENTS:
                # A template another module writes is reported at the argument bringing it in.
                strings.append(TemplatedString(node if module_of(scope) is here else arg.report_node, name,
                                               _template(file, text)))
        if name not in SQL_ARGUMENTS and arg.origin in _WRITTEN_IN_THE_CALL:
            strings.extend(_assembled(file, name, arg.node, arg.value, task.scope))
        if _has_unknown(arg.value):
            unknown = True
    if task.kind == "taskflow" and isinstance(task.node, cst.Call):
        evaluator = Evaluator(task.scope)
        for argument in task.node.args:
            label = argument.keyword.value if argument.keyword is not None else "argument"
            clock.extend((label, call) for call in evaluator.wall_clock_calls(argument.value, deferred=xcoms))
            producer = xcom_producer(file, argument.value, task.scope) if not argument.star else None
            if producer is not None:
                # An upstream XCom is keyed on the interval only when the task making it is.
                unknown = unknown or _keyed_upstream(file, producer, path)
                continue
            value = evaluator.value(argument.value) if not argument.star else UNKNOWN
            for node, text in _strings(argument.value, value):
                strings.append(TemplatedString(node, label, _template(file, text)))
            if not argument.star:
                strings.extend(_assembled(file, label, argument.value, value, task.scope))
            if _has_unknown(value):
                unknown = True
    facts = None
    if task.callable is not None and task.callable_scope is not None:
        explicit = explicit_parameters(task)
        facts = analyse_callable(task.callable, task.callable_scope, file.module, explicit, _names(file),
                                 context_params=asset_context_parameters(task))
        if task.kind == "taskflow" and (task.operator or "").endswith(RENDERED_RETURN_DECORATORS):
            # @task.bash renders the command its function returns as a template.
            strings.extend(TemplatedString(node, "the returned command", _template(file, text))
                           for node, text in facts.jinja_strings)
        for call in facts.sql:
            if call.text is None:
                sql.append(SqlSource(call.node, CALLABLE_ORIGIN, None, None, call.built))
            else:
                template = _template(file, call.text)
                sql.append(SqlSource(call.node, CALLABLE_ORIGIN, template,
                                     parse_sql(template.text, dialect)))
    return TaskIO(task, dag, tuple(strings), tuple(sql), facts, unknown, tuple(clock))


def _keyed_upstream(file: FileModel, producer: TaskModel, path: Path) -> bool:
    """Is the producer's output keyed on the interval? True (unknown) for a cycle of XComs."""
    building: set[int] = file.analyses.setdefault(_BUILDING_KEY, set())
    entry = task_index(file).get(id(producer.node))
    if entry is None or id(producer) in building:
        return True
    building.add(id(producer))
    try:
        return task_io(file, entry.dag, producer, path).keyed
    finally:
        building.discard(id(producer))


def explicit_parameters(task: TaskModel, function: Optional[cst.FunctionDef] = None) -> frozenset[str]:
    """Callable parameters the task passes itself (so they are not context lookups): a TaskFlow
    call's arguments, a PythonOperator's op_kwargs keys and op_args, positional ones binding
    to the first parameters in order. Arguments of unknown number (`*args`, `**kwargs`, an
    op_args that is not static) may fill any parameter. `function`: the task's callable when
    not `task.callable` (an imported @task function's)."""
    function = function if function is not None else task.callable
    positional_names = ([p.name.value for p in (*function.params.posonly_params, *function.params.params)]
                        if function is not None else [])
    every_name = positional_names + ([p.name.value for p in function.params.kwonly_params]
                                     if function is not None else [])
    if task.kind == "taskflow" and isinstance(task.node, cst.Call):
        arguments = task.node.args
        if any(a.star == "**" for a in arguments):
            return frozenset(every_name)
        explicit = {a.keyword.value for a in arguments if a.keyword is not None}
        positional = [a for a in arguments if a.keyword is None]
        if any(a.star == "*" for a in positional):
            return frozenset(explicit | set(positional_names))
        return frozenset(explicit | set(positional_names[:len(positional)]))
    explicit = set()
    op_kwargs = task.args.get("op_kwargs")
    if op_kwargs is not None:
        if not isinstance(op_kwargs.value, StaticDict):
            return frozenset(every_name)
        explicit |= set(op_kwargs.value.entries)
    op_args = task.args.get("op_args")
    if op_args is not None:
        count = len(op_args.value) if isinstance(op_args.value, (list, tuple)) else len(positional_names)
        explicit |= set(positional_names[:count])
    return frozenset(explicit)


def _sql_sources(file: FileModel, name: str, node: cst.BaseExpression, value: Any,
                 folders: tuple[Path, ...], dialect: Optional[str], parameters: Any = None,
                 scope: Optional[Scope] = None) -> Iterator[SqlSource]:
    items = value if isinstance(value, (list, tuple)) else [value]
    nodes = _element_nodes(node, len(items))
    for item, item_node in zip(items, nodes):
        if not isinstance(item, str):
            # Not static; when built at run time (`.format`, `%`, `+`), SQL on unknown tables.
            built = scope is not None and isinstance(item_node, cst.BaseExpression) and builds_text(item_node, scope)
            yield SqlSource(item_node, name, None, None, built)
            continue
        text, origin = item, name
        if _is_file_reference(item):
            loaded = _read_sql_file(item.strip(), folders, file.read_files)
            if loaded is None:
                yield SqlSource(item_node, f"file {item.strip()}", None, None)
                continue
            text, origin = loaded, f"file {item.strip()}"
        if parameters is not None:
            text = bind_parameters(text, parameters)
        template = _template(file, text)
        yield SqlSource(item_node, origin, template, parse_sql(template.text, dialect))


def _is_file_reference(text: str) -> bool:
    stripped = text.strip()
    return stripped.lower().endswith(SQL_FILE_SUFFIXES) and "\n" not in stripped and " " not in stripped


def _search_folders(dag: DagModel, path: Path) -> tuple[Path, ...]:
    """Airflow's template search path: the DAG file's folder, then template_searchpath."""
    folder = path.parent
    found = [folder]
    arg = dag.args.get("template_searchpath")
    value = arg.value if arg is not None else None
    entries = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    for entry in entries:
        if isinstance(entry, str):
            candidate = Path(entry)
            found.append(candidate if candidate.is_absolute() else folder / candidate)
    return tuple(found)


def _read_sql_file(name: str, folders: tuple[Path, ...], read: set[Path]) -> Optional[str]:
    """The text of a referenced .sql file, or None when it is not there (never an error); the
    file read is added to `read`."""
    candidates = [Path(name)] if Path(name).is_absolute() else [f / name for f in folders]
    for candidate in candidates:
        try:
            if candidate.is_file() and candidate.stat().st_size <= MAX_SQL_FILE_BYTES:
                read.add(candidate.resolve())
                return candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def _nested(value: StaticDict, keys: tuple[str, ...]) -> Optional[tuple[cst.BaseExpression, Any]]:
    current: Any = value
    node: Optional[cst.BaseExpression] = None
    for key in keys:
        if not isinstance(current, StaticDict) or key not in current.entries:
            return None
        entry = current.entries[key]
        node, current = entry.value_node, entry.value
    return (node, current) if node is not None else None


def _element_nodes(node: cst.BaseExpression, count: int) -> list[cst.CSTNode]:
    """The literal's element nodes when `node` is a list/tuple literal of `count` items."""
    if isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == count \
            and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return [e.value for e in node.elements]
    return [node] * count


def _strings(node: cst.BaseExpression, value: Any) -> Iterator[tuple[cst.CSTNode, str]]:
    """Every string inside a static value (lists, tuples, dict values), with a node to point at."""
    if isinstance(value, str):
        yield node, value
    elif isinstance(value, (list, tuple)):
        for item, item_node in zip(value, _element_nodes(node, len(value))):
            yield from _strings(item_node, item)  # type: ignore[arg-type]
    elif isinstance(value, StaticDict):
        for entry in value.entries.values():
            yield from _strings(entry.value_node, entry.value)


def _assembled(file: FileModel, argument: str, node: cst.BaseExpression, value: Any,
               scope: Scope) -> Iterator[TemplatedString]:
    """The strings of a value that are built from pieces, not static as a whole: read with
    their unknown parts as placeholders (model/tasks/assembled_strings.py)."""
    if value is UNKNOWN:
        built = assembled_text(node, scope, file.module)
        if built is not None and has_jinja(built.text):
            yield TemplatedString(node, argument, _template(file, built.text), built.pieces)
    elif isinstance(value, (list, tuple)) and isinstance(node, (cst.List, cst.Tuple)) \
            and len(node.elements) == len(value):
        for item, element in zip(value, node.elements):
            if not isinstance(element, cst.StarredElement):
                yield from _assembled(file, argument, element.value, item, scope)
    elif isinstance(value, StaticDict) and isinstance(node, cst.Dict):
        # Only the entries written here: a `**OTHER` entry's node is read in its own module.
        written = {id(e.value) for e in node.elements if isinstance(e, cst.DictElement)}
        for entry in value.entries.values():
            if id(entry.value_node) in written:
                yield from _assembled(file, argument, entry.value_node, entry.value, scope)


def _has_unknown(value: Any) -> bool:
    if value is UNKNOWN:
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_unknown(v) for v in value)
    if isinstance(value, StaticDict):
        return not value.complete or any(_has_unknown(e.value) for e in value.entries.values())
    return False


def runs_on_a_clock(dag: DagModel, airflow_version: str, create_cron_data_intervals: bool) -> bool:
    """Does the DAG run on a recurring clock schedule, so that its runs stand for intervals
    that get re-run and backfilled? False for None, @once, assets, and unknown schedules."""
    rec = dag_recurrence(dag, airflow_version, create_cron_data_intervals)
    return isinstance(rec, Recurrence)


def dag_written_tables(file: FileModel, dag: DagModel, path: Path) -> frozenset[str]:
    """The tables the DAG's tasks' SQL writes or clears, by normalised name."""
    known: dict[int, frozenset[str]] = file.analyses.setdefault("written_tables", {})
    if id(dag) not in known:
        known[id(dag)] = frozenset(
            effect.table for task in dag.tasks for _, statement in task_io(file, dag, task, path).statements()
            if statement is not None and statement.tree is not None
            for effect in write_effects(statement.tree, statement.text) if effect.table)
    return known[id(dag)]


def loose_task_strings(file: FileModel, task: TaskModel) -> tuple[TemplatedString, ...]:
    """The templated strings of a task no DAG of the file holds (an operator made in a factory
    function): its static arguments, its SQL written inline (a `.sql` file is its DAG's to
    find) and the strings it builds from pieces. Cached on the file model."""
    cache: dict[int, tuple[TemplatedString, ...]] = file.analyses.setdefault("loose_task_strings", {})
    found = cache.get(id(task))
    if found is None:
        strings: list[TemplatedString] = []
        for name, arg in task.args.values.items():
            if not carries_data(name):
                continue
            for node, text in _strings(arg.node, arg.value):
                if not (name in SQL_ARGUMENTS and _is_file_reference(text)):
                    strings.append(TemplatedString(node, name, _template(file, text)))
            if arg.origin in _WRITTEN_IN_THE_CALL:
                strings.extend(_assembled(file, name, arg.node, arg.value, task.scope))
        found = cache[id(task)] = tuple(strings)
    return found


def file_task_ios(file: FileModel, path: Path) -> Iterator[TaskIO]:
    """Every task of every DAG in the file, analysed (once per task, whichever rule asks first)."""
    for dag in file.dags:
        for task in dag.tasks:
            yield task_io(file, dag, task, path)
