"""The cluster policy's settings: `[tool.dagguard]` keys from a `dagguard.toml` near the DAG file
and from `AIRFLOW__DAGGUARD__<KEY>` environment variables (which win), validated by
dagguard.config so a bad key or value names the key and where it was set.

The policy's own keys: `mode` ("enforce": errors refuse the DAG; "warn": everything is only
logged) and `severity` (a table of code or prefix -> "error"/"warning", the most specific
wins). `enabled` is read from the environment by the plugin entry (plugin.py) only.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional

from dagguard.config import ConfigError, Settings, known_keys, parse_table, read_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_NAME = "dagguard.toml"
ENV_PREFIX = "AIRFLOW__DAGGUARD__"
MODES = ("enforce", "warn")
SEVERITIES = ("error", "warning")
POLICY_KEYS = ("mode", "severity")
ENV_ONLY_KEYS = ("enabled",)
# Keys whose environment value may be a comma-separated list: AIRFLOW__DAGGUARD__IGNORE=DG102,DG103.
_CODE_LISTS = frozenset({"select", "ignore", "extend-select", "extend-ignore", "exclude", "src",
                         "write-task-patterns"})


@dataclass(frozen=True)
class PolicySettings:
    """What the policy runs with: the linter's settings (selection, per-file-ignores,
    max-catchup-runs) and the policy's own mode and severity overrides."""

    lint: Settings
    mode: str = "enforce"
    severity: tuple[tuple[str, str], ...] = ()   # (code or prefix, "error"/"warning")
    config_path: Optional[Path] = None           # the dagguard.toml used, if any

    def severity_of(self, code: str, default: str) -> str:
        """The severity `code` has here: the most specific matching override, else `default`."""
        matching = [(len(prefix), level) for prefix, level in self.severity if code.startswith(prefix)]
        return max(matching)[1] if matching else default


def find_config(file: Path, root: Optional[Path]) -> Optional[Path]:
    """The nearest dagguard.toml from the DAG file's folder up to `root` (the DAGs folder or the
    bundle's root) inclusive; outside `root`, only the file's own folder is looked at."""
    folder = file.resolve().parent
    root = root.resolve() if root is not None else None
    stops = [folder]
    if root is not None and (folder == root or root in folder.parents):
        stops = [folder, *[p for p in folder.parents if p == root or root in p.parents]]
    for candidate in stops:
        config = candidate / CONFIG_NAME
        if config.is_file():
            return config
    return None


def load_settings(file: Path, root: Optional[Path], environ: Mapping[str, str] = os.environ) -> PolicySettings:
    """The settings for the DAG defined in `file`; a bad key or value is a ConfigError naming it
    and the file (or the environment variable) it came from."""
    config = find_config(file, root)
    table: dict[str, Any] = {}
    origins: dict[str, str] = {}
    if config is not None:
        stat = config.stat()
        for key, value in _file_table(config, stat.st_mtime_ns, stat.st_size).items():
            table[key], origins[key] = value, str(config)
    for key, (variable, value) in _environment_table(environ).items():
        table[key], origins[key] = value, variable
    return _validate(table, origins, config)


@lru_cache(maxsize=64)   # every DAG of a folder asks; the file is read again when it changes
def _file_table(config: Path, mtime_ns: int, size: int) -> Mapping[str, Any]:
    return dict(read_table(config))


def _environment_table(environ: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    found = {}
    for variable, text in environ.items():
        if not variable.startswith(ENV_PREFIX) or variable.endswith(("_CMD", "_SECRET")):
            continue
        key = variable[len(ENV_PREFIX):].lower().replace("_", "-")
        if key in ENV_ONLY_KEYS:
            continue
        found[key] = (variable, _environment_value(key, text))
    return found


def _environment_value(key: str, text: str) -> Any:
    """A TOML value (`500`, `["DG1"]`, `{ DG102 = "error" }`), Airflow's `True`/`False`, a
    comma-separated list for the code-list keys, else the text itself."""
    stripped = text.strip()
    if stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    try:
        return tomllib.loads(f"value = {stripped}")["value"]
    except tomllib.TOMLDecodeError:
        pass
    if key in _CODE_LISTS:
        return [part.strip() for part in stripped.split(",") if part.strip()]
    return stripped


def _validate(table: Mapping[str, Any], origins: Mapping[str, str], config: Optional[Path]) -> PolicySettings:
    lint: dict[str, Any] = {}
    mode, severity = "enforce", ()
    known = sorted({*known_keys(), *POLICY_KEYS})
    for key, value in table.items():
        where = origins[key]
        if key == "mode":
            mode = _mode(value, where)
        elif key == "severity":
            severity = _severity(value, where)
        elif key not in known:
            raise ConfigError(f"{where}: unknown key {key!r} in [tool.dagguard] (known keys: {', '.join(known)})")
        else:
            # Validated one key at a time, so the message names the place that key came from.
            parse_table({key: value}, Path(where))
            lint[key] = value
    # Without a file, per-file-ignores match from the working folder, as the linter's do.
    settings = parse_table(lint, config) if config is not None else replace(parse_table(lint, Path("-")),
                                                                            config_path=None)
    return PolicySettings(settings, mode, severity, config)


def _mode(value: Any, where: str) -> str:
    if value not in MODES:
        raise ConfigError(f"{where}: [tool.dagguard] mode must be \"enforce\" or \"warn\", got {value!r}")
    return value


def _severity(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    from dagguard.config import selector_error

    if not isinstance(value, dict):
        raise ConfigError(f'{where}: [tool.dagguard] severity must be a table of code = "error" or "warning"')
    found = []
    for selector, level in value.items():
        code = str(selector).strip().upper()
        problem = selector_error(code)
        if problem:
            raise ConfigError(f"{where}: [tool.dagguard] severity.{selector}: {problem}")
        if level not in SEVERITIES:
            raise ConfigError(f"{where}: [tool.dagguard] severity.{selector} must be \"error\" or \"warning\", "
                              f"got {level!r}")
        found.append((code, level))
    return tuple(found)
