"""Plain coercion of plain CLI options, so that `dagguard check` does not import pydantic.

typer 0.2x coerces every option through a pydantic TypeAdapter: importing pydantic costs
about 0.1 s, a fifth of pre-commit's budget for one file. Options of type str, Path, int or
bool (or lists of them) with no constraints are converted here; anything else (choices, ranges,
path checks, custom parsers) still goes through typer's own coercion. On a typer without that
machinery this does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, get_args, get_origin

_PLAIN_TYPES: dict[Any, Callable[[Any], Any]] = {str: str, Path: Path, int: int, bool: bool}
# ParameterInfo fields that ask typer for more than a conversion.
_CONSTRAINTS = ("parser", "min", "max", "formats", "exists", "resolve_path", "allow_dash", "path_type")


def _converter(annotation: Any) -> Callable[[Any], Any] | None:
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        return _PLAIN_TYPES.get(item)
    return _PLAIN_TYPES.get(annotation)


def install() -> None:
    """Route typer's coercion of plain options around pydantic; idempotent."""
    try:
        from typer import _coercion, core
        from typer._click.exceptions import BadParameter
    except ImportError:  # an older typer, which coerces through click and never imports pydantic
        return
    original = getattr(core, "build_runtime_param", None)
    if original is None or getattr(original, "_dagguard_plain", False):
        return

    @dataclass(frozen=True)
    class PlainRuntimeParam(_coercion.RuntimeParam):
        convert: Callable[[Any], Any] = str

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            values = value if isinstance(value, (list, tuple)) else None
            try:
                if values is not None:
                    return [self._one(item) for item in values]
                return self._one(value)
            except (TypeError, ValueError):
                raise BadParameter(f"{value!r} is not a valid {getattr(self.annotation, '__name__', 'value')}",
                                   ctx=ctx, param=param) from None

        def _one(self, value: Any) -> Any:
            if isinstance(value, bytes):
                value = value.decode()
            if self.convert is bool and isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on", "y", "t")
            return self.convert(value)

    def build_runtime_param(descriptor: Any) -> Any:
        info = descriptor.parameter_info
        convert = _converter(descriptor.annotation)
        constrained = any(getattr(info, name, None) for name in _CONSTRAINTS)
        if convert is None or constrained or descriptor.file_annotation is not None:
            return original(descriptor)
        return PlainRuntimeParam(parameter_info=info, annotation=descriptor.annotation, convert=convert)

    build_runtime_param._dagguard_plain = True  # type: ignore[attr-defined]
    core.build_runtime_param = build_runtime_param
