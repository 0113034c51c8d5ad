"""Node edits the rules' fixes are made of: rename a keyword, drop an argument, add keywords in
the call's own style. Each returns (old node, new node) pairs for a Fix; nothing here edits text."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import libcst as cst

from dagguard.model.basics.arguments import Arguments, ArgValue
from dagguard.model.dags.models import DagModel
from dagguard.rules.base import SAFE, Fix, Import, Replacement

Edit = tuple[cst.CSTNode, Replacement]
_Whitespace = Union[cst.BaseParenthesizableWhitespace, cst.MaybeSentinel]


def written_keyword(arg: Optional[ArgValue]) -> Optional[cst.Arg]:
    """The `name=value` Arg an argument is written as, when it is one (not a **splat entry, nor
    a caller's positional or differently named argument that a factory maps to it)."""
    if arg is None or arg.origin != "keyword" or not isinstance(arg.report_node, cst.Arg):
        return None
    keyword = arg.report_node.keyword
    return arg.report_node if keyword is not None and keyword.value == arg.name else None


def forwarded_keyword(dag: DagModel, arg: Optional[ArgValue]) -> Optional[cst.Arg]:
    """The `name=value` a DAG argument is written as in the DAG's own call, where a fix may
    rename or drop it: on a factory's call, only one the factory forwards into DAG() through
    **kwargs (a keyword bound to a parameter of the factory is the factory's own)."""
    if dag.factory is None:
        return written_keyword(arg)
    if arg is None or arg.origin != "splat" or not isinstance(arg.report_node, cst.Arg):
        return None
    keyword = arg.report_node.keyword
    return arg.report_node if keyword is not None and keyword.value == arg.name else None


def rename_keyword(arg: cst.Arg, new_name: str) -> Edit:
    """`old=value` -> `new_name=value`, spacing kept."""
    assert arg.keyword is not None
    return arg, arg.with_changes(keyword=arg.keyword.with_changes(value=new_name))


def remove_argument(call: cst.Call, arg: cst.Arg) -> tuple[Edit, ...]:
    """Drop `arg` from `call`: the argument before it takes its comma (or lack of it) and what
    followed it, keeping its own end-of-line comment."""
    index = next(i for i, a in enumerate(call.args) if a is arg)
    if index == 0:
        return ((arg, cst.RemoveFromParent()),)
    before = call.args[index - 1]
    comma = arg.comma
    own = before.comma.whitespace_after if isinstance(before.comma, cst.Comma) else None
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace) \
            and isinstance(own, cst.ParenthesizedWhitespace):
        comma = comma.with_changes(whitespace_after=comma.whitespace_after.with_changes(first_line=own.first_line))
    return ((arg, cst.RemoveFromParent()),
            (before, before.with_changes(comma=comma, whitespace_after_arg=arg.whitespace_after_arg)))


def add_keywords(call: cst.Call, keywords: Sequence[tuple[str, cst.BaseExpression]]) -> Edit:
    """`call` with `name=value` keywords added after its last keyword (or last argument), one per
    line when the arguments are one per line, spaced like its other keywords."""
    args = list(call.args)
    new_args = [_new_arg(name, value, _equal_style(args)) for name, value in keywords]
    if not args:
        return call, call.with_changes(args=_chain(new_args, cst.SimpleWhitespace(" ")))
    index = max((i for i, a in enumerate(args) if a.keyword is not None), default=len(args) - 1)
    anchor = args[index]
    separator = _separator(call, index)
    tail_comma, tail_after = anchor.comma, anchor.whitespace_after_arg
    lead = separator
    if isinstance(separator, cst.ParenthesizedWhitespace):
        comment_line, tail_comma, tail_after = _take_comment(tail_comma, tail_after)
        if comment_line is not None:
            lead = separator.with_changes(first_line=comment_line)
    anchor = anchor.with_changes(
        comma=cst.Comma(whitespace_before=_comma_before(anchor.comma), whitespace_after=lead),
        whitespace_after_arg=cst.SimpleWhitespace(""),
    )
    added = _chain(new_args, separator)
    added[-1] = added[-1].with_changes(comma=tail_comma, whitespace_after_arg=tail_after)
    return call, call.with_changes(args=args[:index] + [anchor] + added + args[index + 1:])


def add_dag_keywords(dag: DagModel, keywords: Sequence[tuple[str, cst.BaseExpression]]) -> Optional[Edit]:
    """The DAG's call with the keywords added; a bare `@dag` becomes `@dag(name=value, ...)`."""
    if dag.call is not None:
        return add_keywords(dag.call, keywords)
    if dag.kind == "decorator" and isinstance(dag.report_node, (cst.Name, cst.Attribute)):
        call = cst.Call(func=dag.report_node, args=_chain([_new_arg(n, v, None) for n, v in keywords],
                                                          cst.SimpleWhitespace(" ")))
        return dag.report_node, call
    return None


def add_dag_keyword_fix(dag: DagModel, name: str, value: cst.BaseExpression, safety: str,
                        imports: tuple[Import, ...] = ()) -> Optional[Fix]:
    """The fix setting the DAG's `name` to `value` by adding a keyword to its call: `name=` on
    DAG() and @dag, on a factory's call the keyword the factory passes on as `name`. None where
    there is no call to edit or the factory may not accept the keyword (a TypeError at parse time)."""
    keyword = dag.keyword_for(name)
    if keyword is None or not _has_call_to_edit(dag):
        return None
    shown = value.value if isinstance(value, (cst.Integer, cst.Name)) else cst.Module([]).code_for_node(value)
    # The new nodes are built only when the fix is applied: most runs apply none.
    return Fix(f"add {keyword}={shown}", safety,
               lambda: (add_dag_keywords(dag, [(keyword, value)]),), imports)  # type: ignore[arg-type]


def _has_call_to_edit(dag: DagModel) -> bool:
    """Can add_dag_keywords edit this DAG? (It returns None exactly when not.)"""
    return dag.call is not None or (dag.kind == "decorator" and isinstance(dag.report_node, (cst.Name, cst.Attribute)))


def rename_fix(args: Arguments, name: str, written: Optional[cst.Arg], new_name: Optional[str]) -> Optional[Fix]:
    """The safe fix renaming the written `name=` to Airflow 3's `new_name=`, unless that name
    is passed too (or may be, through a ** splat)."""
    if new_name is None or written is None or not args.surely_missing(new_name):
        return None
    return Fix(f"rename {name}= to {new_name}=", SAFE, (rename_keyword(written, new_name),))


def _new_arg(name: str, value: cst.BaseExpression, equal: Optional[cst.AssignEqual]) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=equal or cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def _equal_style(args: Sequence[cst.Arg]) -> Optional[cst.AssignEqual]:
    """The call's most common spacing around `=` (`a=1` or `a = 1`)."""
    equals = [arg.equal for arg in args if arg.keyword is not None and isinstance(arg.equal, cst.AssignEqual)]
    spaced = [e for e in equals if _spaced(e)]
    if not equals:
        return None
    return spaced[0] if len(spaced) * 2 > len(equals) else next(e for e in equals if not _spaced(e))


def _spaced(equal: cst.AssignEqual) -> bool:
    return isinstance(equal.whitespace_before, cst.SimpleWhitespace) and equal.whitespace_before.value != ""


def _chain(args: list[cst.Arg], separator: cst.BaseParenthesizableWhitespace) -> list[cst.Arg]:
    """Join new arguments with `separator`; the last has no comma."""
    return [a.with_changes(comma=cst.Comma(whitespace_after=separator)) for a in args[:-1]] + args[-1:]


def _comma_before(comma: Union[cst.Comma, cst.MaybeSentinel]) -> cst.BaseParenthesizableWhitespace:
    return comma.whitespace_before if isinstance(comma, cst.Comma) else cst.SimpleWhitespace("")


def _separator(call: cst.Call, index: int) -> cst.BaseParenthesizableWhitespace:
    """What goes between two arguments in this call: a new line at the arguments' indent when
    the argument before the insertion point starts a line, else the call's inline spacing."""
    before = call.whitespace_before_args if index == 0 else _comma_after(call.args[index - 1].comma)
    if isinstance(before, cst.ParenthesizedWhitespace):
        return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[],
                                           indent=before.indent, last_line=before.last_line)
    if isinstance(before, cst.SimpleWhitespace) and index > 0:
        return before
    return cst.SimpleWhitespace(" ")


def _comma_after(comma: Union[cst.Comma, cst.MaybeSentinel]) -> _Whitespace:
    return comma.whitespace_after if isinstance(comma, cst.Comma) else cst.MaybeSentinel.DEFAULT


def _take_comment(comma: Union[cst.Comma, cst.MaybeSentinel], after: cst.BaseParenthesizableWhitespace):
    """Split the comment ending the anchor's line from what follows it, so the comment stays on
    the anchor's line and the rest follows the added arguments."""
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        ws = comma.whitespace_after
        return ws.first_line, comma.with_changes(whitespace_after=ws.with_changes(
            first_line=cst.TrailingWhitespace())), after
    if isinstance(comma, cst.MaybeSentinel) and isinstance(after, cst.ParenthesizedWhitespace):
        return after.first_line, comma, after.with_changes(first_line=cst.TrailingWhitespace())
    return None, comma, after

