"""Find and validate `[tool.dagguard]` into a frozen Settings object."""

from __future__ import annotations

import datetime
import json
import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the key and the file."""


@dataclass(frozen=True)
class DeclaredFactory:
    """`[tool.dagguard.dag-factories."pkg.Name"]`: a callable that makes a DAG, declared by hand."""

    qualname: str
    defaults: tuple[tuple[str, Any], ...] = ()    # DAG arguments it sets unless the caller passes them
    arguments: tuple[tuple[str, str], ...] = ()   # its parameter -> the DAG argument it becomes
    declared_in: Optional[Path] = None


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selectors, as ruff layers them: the config file, then the command line.

    A layer with `select` starts over; one without it adds and removes rules from the layers
    before it.
    """

    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("DG",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    # Command-line selections, applied after the config's (ruff's --select/--extend-select...).
    overrides: tuple[RuleSelection, ...] = ()
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False    # exclude (and ignore files) apply to paths given explicitly too
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    airflow_version: str = "3"
    # Where an airflow-version the config does not set was read (airflow_pin.py), for --show-settings.
    airflow_version_from: Optional[str] = None
    max_catchup_runs: int = 500
    create_cron_data_intervals: bool = False
    # The values DG102/DG103's fixes write.
    fix_max_active_runs: int = 1
    fix_max_active_tasks: int = 4
    write_task_patterns: tuple[str, ...] = (
        "export", "load", "write", "sink", "upload", "publish", "sync", "insert", "merge", "push",
    )
    src: tuple[str, ...] = ()
    # Import name -> folder (relative to the config file): `acme_pipelines` is the folder `.`.
    packages: tuple[tuple[str, str], ...] = ()
    dag_factories: tuple[DeclaredFactory, ...] = ()
    cache_dir: Optional[str] = None   # relative to the config file's folder; engine/cache.py
    config_path: Optional[Path] = field(default=None, compare=False)

    @property
    def root(self) -> Path:
        """The folder relative to which exclude and per-file-ignores globs match."""
        return self.config_path.parent if self.config_path else Path.cwd()

    @property
    def rule_selections(self) -> tuple[RuleSelection, ...]:
        """The config's selection, then the command line's."""
        config = RuleSelection(self.select, self.extend_select, self.ignore + self.extend_ignore)
        return (config, *self.overrides)

    def with_overrides(self, **changes: Any) -> "Settings":
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({k: v for k, v in changes.items() if v is not None})
        return Settings(**values)

    def with_selection(self, selection: RuleSelection) -> "Settings":
        """These settings with a command-line selection applied on top."""
        return self.with_overrides(overrides=self.overrides + (selection,))


ALL_SELECTOR = "ALL"


def selector_error(selector: str) -> Optional[str]:
    """Why `selector` selects no rule (None when it is `ALL` or a prefix of a rule code), as ruff
    rejects unknown selectors: a typo must not turn the linter off."""
    from dagguard.rule_codes import RULE_CODES  # the codes alone: no rule module is imported

    # A selector is the linter (DG) or a prefix of a code after it: "D" is not one, as in ruff.
    if selector == ALL_SELECTOR or (selector.startswith("DG") and any(c.startswith(selector) for c in RULE_CODES)):
        return None
    return (f"unknown rule selector {selector!r} (codes run {min(RULE_CODES)}-{max(RULE_CODES)}; "
            "`dagguard rules` lists them)")


def command_line_selectors(option: str, values: Optional[list[str]]) -> Optional[tuple[str, ...]]:
    """Comma-separated selectors from a repeatable option; an unknown one is a ConfigError."""
    if not values:
        return None
    selectors = tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())
    if not selectors:  # `--select ""` from an unset CI variable must not turn every rule off
        raise ConfigError(f"{option}: no rule selector given")
    for selector in selectors:
        problem = selector_error(selector)
        if problem:
            raise ConfigError(f"{option}: {problem}")
    return selectors



def command_line_selection(select: Optional[list[str]], extend_select: Optional[list[str]],
                           ignore: Optional[list[str]], extend_ignore: Optional[list[str]]) -> RuleSelection:
    """The selection `--select`, `--extend-select`, `--ignore` and `--extend-ignore` make (what
    `check` puts on top of the config; the language server the same, so cache keys agree)."""
    return RuleSelection(
        select=command_line_selectors("--select", select),
        extend_select=command_line_selectors("--extend-select", extend_select) or (),
        ignore=(command_line_selectors("--ignore", ignore) or ())
        + (command_line_selectors("--extend-ignore", extend_ignore) or ()),
    )


def parse_now(value: Optional[str]) -> Optional[datetime.datetime]:
    """`--now`'s ISO 8601 date-time, UTC when it has no offset; a bad one is a ConfigError."""
    if value is None:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--now: {value!r} is not an ISO 8601 date-time (e.g. 2026-11-30T12:00:00Z)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)

def _codes(key: str, path: Path) -> Callable[[Any], tuple[str, ...]]:
    def convert(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be a list of rule codes or prefixes")
        selectors = tuple(v.strip().upper() for v in value)
        for selector in selectors:
            problem = selector_error(selector)
            if problem:
                raise ConfigError(f"{path}: [tool.dagguard] {key}: {problem}")
        return selectors
    return convert


def _strings(key: str, path: Path) -> Callable[[Any], tuple[str, ...]]:
    def convert(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be a list of strings")
        return tuple(value)
    return convert


def _airflow_version(path: Path) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        text = str(value)
        major = text.split(".", 1)[0]
        if major not in ("2", "3"):
            raise ConfigError(f"{path}: [tool.dagguard] airflow-version must be \"2\" or \"3\", got {value!r}")
        return major
    return convert


def _positive_int(key: str, path: Path) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be a positive integer, got {value!r}")
        return value
    return convert


def _boolean(key: str, path: Path) -> Callable[[Any], bool]:
    def convert(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be true or false, got {value!r}")
        return value
    return convert


def _folder(key: str, path: Path) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be a folder path, got {value!r}")
        return value
    return convert


def _packages(path: Path) -> Callable[[Any], tuple[tuple[str, str], ...]]:
    def convert(value: Any) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, dict):
            raise ConfigError(f'{path}: [tool.dagguard] packages must be a table of "import_name" = "folder"')
        base = path.parent if path.name != "--config" else Path.cwd()
        found = []
        for name, folder in value.items():
            where = f"{path}: [tool.dagguard] packages.{name}"
            if not all(part.isidentifier() for part in name.split(".")):
                raise ConfigError(f"{where}: {name!r} is not an import name such as \"acme_pipelines\"")
            if not isinstance(folder, str) or not folder.strip():
                raise ConfigError(f"{where} must be a folder path relative to the config file, got {folder!r}")
            if not (base / folder).is_dir():
                raise ConfigError(f"{where}: the folder {folder!r} does not exist (relative to {base})")
            found.append((name, folder))
        return tuple(found)
    return convert


def _per_file_ignores(path: Path) -> Callable[[Any], tuple[tuple[str, tuple[str, ...]], ...]]:
    def convert(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [tool.dagguard] per-file-ignores must be a table of glob = [codes]")
        return tuple((glob, _codes(f"per-file-ignores.{glob!r}", path)(codes)) for glob, codes in value.items())
    return convert


_FACTORY_KEYS = ("defaults", "arguments")


def _dag_factories(path: Path) -> Callable[[Any], tuple[DeclaredFactory, ...]]:
    def convert(value: Any) -> tuple[DeclaredFactory, ...]:
        if not isinstance(value, dict):
            raise ConfigError(f'{path}: [tool.dagguard] dag-factories must be a table of "pkg.Name" = {{ ... }}')
        return tuple(_declared_factory(name, entry, path) for name, entry in value.items())
    return convert


def _declared_factory(name: str, entry: Any, path: Path) -> DeclaredFactory:
    where = f'{path}: [tool.dagguard.dag-factories."{name}"]'
    parts = name.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise ConfigError(f"{where}: the name must be a dotted import path such as \"pkg.module.make_dag\"")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with `defaults` and/or `arguments`")
    for key in entry:
        if key not in _FACTORY_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known keys: {', '.join(_FACTORY_KEYS)})")
    defaults = entry.get("defaults", {})
    arguments = entry.get("arguments", {})
    if not isinstance(defaults, dict) or not all(k.isidentifier() for k in defaults):
        raise ConfigError(f"{where}: defaults must be a table of DAG argument = value")
    if not isinstance(arguments, dict) or not all(
            k.isidentifier() and isinstance(v, str) and v.isidentifier() for k, v in arguments.items()):
        raise ConfigError(f'{where}: arguments must be a table of parameter = "dag_argument"')
    return DeclaredFactory(name, tuple(defaults.items()), tuple(arguments.items()), path)


def _converters(path: Path) -> Mapping[str, tuple[str, Callable[[Any], Any]]]:
    return {
        "select": ("select", _codes("select", path)),
        "ignore": ("ignore", _codes("ignore", path)),
        "extend-select": ("extend_select", _codes("extend-select", path)),
        "extend-ignore": ("extend_ignore", _codes("extend-ignore", path)),
        "exclude": ("exclude", _strings("exclude", path)),
        "respect-gitignore": ("respect_gitignore", _boolean("respect-gitignore", path)),
        "force-exclude": ("force_exclude", _boolean("force-exclude", path)),
        "per-file-ignores": ("per_file_ignores", _per_file_ignores(path)),
        "airflow-version": ("airflow_version", _airflow_version(path)),
        "max-catchup-runs": ("max_catchup_runs", _positive_int("max-catchup-runs", path)),
        "create-cron-data-intervals": ("create_cron_data_intervals", _boolean("create-cron-data-intervals", path)),
        "write-task-patterns": ("write_task_patterns", _strings("write-task-patterns", path)),
        "src": ("src", _strings("src", path)),
        "packages": ("packages", _packages(path)),
        "dag-factories": ("dag_factories", _dag_factories(path)),
        "fix-max-active-runs": ("fix_max_active_runs", _positive_int("fix-max-active-runs", path)),
        "fix-max-active-tasks": ("fix_max_active_tasks", _positive_int("fix-max-active-tasks", path)),
        "cache-dir": ("cache_dir", _folder("cache-dir", path)),
    }


def known_keys() -> tuple[str, ...]:
    """The keys `[tool.dagguard]` accepts (the cluster policy adds its own to them)."""
    return tuple(_converters(Path("-")))


def parse_table(table: Mapping[str, Any], path: Path) -> Settings:
    """Validate a `[tool.dagguard]` table read from `path`."""
    converters = _converters(path)
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in converters:
            known = ", ".join(sorted(converters))
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.dagguard] (known keys: {known})")
        attr, convert = converters[key]
        values[attr] = convert(raw)
    return Settings(config_path=path, **values)


def load_file(path: Path, overrides: Mapping[str, Any] = {}) -> Settings:
    """Settings from an explicit config file (a pyproject.toml or a bare dagguard table), with
    `--config KEY=VALUE` overrides replacing its keys."""
    return parse_table({**read_table(path), **overrides}, path.resolve())


def read_table(path: Path) -> Mapping[str, Any]:
    """The raw `[tool.dagguard]` table of a config file (a pyproject.toml or a bare table)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if path.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table ([tool.dagguard]), not {type(tool).__name__}")
        table = tool.get("dagguard", {})
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.dagguard] must be a table")
    return table


def parse_override(text: str) -> Mapping[str, Any]:
    """A `--config 'KEY = VALUE'` override: one TOML key/value pair of `[tool.dagguard]`."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config {text!r}: neither an existing config file nor a TOML "
                          f"KEY = VALUE pair ({exc})") from None
    parse_table(table, Path("--config"))  # an unknown key or a bad value is named as the override's
    return table


def split_config_options(values: list[str]) -> tuple[Optional[Path], Mapping[str, Any]]:
    """ruff's `--config`: each value is a path to a config file (at most one) or a KEY = VALUE
    override; overrides win over every file."""
    path: Optional[Path] = None
    overrides: dict[str, Any] = {}
    for value in values:
        if "=" not in value or Path(value).is_file():
            if path is not None:
                raise ConfigError(f"--config: two config files given ({path}, {value}); give at most one")
            path = Path(value)
        else:
            overrides.update(parse_override(value))
    return path, overrides


def find_pyproject(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.dagguard] table, from `start` upwards."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(f"{pyproject}: cannot read it: {exc.strerror or exc}") from None
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{pyproject}: not valid TOML: {exc}") from None
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "dagguard" in tool:
                return pyproject
    return None


def discover_settings(paths: list[Path], config: Optional[Path] = None,
                      overrides: Mapping[str, Any] = {}) -> Settings:
    """Settings from `--config`, else the nearest pyproject.toml above the checked paths, with
    `overrides` (`--config KEY=VALUE`) on top."""
    anchor = _common_folder(paths) if paths else Path.cwd()
    found = config if config is not None else find_pyproject(anchor)
    if found is not None:
        table = {**read_table(found), **overrides}
        settings = parse_table(table, found.resolve())
    else:
        table = dict(overrides)
        settings = replace(parse_table(overrides, Path("--config")), config_path=None) if overrides else Settings()
    if "airflow-version" in table:
        return settings
    return with_airflow_pin(settings, anchor)


def with_airflow_pin(settings: Settings, anchor: Path) -> Settings:
    """`settings` with the Airflow major version the project around `anchor` pins, when it pins
    one (airflow_pin.py); the configured default otherwise."""
    from dagguard.airflow_pin import find_airflow_pin

    pin = find_airflow_pin(anchor)
    if pin is None:
        return settings
    return replace(settings, airflow_version=pin.major, airflow_version_from=pin.source)


def _common_folder(paths: list[Path]) -> Path:
    # Strings, and each folder resolved once: pre-commit and CI pass thousands of file names.
    resolved: dict[str, str] = {}
    return Path(os.path.commonpath([_real_folder(str(p), resolved) for p in paths]))


def _real_folder(path: str, resolved: dict[str, str]) -> str:
    """The folder `path` is (a folder) or is in, with symlinks resolved (the file's own too)."""
    if os.path.islink(path) or os.path.isdir(path):
        real = os.path.realpath(path)
        return real if os.path.isdir(real) else os.path.dirname(real)
    folder = os.path.dirname(path) or "."
    if folder not in resolved:
        resolved[folder] = os.path.realpath(folder)
    return resolved[folder]


def _toml_value(value: Any, table: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime.date, datetime.time)):   # TOML dates (dag-factories defaults)
        return value.isoformat()
    if table:
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value) + " }" if value else "{}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


_TABLE_SETTINGS = ("per_file_ignores", "packages")


def describe(settings: Settings, enabled: Iterable[str]) -> str:
    """`--show-settings`: the resolved settings as a `[tool.dagguard]` table, and the rules they enable."""
    lines = [f"# config file: {settings.config_path or 'none (defaults)'}", "[tool.dagguard]"]
    for key, (attr, _) in _converters(Path("-")).items():
        if attr != "dag_factories" and getattr(settings, attr) is not None:  # cache-dir unset: the default
            line = f"{key} = {_toml_value(getattr(settings, attr), table=attr in _TABLE_SETTINGS)}"
            if attr == "airflow_version" and settings.airflow_version_from is not None:
                line += f"   # the project's pin: {settings.airflow_version_from}"
            lines.append(line)
    for declared in settings.dag_factories:   # sub-tables come after the table's own keys
        lines.append(f'[tool.dagguard.dag-factories."{declared.qualname}"]')
        lines.append(f"defaults = {_toml_value(declared.defaults, table=True)}")
        lines.append(f"arguments = {_toml_value(declared.arguments, table=True)}")
    lines.append(f"# enabled rules: {', '.join(sorted(enabled))}")
    return "\n".join(lines) + "\n"
