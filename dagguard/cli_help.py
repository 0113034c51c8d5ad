"""`--help` as ruff (clap) prints it: plain text, `--option <VALUE>`, `[PATHS]...`, no type names.

typer's own help names Python types (`<list[Path]>`, `<bool>` on flags, `{code}`) and, with rich
markup, eats `[tool.dagguard]` as a style tag.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand


def _value_name(param: Any) -> str:
    return param.metavar or param.name.upper()


def _argument_label(param: Any) -> str:
    name = _value_name(param)
    if param.nargs == -1:
        return f"[{name}]..."
    return f"<{name}>" if param.required else f"[{name}]"


def _option_label(param: Any) -> str:
    names = [*param.opts, *param.secondary_opts]
    shorts = [n for n in names if not n.startswith("--")]
    longs = [n for n in names if n.startswith("--")]
    label = ", ".join([*shorts, longs[0]]) if longs else ", ".join(shorts)
    if not shorts:
        label = "    " + label  # long options line up after `-q, `, as in clap
    if not (param.is_flag or param.count):
        label += f" <{_value_name(param)}>"
    return label


def _option_help(param: Any) -> str:
    text = param.help or ""
    default = param.default
    if param.show_default and default not in (None, False, (), []) and not callable(default):
        text += f" [default: {default}]"
    return text


class RuffStyleCommand(TyperCommand):
    """A command whose `--help` reads like ruff's."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return ["[OPTIONS]", *(_argument_label(p) for p in self.get_params(ctx) if isinstance(p, TyperArgument))]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [(_argument_label(p), p.help or "") for p in params if isinstance(p, TyperArgument)]
        # typer's --help is a plain click option, not a TyperOption.
        options = [(_option_label(p), _option_help(p)) for p in params
                   if not isinstance(p, TyperArgument) and not getattr(p, "hidden", False)]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
