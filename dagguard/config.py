"""Find and validate `[tool.dagguard]` into a frozen Settings object."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the key and the file."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("DG",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    airflow_version: str = "3"
    max_catchup_runs: int = 500
    create_cron_data_intervals: bool = False
    # The values DG102/DG103's fixes write.
    fix_max_active_runs: int = 1
    fix_max_active_tasks: int = 4
    write_task_patterns: tuple[str, ...] = (
        "export", "load", "write", "sink", "upload", "publish", "sync", "insert", "merge", "push",
    )
    config_path: Optional[Path] = field(default=None, compare=False)

    @property
    def root(self) -> Path:
        """The folder relative to which exclude and per-file-ignores globs match."""
        return self.config_path.parent if self.config_path else Path.cwd()

    def with_overrides(self, **changes: Any) -> "Settings":
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({k: v for k, v in changes.items() if v is not None})
        return Settings(**values)


def _codes(key: str, path: Path) -> Callable[[Any], tuple[str, ...]]:
    def convert(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.dagguard] {key} must be a list of rule codes or prefixes")
        for code in value:
            if not code.upper().startswith("DG"):
                raise ConfigError(f"{path}: [tool.dagguard] {key}: {code!r} is not a dagguard code (DGnnn)")
        return tuple(v.upper() for v in value)
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


def _per_file_ignores(path: Path) -> Callable[[Any], tuple[tuple[str, tuple[str, ...]], ...]]:
    def convert(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: [tool.dagguard] per-file-ignores must be a table of glob = [codes]")
        return tuple((glob, _codes(f"per-file-ignores.{glob!r}", path)(codes)) for glob, codes in value.items())
    return convert


def _converters(path: Path) -> Mapping[str, tuple[str, Callable[[Any], Any]]]:
    return {
        "select": ("select", _codes("select", path)),
        "ignore": ("ignore", _codes("ignore", path)),
        "exclude": ("exclude", _strings("exclude", path)),
        "per-file-ignores": ("per_file_ignores", _per_file_ignores(path)),
        "airflow-version": ("airflow_version", _airflow_version(path)),
        "max-catchup-runs": ("max_catchup_runs", _positive_int("max-catchup-runs", path)),
        "create-cron-data-intervals": ("create_cron_data_intervals", _boolean("create-cron-data-intervals", path)),
        "write-task-patterns": ("write_task_patterns", _strings("write-task-patterns", path)),
        "fix-max-active-runs": ("fix_max_active_runs", _positive_int("fix-max-active-runs", path)),
        "fix-max-active-tasks": ("fix_max_active_tasks", _positive_int("fix-max-active-tasks", path)),
    }


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


def load_file(path: Path) -> Settings:
    """Settings from an explicit config file (a pyproject.toml or a bare dagguard table)."""
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
    return parse_table(table, path.resolve())


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


def discover_settings(paths: list[Path], config: Optional[Path] = None) -> Settings:
    """Settings from `--config`, else the nearest pyproject.toml above the checked paths."""
    if config is not None:
        return load_file(config)
    anchor = _common_folder(paths) if paths else Path.cwd()
    found = find_pyproject(anchor)
    return load_file(found) if found else Settings()


def _common_folder(paths: list[Path]) -> Path:
    resolved = [p.resolve() for p in paths]
    folders = [p if p.is_dir() else p.parent for p in resolved]
    common = folders[0]
    for folder in folders[1:]:
        while common not in (folder, *folder.parents):
            common = common.parent
    return common
