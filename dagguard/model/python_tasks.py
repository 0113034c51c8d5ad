"""What a task's Python callable does with time, context and the outside world.

Read from the callable's libcst tree, never run. The facts are deliberately one-sided: a
write is recorded only for a recognised API, and anything that may carry the run's interval
into the function (a parameter named like a context key, the context passed on to another
function, an interval attribute) counts as "keyed", so rules built on them stay silent when
unsure.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Union

import libcst as cst

from dagguard.model.context_keys import INTERVAL_KEYS, REMOVED_KEYS
from dagguard.model.scope import ConstantBinding, FunctionBinding, Scope, function_scope
from dagguard.model.templates import analyse_template, has_jinja
from dagguard.model.tree import child_nodes
from dagguard.model.sql_parameters import bind_parameters
from dagguard.model.values import UNKNOWN, WALL_CLOCK_FUNCTIONS, Evaluator, simple_string_value

# SQLAlchemy's wrapper for textual SQL, at the paths it is imported from.
SQLALCHEMY_TEXT = frozenset({"sqlalchemy.text", "sqlalchemy.sql.text", "sqlalchemy.sql.expression.text"})
CLOCK_FUNCTIONS = (WALL_CLOCK_FUNCTIONS - {"airflow.utils.dates.days_ago"}) | frozenset({
    "time.time_ns", "pendulum.utcnow", "airflow.utils.timezone.now", "airflow.sdk.timezone.now",
    "airflow.utils.timezone.datetime.now",
})
IDEMPOTENT_HELPERS = frozenset({
    "dagguard.idempotent.write_interval", "dagguard.idempotent.write.write_interval",
    "dagguard.idempotent.interval_from_context", "dagguard.idempotent.interval.interval_from_context",
    "dagguard.idempotent.Interval", "dagguard.idempotent.interval.Interval",
})
IDEMPOTENT_DECORATORS = frozenset({
    "dagguard.idempotent.idempotent_write", "dagguard.idempotent.decorator.idempotent_write",
})
GET_CURRENT_CONTEXT = frozenset({
    "airflow.sdk.get_current_context", "airflow.operators.python.get_current_context",
    "airflow.providers.standard.operators.python.get_current_context",
    "airflow.decorators.get_current_context",
})
# Methods whose first argument is SQL text.
SQL_METHODS = frozenset({
    "execute", "executemany", "run", "get_records", "get_first", "get_pandas_df", "get_df",
    "get_pandas_df_by_chunks", "get_df_by_chunks", "copy_expert", "read_sql", "read_sql_query",
    "query",
})
# Methods that write whatever SQL text or rows they are given.
_ROW_WRITERS = frozenset({"insert_rows", "bulk_insert_rows", "bulk_load", "bulk_load_custom"})
_FILE_WRITERS = frozenset({"to_csv", "to_parquet", "to_json", "to_excel", "to_feather", "to_orc"})
_OBJECT_WRITERS = frozenset({
    "load_file", "load_string", "load_bytes", "load_file_obj", "upload", "upload_file",
    "upload_fileobj", "upload_from_filename", "upload_from_string", "upload_from_file",
    "put_object", "to_gbq",
})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_TRANSFORMS = frozenset({
    "str", "int", "float", "round", "abs", "repr", "datetime.datetime.fromtimestamp",
    "datetime.datetime.utcfromtimestamp", "pendulum.from_timestamp", "pendulum.instance",
})
_SQL_START = re.compile(
    r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*(select|with|insert|update|delete|merge|copy|create|drop|"
    r"truncate|alter|replace|upsert|call|begin|set|grant|use|unload|show|describe|explain|values)\b",
    re.IGNORECASE | re.DOTALL,
)
# Methods whose second positional argument is the query's parameters (DB-API cursors, DbApiHook
# readers); elsewhere only a `parameters=`/`params=` keyword is.
_POSITIONAL_PARAMETERS = frozenset({"execute", "executemany", "get_records", "get_first",
                                    "get_pandas_df", "get_df"})
# Context values bound into a query's text as the template that names them, for the interval
# rules (DG204, DG206) to read `ts < %(end)s` with `parameters={"end": data_interval_end}`.
_BOUND_CONTEXT_KEYS = frozenset({"data_interval_start", "data_interval_end"})
_SQL_WRITE = re.compile(r"(^|;)\s*(insert|merge|update|delete|copy|replace|upsert)\b", re.IGNORECASE)
# Method names that suggest writing somewhere (XCom and logging aside).
_WRITE_LIKE = re.compile(r"^(insert|write|upload|put|load|export|publish|sink|push|send|save)(?!.*xcom)",
                         re.IGNORECASE)
_DESERIALIZERS = frozenset({"json", "yaml", "pickle", "marshal", "tomllib", "toml", "dill", "joblib",
                            "numpy", "np", "cloudpickle", "ujson", "orjson", "simplejson"})
MAX_HELPER_DEPTH = 2


@dataclass(frozen=True)
class ClockRead:
    """A wall-clock call whose value reaches something other than a log line."""

    node: cst.Call
    name: str


@dataclass(frozen=True)
class WriteCall:
    node: cst.Call
    what: str                        # "insert_rows()", "open(..., 'w')"...
    upsert: bool                     # replaces rows by key (insert_rows(replace=True))
    kind: str = "api"                # "sql": a write statement, judged from the SQL itself


@dataclass(frozen=True)
class SqlCall:
    """SQL text handed to a hook or cursor, in source order; text None when not static."""

    node: cst.CSTNode
    text: Optional[str]


@dataclass(frozen=True)
class ContextLookup:
    node: cst.CSTNode
    key: str


@dataclass(frozen=True)
class CallableFacts:
    clock_reads: tuple[ClockRead, ...]
    writes: tuple[WriteCall, ...]
    sql: tuple[SqlCall, ...]
    removed_lookups: tuple[ContextLookup, ...]
    uses_interval: bool              # reads an interval value, or may (context passed on)
    idempotent_helper: bool          # uses dagguard.idempotent, idempotent by construction
    returns_value: bool
    write_like_calls: bool           # calls a method named like a write (insert_rows_json, put_item...)
    jinja_strings: tuple[tuple[cst.CSTNode, str], ...] = ()   # string literals holding Jinja


def analyse_callable(function: cst.FunctionDef, scope: Scope, module: cst.Module,
                     explicit_params: frozenset[str] = frozenset(),
                     names: Optional[dict[str, str]] = None) -> CallableFacts:
    """Facts about one task callable, following same-file helpers it calls by name.
    `names` collects the f-string placeholders' spellings, for messages."""
    return _Analysis(function, scope, module, explicit_params, 0, set(), names).facts()


class _Analysis:
    def __init__(self, function: cst.FunctionDef, scope: Scope, module: cst.Module,
                 explicit_params: frozenset[str], depth: int, seen: set[int],
                 names: Optional[dict[str, str]] = None) -> None:
        self.function = function
        self.names = names
        self.scope = scope
        self.module = module
        self.explicit = explicit_params
        self.depth = depth
        self.seen = seen | {id(function)}
        self.evaluator = Evaluator(scope)
        self.parents: dict[int, cst.CSTNode] = {}
        self.nodes: list[cst.CSTNode] = []
        # Set by facts(): parameters Airflow fills from the context, names holding the context.
        self.context_params: frozenset[str] = frozenset()
        self.context_names: frozenset[str] = frozenset()
        self._index()

    def _index(self) -> None:
        """One pre-order walk (source order matters: DELETE before INSERT) recording parents."""
        stack: list[cst.CSTNode] = [self.function.body]
        while stack:
            node = stack.pop()
            self.nodes.append(node)
            children = child_nodes(node)
            for child in children:
                self.parents[id(child)] = node
            stack.extend(reversed(children))

    # --- the pieces --------------------------------------------------------------------------

    def facts(self) -> CallableFacts:
        params = _parameters(self.function)
        context_names = self._context_names(params)
        filled = frozenset(params) - self.explicit  # what Airflow passes from the context
        # A helper's parameters are whatever its caller passes, not necessarily the context's.
        self.context_params = filled if self.depth == 0 else frozenset()
        self.context_names = context_names
        uses_interval = bool(filled & INTERVAL_KEYS)
        removed: list[ContextLookup] = [
            ContextLookup(node, name) for name, node in params.items()
            if name in REMOVED_KEYS and name not in self.explicit
        ]
        clock: list[ClockRead] = []
        writes: list[WriteCall] = []
        sql: list[SqlCall] = []
        helper = any(self.scope.resolves_to(_decorator_target(d), IDEMPOTENT_DECORATORS)
                     for d in self.function.decorators)
        returns_value = False
        write_like = False
        jinja: list[tuple[cst.CSTNode, str]] = []
        uses_tempfile = False
        # `type(...) is` rather than isinstance: libcst nodes are ABCs, slow to isinstance-check.
        for node in self.nodes:
            kind = type(node)
            if kind is cst.Return and node.value is not None:  # type: ignore[attr-defined]
                returns_value = True
            elif kind is cst.Attribute and node.attr.value in INTERVAL_KEYS:  # type: ignore[attr-defined]
                uses_interval = True
            elif kind is cst.SimpleString or kind is cst.ConcatenatedString:
                text = simple_string_value(node) if kind is cst.SimpleString else None  # type: ignore[arg-type]
                if isinstance(text, str) and has_jinja(text):
                    jinja.append((node, text))
                    if analyse_template(text).interval:
                        uses_interval = True
            elif kind is cst.Name and node.value in context_names:  # type: ignore[attr-defined]
                lookup = self._context_lookup(node)
                if lookup is None:
                    if self._forwards(node):
                        uses_interval = True  # the context goes elsewhere: unknown use
                else:
                    if lookup.key in INTERVAL_KEYS:
                        uses_interval = True
                    if lookup.key in REMOVED_KEYS:
                        removed.append(lookup)
            elif kind is cst.Call:
                qual = self.scope.qualname(node.func)  # type: ignore[attr-defined]
                if qual is not None and qual.startswith("tempfile."):
                    uses_tempfile = True
                if qual in CLOCK_FUNCTIONS:
                    if self._escapes(node):
                        clock.append(ClockRead(node, call_name(node)))
                    continue
                if qual in IDEMPOTENT_HELPERS:
                    helper = True
                if self._write_like(node):
                    write_like = True
                sql_call = self._sql_call(node)
                if sql_call is not None:
                    sql.append(sql_call)
                write = self._write(node, sql_call)
                if write is not None:
                    writes.append(write)
                inner = self._helper(node)
                if inner is not None:
                    # The helper runs here: its SQL comes at this point of the task's order.
                    uses_interval = uses_interval or inner.uses_interval
                    helper = helper or inner.idempotent_helper
                    write_like = write_like or inner.write_like_calls
                    writes.extend(inner.writes)
                    clock.extend(inner.clock_reads)
                    sql.extend(inner.sql)
        if uses_tempfile:
            # Local files in a temporary folder are staging, not the task's output.
            writes = [w for w in writes if not w.what.startswith(("open(", ".to_"))]
        return CallableFacts(tuple(clock), tuple(writes), tuple(sql), tuple(removed), uses_interval,
                             helper, returns_value, write_like, tuple(jinja))

    def _context_names(self, params: dict[str, cst.CSTNode]) -> frozenset[str]:
        """Names holding the context: **kwargs and results of get_current_context()."""
        names: set[str] = set()
        star = self.function.params.star_kwarg
        if isinstance(star, cst.Param):
            names.add(star.name.value)
        for node in self.nodes:
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                    and self.scope.resolves_to(node.value.func, GET_CURRENT_CONTEXT):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        names.add(target.target.value)
        return frozenset(names)

    def _context_lookup(self, name: cst.Name) -> Optional[ContextLookup]:
        """`context["key"]` or `context.get("key")`."""
        parent = self.parents.get(id(name))
        if isinstance(parent, cst.Subscript) and parent.value is name and len(parent.slice) == 1:
            index = parent.slice[0].slice
            if isinstance(index, cst.Index):
                key = self.evaluator.value(index.value)
                if isinstance(key, str):
                    return ContextLookup(parent, key)
        if isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value == "get":
            call = self.parents.get(id(parent))
            if isinstance(call, cst.Call) and call.func is parent and call.args:
                key = self.evaluator.value(call.args[0].value)
                if isinstance(key, str):
                    return ContextLookup(call, key)
        return None

    def _forwards(self, name: cst.Name) -> bool:
        """Is the context object used other than by a key lookup (passed on, iterated...)?"""
        parent = self.parents.get(id(name))
        if isinstance(parent, cst.Param) or (isinstance(parent, cst.AssignTarget)):
            return False
        if isinstance(parent, cst.Attribute) and parent.value is name:
            return parent.attr.value not in ("get", "keys")
        if isinstance(parent, cst.Arg):
            call = self.parents.get(id(parent))
            return not (isinstance(call, cst.Call) and self._is_logging(call))
        return not isinstance(parent, cst.Subscript)

    def _escapes(self, call: cst.Call) -> bool:
        """Does a wall-clock value reach anything but logging, comparisons and local names?"""
        pending: list[cst.CSTNode] = [call]
        tainted: set[str] = set()
        while pending:
            node = pending.pop()
            outcome = self._follow(node)
            if outcome is True:
                return True
            if isinstance(outcome, str) and outcome not in tainted:
                tainted.add(outcome)
                pending.extend(self._uses(outcome))
        return False

    def _follow(self, node: cst.CSTNode) -> Union[bool, str]:
        """Walk up from a value: True when it escapes, a name when bound to it, False when harmless."""
        current = node
        while True:
            parent = self.parents.get(id(current))
            if parent is None:
                return False
            if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.FormattedStringExpression,
                                   cst.FormattedString, cst.ConcatenatedString, cst.BooleanOperation,
                                   cst.IfExp)):
                current = parent
            elif isinstance(parent, cst.Attribute) and parent.value is current:
                current = parent
            elif isinstance(parent, cst.Call) and parent.func is current:
                current = parent
            elif isinstance(parent, cst.Arg):
                call = self.parents.get(id(parent))
                if not isinstance(call, cst.Call):
                    return True
                if self._is_logging(call):
                    return False
                if self.scope.qualname(call.func) in _TRANSFORMS or _plain_name(call.func) in _TRANSFORMS:
                    current = call
                else:
                    return True
            elif isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.Expr)):
                return False
            elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                    else getattr(parent, "target", None)
                return target.value if isinstance(target, cst.Name) else True
            else:
                return True

    def _uses(self, name: str) -> Iterator[cst.Name]:
        for node in self.nodes:
            if isinstance(node, cst.Name) and node.value == name:
                parent = self.parents.get(id(node))
                if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AnnAssign, cst.AugAssign))
                                                             and parent.target is node):
                    continue
                yield node

    def _is_logging(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name):
            return func.value == "print" and not self.scope.lookup("print")
        if isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS:
            qual = self.scope.qualname(func)
            if qual is not None and qual.startswith("logging."):
                return True
            owner = func.value
            while isinstance(owner, cst.Attribute):
                if "log" in owner.attr.value.lower():
                    return True
                owner = owner.value
            return isinstance(owner, cst.Name) and "log" in owner.value.lower()
        return False

    def _static_text(self, node: cst.BaseExpression) -> Optional[str]:
        value = self.evaluator.value(node)
        if isinstance(value, str):
            return value
        return formatted_text(node, self.scope, self.module, self.names)

    def _sql_call(self, call: cst.Call) -> Optional[SqlCall]:
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method is None or method not in SQL_METHODS:
            return None
        arg = _argument(call, 0, ("sql", "query", "operation"))
        if arg is None:
            return None
        statement = self._unwrapped_text(arg.value)
        text = self._static_text(statement)
        if text is None:
            # A non-static statement only matters where statement order is tracked.
            return SqlCall(statement, None) if method in ("execute", "executemany", "run") else None
        if not _SQL_START.match(text):
            return None
        bound = _argument(call, 1 if method in _POSITIONAL_PARAMETERS else -1, ("parameters", "params"))
        if bound is not None:
            text = bind_parameters(text, self._context_parameters(bound.value))
        return SqlCall(statement, text)

    def _unwrapped_text(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """The SQL inside SQLAlchemy's `text("...")`, which Session.execute and
        Connection.execute take; `node` itself otherwise."""
        if (isinstance(node, cst.Call) and node.args and node.args[0].keyword is None
                and self.scope.qualname(node.func) in SQLALCHEMY_TEXT):
            return node.args[0].value
        return node

    def _context_parameters(self, node: cst.BaseExpression) -> Any:
        """A literal dict or list of query parameters, each as the `{{ key }}` template of the
        interval bound it holds, else UNKNOWN (which keeps its placeholder)."""
        if isinstance(node, cst.Dict):
            found: dict[str, Any] = {}
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    return None  # a ** splat: names unknown
                key = self.evaluator.value(element.key)
                if isinstance(key, str):
                    found[key] = self._bound_template(element.value)
            return found
        if isinstance(node, (cst.List, cst.Tuple)):
            if any(isinstance(element, cst.StarredElement) for element in node.elements):
                return None
            return [self._bound_template(element.value) for element in node.elements]
        return None

    def _bound_template(self, node: cst.BaseExpression) -> Any:
        """`{{ data_interval_end }}` for a task parameter Airflow fills with it (never rebound in
        the body) or a lookup of it in the context; UNKNOWN for anything else."""
        key = None
        if isinstance(node, cst.Name):
            if node.value in self.context_params and len(self.scope.bindings.get(node.value, ())) == 1:
                key = node.value
        else:
            base = node.value if isinstance(node, cst.Subscript) else (
                node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None)
            if isinstance(base, cst.Name) and base.value in self.context_names:
                lookup = self._context_lookup(base)
                key = lookup.key if lookup is not None and lookup.node is node else None
        return f"{{{{ {key} }}}}" if key in _BOUND_CONTEXT_KEYS else UNKNOWN

    def _write(self, call: cst.Call, sql_call: Optional[SqlCall]) -> Optional[WriteCall]:
        func = call.func
        if isinstance(func, cst.Name) and func.value == "open" and not self.scope.lookup("open"):
            mode = _argument(call, 1, ("mode",))
            text = self.evaluator.value(mode.value) if mode is not None else "r"
            if isinstance(text, str) and any(c in text for c in "wax") and not self._local_scratch(call):
                return WriteCall(call, f"open(..., {text!r})", False)
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if sql_call is not None and sql_call.text is not None and _SQL_WRITE.search(sql_call.text):
            if method == "copy_expert" and not re.search(r"\bfrom\b", sql_call.text, re.IGNORECASE):
                return None  # COPY ... TO STDOUT: an export
            return WriteCall(call, f"{method}() of a write statement", False, "sql")
        if method in _ROW_WRITERS:
            replace = _argument(call, 99, ("replace",))
            upsert = replace is not None and self.evaluator.value(replace.value) is True
            return WriteCall(call, f"{method}()", upsert)
        if method in _FILE_WRITERS:
            target = _argument(call, 0, ("path", "path_or_buf", "excel_writer", "name"))
            if target is None or self._is_buffer(target.value) or self._local_scratch(call, target):
                return None  # returns the text, fills an in-memory buffer, or a scratch file
            return WriteCall(call, f".{method}()", False)
        if method in _OBJECT_WRITERS:
            return WriteCall(call, f"{method}()", False)
        return None

    def _write_like(self, call: cst.Call) -> bool:
        func = call.func
        if not isinstance(func, cst.Attribute) or not _WRITE_LIKE.match(func.attr.value) or self._is_logging(call):
            return False
        owner = self.scope.qualname(func.value) or ""
        return owner.split(".", 1)[0] not in _DESERIALIZERS  # json.load() reads

    def _local_scratch(self, call: cst.Call, target: Optional[cst.Arg] = None) -> bool:
        """A file under /tmp: staging for an upload, not the task's output."""
        target = target or _argument(call, 0, ("file", "path"))
        if target is None:
            return False
        text = self._static_text(target.value)
        return text is not None and text.startswith(("/tmp/", "/var/tmp/"))

    def _is_buffer(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            qual = self.scope.qualname(node.func) or ""
            return qual in ("io.StringIO", "io.BytesIO")
        if isinstance(node, cst.Name):
            for other in self.nodes:
                if isinstance(other, cst.Assign) and isinstance(other.value, cst.Call) \
                        and any(isinstance(t.target, cst.Name) and t.target.value == node.value for t in other.targets):
                    qual = self.scope.qualname(other.value.func) or ""
                    if qual in ("io.StringIO", "io.BytesIO"):
                        return True
        return False

    def _helper(self, call: cst.Call) -> Optional[CallableFacts]:
        """Facts of a same-file function called by name (a helper doing the actual write)."""
        if self.depth >= MAX_HELPER_DEPTH or not isinstance(call.func, cst.Name):
            return None
        binding = self.scope.single(call.func.value)
        if not isinstance(binding, FunctionBinding) or id(binding.node) in self.seen:
            return None
        parent = self.scope
        while parent.parent is not None:
            parent = parent.parent
        inner = _Analysis(binding.node, function_scope(binding.node, parent), self.module, frozenset(),
                          self.depth + 1, self.seen, self.names)
        return inner.facts()


def _parameters(function: cst.FunctionDef) -> dict[str, cst.CSTNode]:
    params = function.params
    found: dict[str, cst.CSTNode] = {}
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        found[param.name.value] = param
    return found


def _decorator_target(decorator: cst.Decorator) -> cst.BaseExpression:
    expr = decorator.decorator
    return expr.func if isinstance(expr, cst.Call) else expr


def _argument(call: cst.Call, position: int, keywords: tuple[str, ...]) -> Optional[cst.Arg]:
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value in keywords:
                return arg
        else:
            if index == position:
                return arg
            index += 1
    return None


def _plain_name(expr: cst.BaseExpression) -> Optional[str]:
    return expr.value if isinstance(expr, cst.Name) else None


def call_name(call: cst.Call) -> str:
    """`datetime.now()`: the call as written, without its arguments."""
    parts: list[str] = []
    expr: cst.BaseExpression = call.func
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
    return ".".join(reversed(parts)) + "()"


def formatted_text(node: cst.BaseExpression, scope: Scope, module: cst.Module,
                   names: Optional[dict[str, str]] = None) -> Optional[str]:
    """An f-string's text (directly, through a module constant, or concatenated) with each
    `{expr}` replaced by a placeholder derived from expr; None for anything else. `names`
    collects placeholder -> "{expr}" for messages."""
    if isinstance(node, cst.Name):
        binding = scope.single(node.value)
        if not isinstance(binding, ConstantBinding):
            return None
        node = binding.value
    if isinstance(node, cst.ConcatenatedString):
        left = formatted_text(node.left, scope, module, names)
        right = formatted_text(node.right, scope, module, names)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.SimpleString):
        value = simple_string_value(node)
        return value if isinstance(value, str) else None
    if not isinstance(node, cst.FormattedString):
        return None
    out: list[str] = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            out.append(part.value.replace("{{", "{").replace("}}", "}"))
        elif isinstance(part, cst.FormattedStringExpression):
            code = module.code_for_node(part.expression)
            token = "__dgt_" + hashlib.sha1(code.encode("utf-8")).hexdigest()[:10] + "__"
            if names is not None:
                names[token] = "{" + code + "}"
            out.append(token)
        else:
            return None
    return "".join(out)

