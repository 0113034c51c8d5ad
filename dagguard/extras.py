"""Optional dependencies: when one is missing, name the extra that installs it."""

from __future__ import annotations

import importlib


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the pip extra that installs it."""


def install_hint(extra: str) -> str:
    """The command that installs an extra of dagguard."""
    return f"pip install 'dagguard[{extra}]'"


def require_module(module: str, *, extra: str, needed_by: str) -> None:
    """Import `module`, or raise MissingExtraError saying that `needed_by` needs the `extra`."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != module.split(".")[0]:
            raise  # something else is missing: a broken installation, not a missing extra
        raise MissingExtraError(f"{needed_by} needs the {module} package: {install_hint(extra)}") from None
