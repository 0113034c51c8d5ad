"""Airflow's partition timetables and partition mappers (Airflow 3.2+, AIP-76), read from a DAG's
schedule: `CronPartitionTimetable`, `PartitionedAssetTimetable` with its mappers, and
`PartitionedAtRuntime`. Their runs carry `partition_key`/`partition_date` and no data interval:
Airflow 3.3.2's timetables give them `data_interval=None`, so `logical_date`, `ds`, `ts` and
`data_interval_*` are absent from the task's context (`airflow/timetables/trigger.py`,
`sdk/execution_time/task_runner.py`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from dagguard.model.basics import airflow_names as names
from dagguard.model.schedules.schedules import PRESETS, keyword_argument, schedule_argument, timetable_call
from dagguard.model.basics.scope import ConstantBinding, FunctionBinding, Scope
from dagguard.model.basics.values import MAX_DEPTH, Evaluator, decorator_target

if TYPE_CHECKING:
    from dagguard.model.dags.models import DagModel, FileModel

# The keys each temporal mapper emits unless given output_format= (Airflow 3.3.2,
# sdk/definitions/partition_mappers/temporal.py).
TEMPORAL_KEY_FORMATS = {
    "StartOfHourMapper": "%Y-%m-%dT%H",
    "StartOfDayMapper": "%Y-%m-%d",
    "StartOfWeekMapper": "%Y-%m-%d (W%V)",
    "StartOfMonthMapper": "%Y-%m",
    "StartOfQuarterMapper": "%Y-Q{quarter}",
    "StartOfYearMapper": "%Y",
}
# FanOutMapper's downstream mapper when none is given, by the window's class name.
FAN_OUT_DEFAULTS = {"DayWindow": "StartOfHourMapper", "WeekWindow": "StartOfDayMapper",
                    "MonthWindow": "StartOfDayMapper", "QuarterWindow": "StartOfMonthMapper",
                    "YearWindow": "StartOfMonthMapper"}
CRON_KEY_FORMAT = "%Y-%m-%dT%H:%M:%S"   # CronPartitionTimetable's default key_format


@dataclass(frozen=True)
class Mapper:
    """A partition mapper call: its class, how it is written, and the keys it emits."""

    name: str                        # the class name: "StartOfHourMapper"
    text: str                        # "RollupMapper(StartOfDayMapper, DayWindow)"
    key_format: Optional[str]        # strftime format of every key it emits, when static
    fixed_key: Optional[str] = None  # the one key a FixedKeyMapper emits


@dataclass(frozen=True)
class PartitionedAsset:
    """An asset a PartitionedAssetTimetable listens to, and the mapper its events go through."""

    text: str                        # how the asset is written in the condition
    name: Optional[str]              # its name, when static
    uri: Optional[str]
    mapper: Optional[Mapper]         # None when not statically known


@dataclass(frozen=True)
class PartitionSchedule:
    """A DAG's partition timetable."""

    timetable: str                   # the class name
    cron: Optional[str] = None       # CronPartitionTimetable's cron, when static
    timezone: Optional[str] = None
    key_format: Optional[str] = None
    period: Optional[dt.timedelta] = None   # between two runs, when the cron's fires are evenly spaced
    condition: Optional[str] = None  # PartitionedAssetTimetable's assets, as written
    every_asset: bool = False        # the condition is an AND of assets: each must deliver the key
    assets: tuple[PartitionedAsset, ...] = ()   # when every asset and its mapper could be read
    default_mapper: Optional[Mapper] = None
    node: Optional[cst.CSTNode] = None

    @property
    def kind(self) -> str:
        """"cron", "assets" or "runtime"."""
        if self.timetable == "PartitionedAssetTimetable":
            return "assets"
        return "runtime" if self.timetable == "PartitionedAtRuntime" else "cron"

    def describe(self) -> str:
        """The schedule as `dagguard dags` lists it."""
        if self.kind == "cron":
            return f"{self.timetable}({self.cron or 'unknown'}, timezone={self.timezone or 'unknown'})"
        if self.kind == "runtime":
            return f"{self.timetable}()"
        mappers = {asset.mapper.text for asset in self.assets if asset.mapper is not None}
        if self.assets and len(mappers) > 1:
            mapped = ", ".join(f"{a.text}: {a.mapper.text if a.mapper else 'unknown'}" for a in self.assets)
        else:
            mapped = next(iter(mappers)) if mappers else (self.default_mapper.text if self.default_mapper else "unknown")
        return f"{self.timetable}({self.condition or 'unknown'}; {mapped})"

    def runs(self) -> str:
        """What a run of the DAG is given in place of a data interval, as `dagguard dags` lists it."""
        if self.kind == "cron":
            period = f" every {self.period}" if self.period is not None else ""
            return f"key {self.key_format or 'unknown'}{period}, no data interval"
        if self.kind == "runtime":
            return "keys set by the run (add_partitions), no data interval"
        return "key from the assets' events, no data interval"


def dag_partition_schedule(file: "FileModel", dag: "DagModel") -> Optional[PartitionSchedule]:
    """partition_schedule(dag), worked out once per DAG however many rules ask."""
    known: dict[int, Optional[PartitionSchedule]] = file.analyses.setdefault("partition_schedules", {})
    if id(dag) not in known:
        known[id(dag)] = partition_schedule(dag)
    return known[id(dag)]


def partition_schedule(dag: "DagModel") -> Optional[PartitionSchedule]:
    """The DAG's partition timetable, None when its schedule is not (surely) one."""
    arg = schedule_argument(dag)
    if arg is None:
        return None
    found = timetable_call(arg.node, Evaluator(arg.read_in(dag.scope)))
    if found is None:
        return None
    call, qual, evaluator = found
    if qual in names.CRON_PARTITION_TIMETABLES:
        return _cron_partitions(call, evaluator)
    if qual in names.PARTITIONED_AT_RUNTIME:
        return PartitionSchedule("PartitionedAtRuntime", node=call)
    if qual in names.PARTITIONED_ASSET_TIMETABLES:
        return _asset_partitions(call, evaluator)
    return None


def _cron_partitions(call: cst.Call, evaluator: Evaluator) -> PartitionSchedule:
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    cron = evaluator.value(first if first is not None else keyword_argument(call, "cron"))
    cron = PRESETS.get(cron, cron) if isinstance(cron, str) else None
    timezone = _static_text(keyword_argument(call, "timezone"), evaluator)
    key_node = keyword_argument(call, "key_format")
    key_format = CRON_KEY_FORMAT if key_node is None else _static_text(key_node, evaluator)
    return PartitionSchedule("CronPartitionTimetable", cron=cron, timezone=timezone, key_format=key_format,
                             period=_even_period(cron) if cron else None, node=call)


def _static_text(node: Optional[cst.BaseExpression], evaluator: Evaluator) -> Optional[str]:
    value = evaluator.value(node) if node is not None else None
    return value if isinstance(value, str) else None


def _even_period(cron: str) -> Optional[dt.timedelta]:
    """The time between fires when the cron fires at even steps (hourly, daily, weekly), else None."""
    try:
        from croniter import croniter

        fires = croniter(cron, dt.datetime(2026, 1, 1)).all_next(dt.datetime)
        times = [next(fires) for _ in range(8)]
    except Exception:   # croniter rejects it: Airflow does too, when the file loads
        return None
    steps = {later - earlier for earlier, later in zip(times, times[1:])}
    return steps.pop() if len(steps) == 1 else None


def _asset_partitions(call: cst.Call, evaluator: Evaluator) -> PartitionSchedule:
    condition = keyword_argument(call, "assets")
    default_node = keyword_argument(call, "default_partition_mapper")
    default = Mapper("IdentityMapper", "IdentityMapper", None) if default_node is None \
        else read_mapper(default_node, evaluator)
    text = _written(condition) if condition is not None else None
    members = _and_members(condition, evaluator) if condition is not None else None
    every_asset = members is not None and len(members) > 1
    if members is None:
        members = [condition] if condition is not None and _single_asset(condition, evaluator) else []
    config_node = keyword_argument(call, "partition_mapper_config")
    config = _mapper_config(config_node, evaluator) if config_node is not None else []
    assets: tuple[PartitionedAsset, ...] = ()
    if config is not None and not any(arg.star for arg in call.args):
        read = [_asset(member, evaluator, config, default) for member in members]
        assets = tuple(read) if all(a is not None for a in read) else ()   # type: ignore[misc]
    return PartitionSchedule("PartitionedAssetTimetable", condition=text, every_asset=every_asset and bool(assets),
                             assets=assets, default_mapper=default, node=call)


def _written(node: cst.CSTNode) -> str:
    """The expression's code on one line, without parentheses around it."""
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])  # type: ignore[attr-defined]
    return " ".join(cst.Module(body=[]).code_for_node(node).split())


def _and_members(node: cst.BaseExpression, evaluator: Evaluator, depth: int = 0) -> Optional[list[cst.BaseExpression]]:
    """The assets of `a & b & c` or `AssetAll(a, b, c)`, None when the condition is not an AND of assets."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, cst.BinaryOperation):
        if not isinstance(node.operator, cst.BitAnd):
            return None
        left = _and_members(node.left, evaluator, depth + 1) or _as_single(node.left, evaluator)
        right = _and_members(node.right, evaluator, depth + 1) or _as_single(node.right, evaluator)
        return left + right if left is not None and right is not None else None
    if isinstance(node, cst.Call) and evaluator.scope.resolves_to(node.func, names.ASSET_ALL_CLASSES):
        if any(arg.star or arg.keyword is not None for arg in node.args):
            return None
        found: list[cst.BaseExpression] = []
        for arg in node.args:
            part = _and_members(arg.value, evaluator, depth + 1) or _as_single(arg.value, evaluator)
            if part is None:
                return None
            found += part
        return found
    return None


def _as_single(node: cst.BaseExpression, evaluator: Evaluator) -> Optional[list[cst.BaseExpression]]:
    return [node] if _single_asset(node, evaluator) else None


def _single_asset(node: cst.BaseExpression, evaluator: Evaluator) -> bool:
    return _asset_identity(node, evaluator) is not None


def _asset_identity(node: cst.BaseExpression, evaluator: Evaluator,
                    depth: int = 0) -> Optional[tuple[Optional[str], Optional[str]]]:
    """(name, uri) of an asset written as `Asset(...)`, `Asset.ref(...)`, a module constant
    holding one, or an `@asset` function; None for anything else or when not static."""
    if depth > MAX_DEPTH:
        return None
    scope = evaluator.scope
    if isinstance(node, cst.Name):
        binding = scope.single(node.value)
        if isinstance(binding, ConstantBinding):
            return _asset_identity(binding.value, evaluator, depth + 1)
        if isinstance(binding, FunctionBinding):
            return _asset_function_identity(binding.node, scope, evaluator)
        return None
    if not isinstance(node, cst.Call):
        return None
    qual = scope.qualname(node.func)
    if qual in names.ASSET_REF_CALLS:
        name, uri = keyword_argument(node, "name"), keyword_argument(node, "uri")
        name_value, uri_value = _static_text(name, evaluator), _static_text(uri, evaluator)
        return (name_value, uri_value) if (name_value or uri_value) and len(node.args) == 1 else None
    if qual not in names.ASSET_CLASSES or not qual.endswith(".Asset"):
        return None
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    name_node = positional[0] if positional else keyword_argument(node, "name")
    uri_node = positional[1] if len(positional) > 1 else keyword_argument(node, "uri")
    name, uri = _static_text(name_node, evaluator), _static_text(uri_node, evaluator)
    if (name_node is not None and name is None) or (uri_node is not None and uri is None) or not (name or uri):
        return None
    return (name or uri, uri or name)   # Airflow fills either from the other


def _asset_function_identity(function: cst.FunctionDef, scope: Scope,
                             evaluator: Evaluator) -> Optional[tuple[Optional[str], Optional[str]]]:
    for decorator in function.decorators:
        if not scope.resolves_to(decorator_target(decorator), names.ASSET_DECORATORS):
            continue
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            return None
        name_node, uri_node = keyword_argument(call, "name"), keyword_argument(call, "uri")
        name = function.name.value if name_node is None else _static_text(name_node, evaluator)
        uri = name if uri_node is None else _static_text(uri_node, evaluator)
        return (name, uri) if name is not None else None
    return None


def _mapper_config(node: cst.BaseExpression, evaluator: Evaluator
                   ) -> Optional[list[tuple[tuple[Optional[str], Optional[str]], Optional[Mapper]]]]:
    """partition_mapper_config's entries, by asset identity; None when it cannot be read whole."""
    if not isinstance(node, cst.Dict):
        return None
    entries = []
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            return None   # `**more`
        identity = _asset_identity(element.key, evaluator)
        if identity is None:
            return None
        entries.append((identity, read_mapper(element.value, evaluator)))
    return entries


def _asset(node: cst.BaseExpression, evaluator: Evaluator, config: list, default: Optional[Mapper]
           ) -> Optional[PartitionedAsset]:
    """The asset and the mapper Airflow picks for it: its config entry by name, else by uri,
    else the default (PartitionedAssetTimetable.get_partition_mapper)."""
    identity = _asset_identity(node, evaluator)
    if identity is None:
        return None
    name, uri = identity
    by_name = [m for (n, _), m in config if name is not None and n == name]
    by_uri = [m for (_, u), m in config if uri is not None and u == uri]
    if by_name or by_uri:
        mapper: Optional[Mapper] = by_name[-1] if by_name else by_uri[-1]
    elif config and (name is None or uri is None):
        mapper = None   # `Asset.ref(name=...)`: an entry keyed by its unknown URI may be its own
    else:
        mapper = default
    return PartitionedAsset(_written(node), name, uri, mapper)


def read_mapper(node: cst.BaseExpression, evaluator: Evaluator, depth: int = 0) -> Optional[Mapper]:
    """The partition mapper a call of one of Airflow's mapper classes makes, through module
    constants; None for anything else (a custom mapper, a value not static)."""
    found = timetable_call(node, evaluator, depth) if depth <= MAX_DEPTH else None
    if found is None:
        return None
    call, qual, evaluator = found
    name = names.PARTITION_MAPPERS.get(qual)
    if name is None:
        return None
    parts = [_part_name(a.value, evaluator, depth) for a in call.args if not a.star]
    text = f"{name}({', '.join(p for p in parts if p)})" if any(parts) else name
    return Mapper(name, text, _key_format(name, call, evaluator, depth), _fixed_key(name, call, evaluator))


def _part_name(node: cst.BaseExpression, evaluator: Evaluator, depth: int) -> Optional[str]:
    """How a mapper's argument that is itself a mapper or a window is shown: its class."""
    inner = read_mapper(node, evaluator, depth + 1)
    if inner is not None:
        return inner.text
    found = timetable_call(node, evaluator, depth + 1) if depth < MAX_DEPTH else None
    if found is not None and found[1].startswith("airflow.sdk") and found[1].endswith("Window"):
        return found[1].rsplit(".", 1)[-1]
    return None


def _key_format(name: str, call: cst.Call, evaluator: Evaluator, depth: int) -> Optional[str]:
    if name in TEMPORAL_KEY_FORMATS:
        given = keyword_argument(call, "output_format")
        if given is None:
            return TEMPORAL_KEY_FORMATS[name]
        value = evaluator.value(given)
        return value if isinstance(value, str) else (TEMPORAL_KEY_FORMATS[name] if value is None else None)
    if name == "RollupMapper":   # its keys are its upstream mapper's
        upstream = keyword_argument(call, "upstream_mapper")
        inner = read_mapper(upstream, evaluator, depth + 1) if upstream is not None else None
        return inner.key_format if inner is not None else None
    if name == "FanOutMapper":
        downstream = keyword_argument(call, "downstream_mapper")
        if downstream is not None:
            inner = read_mapper(downstream, evaluator, depth + 1)
            return inner.key_format if inner is not None else None
        window = keyword_argument(call, "window")
        found = timetable_call(window, evaluator, depth + 1) if window is not None else None
        default = FAN_OUT_DEFAULTS.get(found[1].rsplit(".", 1)[-1]) if found is not None else None
        return TEMPORAL_KEY_FORMATS.get(default) if default is not None else None
    return None


def _fixed_key(name: str, call: cst.Call, evaluator: Evaluator) -> Optional[str]:
    if name != "FixedKeyMapper":
        return None
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    return _static_text(first if first is not None else keyword_argument(call, "downstream_key"), evaluator)


# strftime directives of a fixed width of digits; a format using any other (%B, %A, %p, %z...)
# has no shape dagguard compares.
_DIGIT_DIRECTIVES = {"Y": 4, "G": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2, "V": 2, "U": 2, "W": 2,
                     "j": 3, "u": 1, "w": 1, "y": 2, "f": 6}


def key_shape(mapper: Mapper) -> Optional[tuple[Optional[str], ...]]:
    """What every key the mapper emits looks like, one entry per character: the character, or
    None for any digit (`%Y-%m` is four digits, "-", two digits); a FixedKeyMapper's key itself.
    None when not statically known or not of a fixed width."""
    if mapper.fixed_key is not None:
        return tuple(mapper.fixed_key)
    if mapper.key_format is None:
        return None
    text = mapper.key_format.replace("{quarter}", "%q")
    shape: list[Optional[str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "%":
            shape.append(char)
            index += 1
            continue
        directive = text[index + 1:index + 2]
        if directive == "%":
            shape.append("%")
        elif directive == "q":
            shape.append(None)
        elif directive in _DIGIT_DIRECTIVES:
            shape.extend([None] * _DIGIT_DIRECTIVES[directive])
        else:
            return None
        index += 2
    return tuple(shape)


def shapes_can_match(first: tuple[Optional[str], ...], other: tuple[Optional[str], ...]) -> bool:
    """Can a key of one shape equal a key of the other?"""
    if len(first) != len(other):
        return False
    return all(a == b or (a is None and (b is None or b.isdigit())) or (b is None and a.isdigit())
               for a, b in zip(first, other))


def never_matching(schedule: PartitionSchedule) -> Optional[tuple[PartitionedAsset, PartitionedAsset]]:
    """Two assets of an AND whose mapped keys can never be equal (shapes of different widths or
    literals, different fixed keys), so that no partition ever has an event from both and
    Airflow never triggers the DAG (assets/manager.py keys its pending runs by the mapped key).
    None otherwise."""
    if not schedule.every_asset:
        return None
    shapes = [(asset, key_shape(asset.mapper)) for asset in schedule.assets if asset.mapper is not None]
    if len(shapes) != len(schedule.assets):
        return None
    known = [(asset, shape) for asset, shape in shapes if shape is not None]
    for index, (first, first_shape) in enumerate(known):
        for other, shape in known[index + 1:]:
            if not shapes_can_match(first_shape, shape):
                return first, other
    return None
