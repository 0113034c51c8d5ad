"""Calls in a task callable that write somewhere: files, objects, rows, DataFrames, SQLAlchemy
inserts and write statements, each with whether a re-run would add the same data again."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from dagguard.model.tasks.callable_clock import CLOCK_FUNCTIONS
from dagguard.model.tasks.callable_sql import SqlCall
from dagguard.model.tasks.callable_tree import CallableTree, argument
from dagguard.model.tasks.iceberg_tables import iceberg_table_call
from dagguard.model.basics.scope import Scope
from dagguard.model.tasks.scratch_paths import ScratchPaths
from dagguard.model.basics.tree import child_nodes


# Methods that write whatever SQL text or rows they are given.
_ROW_WRITERS = frozenset({"insert_rows", "bulk_insert_rows", "bulk_load", "bulk_load_custom"})
_FILE_WRITERS = frozenset({"to_csv", "to_parquet", "to_json", "to_excel", "to_feather", "to_orc"})
_OBJECT_WRITERS = frozenset({
    "load_file", "load_string", "load_bytes", "load_file_obj", "upload", "upload_file",
    "upload_fileobj", "upload_from_filename", "upload_from_string", "upload_from_file",
    "put_object",
})
# Where an object writer names the object it writes: (positions, keywords). S3Hook.load_*(data,
# key, bucket_name), WasbHook.load_*(data, container, blob_name), GCSHook.upload(bucket,
# object_name), boto3's upload_file(Filename, Bucket, Key) and put_object(Key=...).
_OBJECT_KEYS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    **dict.fromkeys(("load_file", "load_string", "load_bytes", "load_file_obj"),
                    ((1, 2), ("key", "blob_name"))),
    "upload": ((1,), ("object_name", "blob_name", "key")),
    **dict.fromkeys(("upload_file", "upload_fileobj"), ((1, 2), ("Key", "key", "object_name", "blob_name",
                                                               "file_name"))),
    "put_object": ((1,), ("Key", "key", "object_name")),
}
# These refuse an existing object unless told to replace it (S3Hook's replace=, Wasb's overwrite=);
# the other writers overwrite it.
_REPLACE_NEEDED = frozenset({"load_file", "load_string", "load_bytes", "load_file_obj"})
# A GCS blob's upload methods write the object `bucket.blob(name)` names.
_BLOB_UPLOADS = frozenset({"upload_from_filename", "upload_from_string", "upload_from_file"})
# DataFrame.to_sql(name, con, schema, if_exists) and to_gbq(destination_table, ..., if_exists=):
# only "append" adds the frame's rows again on a re-run.
_FRAME_WRITERS = {"to_sql": 3, "to_gbq": -1}
# delta-rs's write_deltalake(table_or_uri, data, *, mode=): only "append" adds the rows again on a
# re-run ("error", the default, refuses an existing table; "overwrite" rewrites it, or with
# predicate= the part it names).
_DELTA_WRITERS = frozenset({"deltalake.write_deltalake", "deltalake.writer.write_deltalake",
                            "deltalake.writer.writer.write_deltalake"})
# Spark's DataFrameWriter (`df.write...`): insertInto appends unless told to overwrite; the
# others (saveAsTable, save, parquet...) append only in mode "append" (their default refuses an
# existing table or path). `df.writeTo(t).append()` is DataFrameWriterV2's append.
_SPARK_SINKS = frozenset({"insertInto", "saveAsTable", "save", "parquet", "csv", "json", "orc", "text"})
_SPARK_WRITER_STEPS = frozenset({"format", "mode", "option", "options", "partitionBy", "bucketBy", "sortBy"})
# pyiceberg's Table writes: append(df) adds the rows again on a re-run; overwrite(df,
# overwrite_filter=...) replaces what the filter selects (the whole table by default),
# dynamic_partition_overwrite(df) the partitions df touches, upsert(df) matches on keys.
_ICEBERG_WRITES = frozenset({"append", "overwrite", "dynamic_partition_overwrite", "upsert"})
# What empties rows of an Iceberg table: before an append in the same callable, it may be the
# interval's rows (as a DELETE before an INSERT), so the append is not judged.
_ICEBERG_CLEARS = frozenset({"delete", "overwrite"})
# SQLAlchemy's insert() constructs, and a Table's .insert() method.
SQLALCHEMY_INSERT = frozenset({
    "sqlalchemy.insert", "sqlalchemy.sql.insert", "sqlalchemy.sql.expression.insert",
    "sqlalchemy.dialects.postgresql.insert", "sqlalchemy.dialects.mysql.insert",
    "sqlalchemy.dialects.sqlite.insert",
})
SQLALCHEMY_TABLE = frozenset({"sqlalchemy.Table", "sqlalchemy.schema.Table", "sqlalchemy.sql.schema.Table"})
# Methods that turn an insert() into an upsert or make it skip rows already there.
_UPSERT_METHODS = frozenset({"on_conflict_do_nothing", "on_conflict_do_update", "on_duplicate_key_update",
                             "prefix_with"})
_SQL_WRITE = re.compile(r"(^|;)\s*(insert|merge|update|delete|copy|replace|upsert)\b", re.IGNORECASE)
# Method names that suggest writing somewhere (XCom and logging aside).
_WRITE_LIKE = re.compile(r"^(insert|write|upload|put|load|export|publish|sink|push|send|save)(?!.*xcom)",
                         re.IGNORECASE)
_DESERIALIZERS = frozenset({"json", "yaml", "pickle", "marshal", "tomllib", "toml", "dill", "joblib",
                            "numpy", "np", "cloudpickle", "ujson", "orjson", "simplejson"})
_BUFFERS = ("io.StringIO", "io.BytesIO")


@dataclass(frozen=True)
class WriteCall:
    node: cst.Call
    what: str                        # "insert_rows()", "open(..., 'w')"...
    # A re-run adds nothing twice: it replaces rows by key (insert_rows(replace=True)), rewrites
    # the table (to_sql(if_exists="replace")) or refuses to run (to_sql's default "fail").
    upsert: bool
    kind: str = "api"                # "sql": a write statement, judged from the SQL itself
    table: Optional[str] = None      # the table a row writer names, when static


class WriteFinder:
    """Answers "does this call write, and how" for the calls of one callable."""

    def __init__(self, tree: CallableTree, item_parameters: frozenset[str] = frozenset()) -> None:
        self.tree = tree
        self.scope = tree.scope
        self.scratch = ScratchPaths(tree)
        # The parameters of a helper that its caller fills with a loop's item, one call per item.
        self.item_parameters = item_parameters

    def write(self, call: cst.Call, sql: Optional[SqlCall]) -> Optional[WriteCall]:
        """The write `call` makes (given the SQL it runs, if any), or None."""
        func = call.func
        if isinstance(func, cst.Name) and func.value == "open" and not self.scope.lookup("open"):
            mode = argument(call, 1, ("mode",))
            text = self.tree.evaluator.value(mode.value) if mode is not None else "r"
            if isinstance(text, str) and any(c in text for c in "wax") and not self._local_scratch(call):
                return WriteCall(call, f"open(..., {text!r})", False)
            return None
        if self.scope.resolves_to(func, _DELTA_WRITERS):
            return self._delta_write(call)
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if sql is not None and sql.text is not None and _SQL_WRITE.search(sql.text):
            if method == "copy_expert" and not re.search(r"\bfrom\b", sql.text, re.IGNORECASE):
                return None  # COPY ... TO STDOUT: an export
            return WriteCall(call, f"{method}() of a write statement", False, "sql")
        if method in _ROW_WRITERS:
            replace = argument(call, 99, ("replace",))
            upsert = replace is not None and self.tree.evaluator.value(replace.value) is True
            return WriteCall(call, f"{method}()", upsert, table=self._table_argument(call, ("table", "table_name")))
        if method in _FRAME_WRITERS:
            return self._frame_write(call, method)
        if method in _SPARK_SINKS or method == "append":
            spark = self._spark_write(call, method)
            if spark is not None:
                return spark
        if method in _ICEBERG_WRITES:
            table = iceberg_table_call(func.value, self.scope)
            if table is not None:
                return self._iceberg_write(call, method, table)
        if method == "insert" and not call.args and self._table_call(func.value) is not None:
            return WriteCall(call, "SQLAlchemy insert()", self._upserted(call), table=self._table_of(func.value))
        if method in _FILE_WRITERS:
            target = argument(call, 0, ("path", "path_or_buf", "excel_writer", "name"))
            if target is None or self._is_buffer(target.value) or self._local_scratch(call, target):
                return None  # returns the text, fills an in-memory buffer, or a scratch file
            return WriteCall(call, f".{method}()", False)
        if method in _OBJECT_WRITERS:
            # One fixed object overwritten (a docs site, a report file), or one object per item
            # a loop writes, named after the item: a re-run rewrites the same objects.
            return WriteCall(call, f"{method}()", self._replaces_fixed_object(call, method)
                             or self._replaces_item_objects(call, method))
        return None

    def sqlalchemy_insert(self, call: cst.Call) -> WriteCall:
        """`insert(table)`, already known to be SQLAlchemy's."""
        table = argument(call, 0, ("table",))
        return WriteCall(call, "SQLAlchemy insert()", self._upserted(call),
                         table=self._table_of(table.value) if table is not None else None)

    def write_like(self, call: cst.Call) -> bool:
        """A method named like a write (insert_rows_json, put_item...), not logging or json.load."""
        func = call.func
        if not isinstance(func, cst.Attribute) or not _WRITE_LIKE.match(func.attr.value) \
                or self.tree.is_logging(call):
            return False
        owner = self.scope.qualname(func.value) or ""
        if owner.split(".", 1)[0] in _DESERIALIZERS:
            return False  # json.load() reads
        return not self.scratch.is_scratch(func.value)  # `tmp.write(...)`: a scratch file

    def _frame_write(self, call: cst.Call, method: str) -> WriteCall:
        """`df.to_sql(...)`: an append unless if_exists rewrites the table or refuses a re-run
        (pandas 3's "delete_rows" empties it first); a custom `method=` may upsert."""
        evaluator = self.tree.evaluator
        mode_arg = argument(call, _FRAME_WRITERS[method], ("if_exists",))
        mode = evaluator.value(mode_arg.value) if mode_arg is not None else "fail"
        custom = argument(call, -1, ("method",))
        appends = mode == "append" and (custom is None or evaluator.value(custom.value) in (None, "multi"))
        what = f".{method}(..., if_exists={mode!r})" if isinstance(mode, str) else f".{method}()"
        return WriteCall(call, what, not appends, table=self._table_argument(call, ("name", "destination_table")))

    def _delta_write(self, call: cst.Call) -> WriteCall:
        """`write_deltalake(uri, data, mode=...)`: an append for mode="append"; an unknown mode
        is not known to append."""
        mode_arg = argument(call, 99, ("mode",))
        mode = self.tree.evaluator.value(mode_arg.value) if mode_arg is not None else "error"
        what = f"write_deltalake(..., mode={mode!r})" if isinstance(mode, str) else "write_deltalake()"
        return WriteCall(call, what, mode != "append", table=self._table_argument(call, ("table_or_uri",)))

    def _iceberg_write(self, call: cst.Call, method: str, table: cst.Call) -> WriteCall:
        """`tbl.append(df)` on a table a pyiceberg catalog loaded: an append, unless the callable
        also deletes or overwrites rows of an Iceberg table (maybe the interval's, first)."""
        appends = method == "append" and not any(
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _ICEBERG_CLEARS and iceberg_table_call(node.func.value, self.scope)
            for node in self.tree.nodes)
        return WriteCall(call, f"Iceberg's Table.{method}()", not appends,
                         table=self._table_argument(table, ("identifier",)))

    def _spark_write(self, call: cst.Call, method: str) -> Optional[WriteCall]:
        """`df.write[.mode(m)...].insertInto(t)` and the other DataFrameWriter sinks, or
        `df.writeTo(t).append()`: an append when the mode says so (insertInto's default appends);
        None when the receiver is not a `.write` chain. An unknown mode is not known to append."""
        evaluator = self.tree.evaluator
        func = call.func
        assert isinstance(func, cst.Attribute)
        if method == "append":
            receiver = func.value
            if (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
                    and receiver.func.attr.value == "writeTo"):
                return WriteCall(call, ".writeTo(...).append()", False,
                                 table=self._table_argument(receiver, ("table",)))
            return None
        mode: object = "append" if method == "insertInto" else "errorifexists"
        step = func.value
        while isinstance(step, cst.Call) and isinstance(step.func, cst.Attribute) \
                and step.func.attr.value in _SPARK_WRITER_STEPS:
            if step.func.attr.value == "mode" and step.args:
                mode = evaluator.value(step.args[0].value)
            step = step.func.value
        if not (isinstance(step, cst.Attribute) and step.attr.value == "write"):
            return None
        if method == "insertInto":
            overwrite = argument(call, 1, ("overwrite",))
            if overwrite is not None:
                value = evaluator.value(overwrite.value)
                mode = "overwrite" if value is True else mode if value is False else None
        else:
            given = argument(call, 99, ("mode",))
            if given is not None:
                mode = evaluator.value(given.value)
        what = f".write.mode({mode!r}).{method}()" if isinstance(mode, str) else f".write.{method}()"
        keywords = ("tableName",) if method == "insertInto" else ("name",) if method == "saveAsTable" else ("path",)
        return WriteCall(call, what, mode != "append", table=self._table_argument(call, keywords))

    def _table_argument(self, call: cst.Call, keywords: tuple[str, ...]) -> Optional[str]:
        arg = argument(call, 0, keywords)
        text = self.tree.static_text(arg.value) if arg is not None else None
        return text.strip().lower() if text else None

    def _table_call(self, expr: cst.BaseExpression) -> Optional[cst.Call]:
        """`sqlalchemy.Table(...)`, directly or through the name bound to it."""
        scope = self.scope
        if isinstance(expr, cst.Name):
            found = scope.constant(expr.value)
            if found is not None:
                expr, scope = found
        if isinstance(expr, cst.Call) and scope.resolves_to(expr.func, SQLALCHEMY_TABLE):
            return expr
        return None

    def _table_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """The name a SQLAlchemy Table was made with, `Table("orders", metadata)`."""
        table = self._table_call(expr)
        return self._table_argument(table, ("name",)) if table is not None else None

    def _upserted(self, call: cst.Call) -> bool:
        """Is the insert() turned into an upsert, directly or through the name it is bound to?"""
        pending: list[cst.CSTNode] = [call]
        seen: set[str] = set()
        while pending:
            current = pending.pop()
            while True:
                parent = self.tree.parents.get(id(current))
                if isinstance(parent, cst.Attribute) and parent.value is current:
                    if parent.attr.value in _UPSERT_METHODS:
                        return True
                elif not (isinstance(parent, cst.Call) and parent.func is current):
                    break
                current = parent
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                target = parent.targets[0].target
                if isinstance(target, cst.Name) and target.value not in seen:
                    seen.add(target.value)
                    pending.extend(self.tree.uses(target.value))
        return False

    def _local_scratch(self, call: cst.Call, target: Optional[cst.Arg] = None) -> bool:
        """A file in the temporary folder (`/tmp/...`, `tempfile.mkdtemp()`, a
        `TemporaryDirectory()`): staging for an upload, not the task's output."""
        target = target or argument(call, 0, ("file", "path"))
        return target is not None and self.scratch.is_scratch(target.value)

    def _replaces_fixed_object(self, call: cst.Call, method: str) -> bool:
        """Does the call overwrite one object whose name is fixed (static, no placeholder)?
        `load_string(..., key="docs/index.html", replace=True)`, `GCSHook.upload(b, "latest.txt")`."""
        names = self._overwritten_names(call, method)
        return bool(names) and all(self._fixed_name(n) for n in names)

    def _replaces_item_objects(self, call: cst.Call, method: str) -> bool:
        """Does the call, in a `for` loop, overwrite an object named after the loop's item and not
        after the clock? `for f in files: hook.load_file(f, key=f"logs/{f.name}", replace=True)`.
        A re-run writes the same items to the same names; a counter or a time stamp would not."""
        names = self._overwritten_names(call, method)
        if not names:
            return False
        expressions = self._feeding_expressions(names)
        read = {n.value for e in expressions for n in _names_read(e)}
        targets = self._loop_targets(call) | self._item_parameters(call, read)
        if self._enclosing_function(call) is None:  # in the callable's own body
            targets |= self.item_parameters
        return bool(read & targets) and not any(self.tree.evaluator.calls_made(e, _reads_clock) for e in expressions)

    def _item_parameters(self, node: cst.CSTNode, read: set[str]) -> set[str]:
        """The parameters in `read` of the nested function around `node` that every call of it in
        the callable fills with a loop's item: `for k in groups: archive(groups[k])` makes
        `def archive(rows)`'s `rows` one item per call. None when a call passes anything else."""
        function = self._enclosing_function(node)
        if function is None:  # the callable's own body: its parameters are its caller's
            return set()
        parameters = [p.name.value for p in function.params.params]
        calls = [n for n in self.tree.nodes if isinstance(n, cst.Call)
                 and isinstance(n.func, cst.Name) and n.func.value == function.name.value]
        items: set[str] = set()
        for position, name in enumerate(parameters):
            if name in read and calls and all(self._passes_item(c, position, name) for c in calls):
                items.add(name)
        return items

    def items_passed(self, call: cst.Call, function: cst.FunctionDef) -> frozenset[str]:
        """The parameters of `function` that `call` (a call of it in this callable) fills with
        a value made from the item of a loop around the call."""
        names = [p.name.value for p in function.params.params]
        return frozenset(n for i, n in enumerate(names) if self._passes_item(call, i, n))

    def _passes_item(self, call: cst.Call, position: int, parameter: str) -> bool:
        """Does `call` pass, for `parameter`, a value made from the item of a loop around it?"""
        passed = argument(call, position, (parameter,))
        targets = self._loop_targets(call)
        if passed is None or not targets:
            return False
        expressions = self._feeding_expressions([passed.value])
        return any(n.value in targets for e in expressions for n in _names_read(e))

    def _enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The function defined in the callable that `node` is in; None for the callable's own
        body (the tree records no parent above it)."""
        current = self.tree.parents.get(id(node))
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            current = self.tree.parents.get(id(current))
        return current if isinstance(current, cst.FunctionDef) else None

    def _overwritten_names(self, call: cst.Call, method: str) -> list[cst.BaseExpression]:
        """The expressions naming the object the call overwrites; none when it refuses an
        existing object (S3Hook.load_* without replace=True)."""
        if method in _REPLACE_NEEDED:
            replace = argument(call, -1, ("replace", "overwrite"))
            if replace is None or self.tree.evaluator.value(replace.value) is not True:
                return []
        if method in _BLOB_UPLOADS:
            blob = self._blob_call(call.func.value) if isinstance(call.func, cst.Attribute) else None
            names = [argument(blob, 0, ("blob_name", "name"))] if blob is not None else []
        else:
            positions, keywords = _OBJECT_KEYS.get(method, ((), ()))
            names = [argument(call, -1, keywords)] + [argument(call, p, ()) for p in positions]
        return [n.value for n in names if n is not None]

    def _loop_targets(self, node: cst.CSTNode) -> set[str]:
        """The names the `for` loops around `node` bind, up to the callable's own body (a
        nested function's loops are its own)."""
        targets: set[str] = set()
        current = self.tree.parents.get(id(node))
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            if isinstance(current, cst.For):
                targets.update(n.value for n in _names_read(current.target))
            current = self.tree.parents.get(id(current))
        return targets

    def _feeding_expressions(self, roots: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
        """`roots` and the values assigned in the callable to the local names they read,
        followed through further names (`key = prefix + str(relative)`, `relative = ...`)."""
        expressions = list(roots)
        seen: set[str] = set()
        index = 0
        while index < len(expressions) and len(expressions) < 200:
            for name in _names_read(expressions[index]):
                if name.value in seen:
                    continue
                seen.add(name.value)
                expressions.extend(self._assigned_values(name.value))
            index += 1
        return expressions

    def _assigned_values(self, name: str) -> list[cst.BaseExpression]:
        """The values `name = ...` (or `name, other = ...`) binds in the callable."""
        values: list[cst.BaseExpression] = []
        for node in self.tree.nodes:
            if isinstance(node, cst.Assign) and any(
                    name in {n.value for n in _names_read(t.target)} for t in node.targets):
                values.append(node.value)
        return values

    def _blob_call(self, expr: cst.BaseExpression) -> Optional[cst.Call]:
        """`bucket.blob("name")`, directly or through the name bound to it in the callable."""
        if isinstance(expr, cst.Name):
            bound = [n.value for n in self.tree.nodes if isinstance(n, cst.Assign)
                     and any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in n.targets)]
            expr = bound[0] if len(bound) == 1 else expr
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "blob":
            return expr
        return None

    def _fixed_name(self, node: cst.BaseExpression) -> bool:
        """A static object name: no placeholder, no template."""
        value = self.tree.evaluator.value(node)
        return isinstance(value, str) and bool(value) and "{{" not in value

    def _is_buffer(self, node: cst.BaseExpression) -> bool:
        """An io.StringIO/BytesIO, directly or through a name assigned one."""
        if isinstance(node, cst.Call):
            return (self.scope.qualname(node.func) or "") in _BUFFERS
        if isinstance(node, cst.Name):
            for other in self.tree.nodes:
                if isinstance(other, cst.Assign) and isinstance(other.value, cst.Call) \
                        and any(isinstance(t.target, cst.Name) and t.target.value == node.value for t in other.targets):
                    if (self.scope.qualname(other.value.func) or "") in _BUFFERS:
                        return True
        return False


def _names_read(node: cst.CSTNode) -> list[cst.Name]:
    """The variable names in an expression or a target: not attribute names (`x.name`) nor
    keywords (`f(key=...)`), not inside a lambda."""
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        elif isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append(current.value)
        elif not isinstance(current, cst.Lambda):
            stack.extend(child_nodes(current))
    return found


def _reads_clock(call: cst.Call, scope: Scope) -> bool:
    """`datetime.now()`, `time.time()`, `pendulum.now()`: a new value on every run."""
    return scope.resolves_to(call.func, CLOCK_FUNCTIONS)
