"""What one parsed SQL statement does: which table it writes and how, and how it bounds time.

Template expressions appear in the tree as placeholder identifiers or inside string literals
(see dagguard.model.sql.templates); `lookup` maps a placeholder back to its Jinja expression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from dagguard.model.sql.templates import PLACEHOLDER, Expression

if TYPE_CHECKING:
    from sqlglot import exp

Lookup = Callable[[str], Optional[Expression]]


@dataclass(frozen=True)
class WriteEffect:
    """A statement's effect on a table.

    kind: "append" (INSERT/COPY adding rows), "upsert" (MERGE, ON CONFLICT, OR REPLACE,
    INSERT OVERWRITE, anti-joined INSERT or one reading its own target), "clear" (DELETE, TRUNCATE, DROP, CREATE without
    IF NOT EXISTS), "update".
    """

    kind: str
    table: Optional[str]             # normalised name; None when not static
    from_query: bool                 # INSERT ... SELECT / COPY: moves data rather than literals
    verb: str                        # "INSERT INTO", "COPY INTO"... for messages
    partial: bool = False            # a DELETE with a WHERE clause: clears only some rows


def table_name(table: "exp.Expression") -> Optional[str]:
    """`db.schema.table` in lower case, keeping placeholders, or None for non-tables."""
    from sqlglot import exp

    if isinstance(table, exp.Schema):
        table = table.this
    if not isinstance(table, exp.Table) or not table.name:
        return None
    parts = [p for p in (table.catalog, table.db, table.name) if p]
    return ".".join(parts).lower()


def write_effects(tree: "exp.Expression", raw: str) -> list[WriteEffect]:
    """The tables `tree` writes or clears, in the order they happen."""
    from sqlglot import exp

    if isinstance(tree, exp.Insert):
        target = table_name(tree.this)
        source = tree.expression
        literal = isinstance(source, exp.Values) or source is None
        upsert = bool(tree.args.get("conflict") or tree.args.get("alternative") or tree.args.get("overwrite")
                      or tree.args.get("ignore")) or _anti_joined(source) or _reads_target(source, target)
        return [WriteEffect("upsert" if upsert else "append", target, not literal, "INSERT INTO")]
    if isinstance(tree, exp.Merge):
        return [WriteEffect("upsert", table_name(tree.this), True, "MERGE INTO")]
    if isinstance(tree, exp.Copy):
        if not tree.args.get("kind"):
            return []  # COPY ... TO: an export
        target = table_name(tree.this)
        words = raw.split(None, 2)
        # Snowflake's COPY INTO skips files it already loaded (64 days of load metadata) unless FORCE.
        if len(words) > 1 and words[1].upper() == "INTO" and not _forced(tree):
            return [WriteEffect("upsert", target, True, "COPY INTO")]
        return [WriteEffect("append", target, True, "COPY")]
    if isinstance(tree, exp.Delete):
        return [WriteEffect("clear", table_name(tree.this), False, "DELETE FROM",
                            partial=tree.args.get("where") is not None)]
    if isinstance(tree, exp.TruncateTable):
        return [WriteEffect("clear", table_name(t), False, "TRUNCATE") for t in tree.expressions]
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() == "TABLE":
        tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        return [WriteEffect("clear", table_name(t), False, "DROP TABLE") for t in tables]
    if isinstance(tree, exp.Create) and str(tree.args.get("kind", "")).upper() == "TABLE":
        if tree.args.get("exists") and not tree.args.get("replace"):
            return []  # IF NOT EXISTS keeps the rows already there
        return [WriteEffect("clear", table_name(tree.this), False, "CREATE TABLE")]
    if isinstance(tree, exp.Update):
        return [WriteEffect("update", table_name(tree.this), False, "UPDATE")]
    return []


def _forced(tree: "exp.Expression") -> bool:
    from sqlglot import exp

    for param in tree.args.get("params") or ():
        if isinstance(param, exp.CopyParameter) and param.name.upper() == "FORCE":
            value = param.args.get("expression")
            return value is not None and value.sql().upper() in ("TRUE", "1")
    return False


def _anti_joined(source: Optional["exp.Expression"]) -> bool:
    """INSERT ... SELECT ... WHERE NOT EXISTS / NOT IN: rows already there are skipped."""
    from sqlglot import exp

    if source is None:
        return False
    for node in source.find_all(exp.Not):
        if isinstance(node.this, (exp.Exists, exp.In)):
            return True
    return False


def _reads_target(source: Optional["exp.Expression"], target: Optional[str]) -> bool:
    """INSERT INTO t SELECT ... that reads t itself (`WHERE id > (SELECT MAX(id) FROM t)`, a
    LEFT JOIN t ... IS NULL): an incremental load that skips what t already holds."""
    return source is not None and target is not None and target in read_tables(source)


def read_tables(tree: "exp.Expression") -> set[str]:
    """Tables a statement's SELECTs read (CTE names included, which match no real table)."""
    from sqlglot import exp

    found: set[str] = set()
    for select in tree.find_all(exp.Select):
        for table in select.find_all(exp.Table):
            name = table_name(table)
            if name is not None:
                found.add(name)
    return found


def placeholders(node: "exp.Expression") -> set[str]:
    """Placeholder tokens inside `node` (as identifiers or inside string literals)."""
    from sqlglot import exp

    found: set[str] = set()
    for item in node.walk():
        if isinstance(item, (exp.Identifier, exp.Literal, exp.Var)):
            found.update(PLACEHOLDER.findall(str(item.this)))
    return found


_BOUND_WRAPPERS = ("Cast", "TryCast", "DataType", "Paren", "Literal", "Column", "Identifier", "Var",
                   "StrToTime", "StrToDate", "TsOrDsToDate", "TsOrDsToTimestamp", "TimeStrToTime",
                   "DateStrToDate", "Date", "Timestamp")
_BOUND_FUNCTIONS = frozenset({"TO_DATE", "TO_TIMESTAMP", "DATE", "TIMESTAMP", "PARSE_DATE",
                              "PARSE_TIMESTAMP", "TO_TIMESTAMP_NTZ", "TO_TIMESTAMP_TZ", "DATETIME"})


def _bound(side: "exp.Expression", lookup: Lookup) -> Optional[Expression]:
    """The template expression `side` is, when it is one plain bound (maybe cast or quoted)."""
    expr = _plain_template(side, lookup)
    return expr if expr is not None and expr.bound is not None else None


def _plain_template(side: "exp.Expression", lookup: Lookup) -> Optional[Expression]:
    """The template expression `side` is, when it is one expression, maybe cast or quoted."""
    from sqlglot import exp

    tokens = placeholders(side)
    if len(tokens) != 1:
        return None
    wrappers = tuple(getattr(exp, n) for n in _BOUND_WRAPPERS if hasattr(exp, n))
    for node in side.walk():
        if isinstance(node, exp.Anonymous) and str(node.this).upper() in _BOUND_FUNCTIONS:
            continue
        if not isinstance(node, wrappers):
            return None  # arithmetic or a function: not the plain bound any more
    return lookup(next(iter(tokens)))


def _column(side: "exp.Expression") -> Optional[str]:
    """The compared expression's text when it holds no placeholder (a column, CAST(col))."""
    if placeholders(side):
        return None
    return side.sql()


@dataclass(frozen=True)
class RangeBound:
    column: str
    op: str                          # ">=", ">", "<", "<=", "between"
    expr: Expression
    low: Optional[Expression] = None  # for BETWEEN: the lower bound


def range_bounds(tree: "exp.Expression", lookup: Lookup) -> Iterator[RangeBound]:
    """Comparisons of a column with an interval bound: `col < '{{ data_interval_end }}'`..."""
    from sqlglot import exp

    flipped = {exp.GTE: "<=", exp.GT: "<", exp.LT: ">", exp.LTE: ">="}
    direct = {exp.GTE: ">=", exp.GT: ">", exp.LT: "<", exp.LTE: "<="}
    for node in tree.find_all(exp.GTE, exp.GT, exp.LT, exp.LTE, exp.Between):
        if isinstance(node, exp.Between):
            column = _column(node.this)
            high = _bound(node.args["high"], lookup) if node.args.get("high") else None
            low = _bound(node.args["low"], lookup) if node.args.get("low") else None
            if column is not None and high is not None:
                yield RangeBound(column, "between", high, low)
            continue
        left, right = node.this, node.expression
        column, bound = _column(left), _bound(right, lookup)
        if column is not None and bound is not None:
            yield RangeBound(column, direct[type(node)], bound)
            continue
        column, bound = _column(right), _bound(left, lookup)
        if column is not None and bound is not None:
            yield RangeBound(column, flipped[type(node)], bound)


def inclusive_end_bounds(tree: "exp.Expression", lookup: Lookup) -> list[RangeBound]:
    """`BETWEEN ... AND {{ data_interval_end }}` and `<= {{ data_interval_end }}`."""
    return [b for b in range_bounds(tree, lookup)
            if b.expr.bound == "end" and b.op in ("between", "<=")]


def empty_trigger_ranges(tree: "exp.Expression", lookup: Lookup) -> list[RangeBound]:
    """Ranges from the run's start to `data_interval_end` on one column, empty when start == end.

    Only `data_interval_end` itself is such a bound: next_ds and its kin are gone in Airflow 3.
    """
    bounds = list(range_bounds(tree, lookup))
    lows = {(b.column, b.expr.shape) for b in bounds if b.op in (">=", ">") and b.expr.bound == "start"}
    found = []
    for b in bounds:
        if b.expr.key != "data_interval_end":
            continue
        # An inclusive range between equal instants keeps the rows at that instant; with a
        # filter like `| ds` it keeps a whole day, so only the raw timestamp counts as empty.
        inclusive_empty = b.expr.shape == ""
        if b.op == "between" and b.low is not None and b.low.bound == "start" and b.low.shape == b.expr.shape:
            if inclusive_empty:
                found.append(b)
        elif b.op == "<" and (b.column, b.expr.shape) in lows:
            found.append(b)
        elif b.op == "<=" and inclusive_empty and (b.column, b.expr.shape) in lows:
            found.append(b)
    return found


@dataclass(frozen=True)
class RunDateRead:
    """A read keyed on the run's logical date alone: `day = '{{ ds }}'`, a lower bound at it
    with no `data_interval_end` above, a table named by it."""

    text: str                        # "day = {{ ds }}", "FROM raw.events_{{ ds_nodash }}"
    expr: Expression
    tables: frozenset[str] = frozenset()   # the tables the SELECT reads (empty when not static)


def run_date_reads(tree: "exp.Expression", lookup: Lookup) -> list[RunDateRead]:
    """Reads of source data keyed on the logical date: in the WHERE and JOIN ... ON of every
    SELECT (also inside INSERT, MERGE, CTAS) and the tables they read; never a DELETE's rows.

    Ranges up to `data_interval_end` are DG206's, except the one that is a single day on a
    trigger timetable: `BETWEEN '{{ data_interval_start | ds }}' AND '{{ data_interval_end | ds }}'`.
    """
    from sqlglot import exp

    found: dict[str, RunDateRead] = {}
    for select in tree.find_all(exp.Select):
        if select.find_ancestor(exp.Delete) is not None:
            continue
        sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or ())
        tables = [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]
        names = [table_name(t) for t in tables]
        # Every source a named table, or what is read is not known (a subquery reads its own).
        read = frozenset(n for n in names if n) if len(names) == len(sources) and all(names) else frozenset()
        conditions = [select.args.get("where")] + [j.args.get("on") for j in select.args.get("joins") or ()]
        for condition in conditions:
            if condition is not None:
                for text, expr in _keyed_conditions(condition, lookup):
                    found.setdefault(text, RunDateRead(text, expr, read))
        for table in tables:
            expr = _run_date_in_name(table, lookup)
            if expr is not None:
                text = f"FROM {table_name(table) or table.sql()}"
                found.setdefault(text, RunDateRead(text, expr, read))
    return list(found.values())


def _keyed_conditions(condition: "exp.Expression", lookup: Lookup) -> Iterator[tuple[str, Expression]]:
    from sqlglot import exp

    for node in condition.find_all(exp.EQ):
        for column_side, value_side in ((node.this, node.expression), (node.expression, node.this)):
            column, expr = _column(column_side), _plain_template(value_side, lookup)
            if column is not None and expr is not None and expr.run_date:
                yield f"{column} = {{{{ {expr.source} }}}}", expr
    ranges = list(range_bounds(condition, lookup))
    ends = {b.column for b in ranges if b.expr.key == "data_interval_end" and b.op in ("<", "<=", "between")}
    for node in condition.find_all(exp.Between):
        column = _column(node.this)
        low = _plain_template(node.args["low"], lookup) if node.args.get("low") else None
        if column is None or low is None or not low.run_date:
            continue
        high = _bound(node.args["high"], lookup) if node.args.get("high") else None
        # Up to data_interval_end is DG206's range, unless both ends are the same day.
        if high is not None and high.key == "data_interval_end" and not (high.shape and high.shape == low.shape):
            continue
        yield f"{column} BETWEEN {{{{ {low.source} }}}} AND ...", low
    # Lower bounds: `col >= x`, or `x <= col` read the other way round.
    flipped = {exp.LTE: exp.GTE, exp.LT: exp.GT}
    for node in condition.find_all(exp.GTE, exp.GT, exp.LT, exp.LTE):
        kind, left, right = type(node), node.this, node.expression
        if kind in flipped:
            kind, left, right = flipped[kind], right, left
        column, expr = _column(left), _plain_template(right, lookup)
        if column is None or expr is None or not expr.run_date or column in ends:
            continue  # an upper bound, or a range up to data_interval_end (DG206's)
        yield f"{column} {'>=' if kind is exp.GTE else '>'} {{{{ {expr.source} }}}}", expr


def _run_date_in_name(table: "exp.Table", lookup: Lookup) -> Optional[Expression]:
    """The logical date a read table is named by: `raw.events_{{ ds_nodash }}`."""
    for token in placeholders(table):
        expr = lookup(token)
        if expr is not None and expr.run_date:
            return expr
    return None
