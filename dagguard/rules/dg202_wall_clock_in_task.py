"""DG202: a task reads the worker's clock instead of its run's interval."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags.models import FileModel
from dagguard.model.project.origins import made_at
from dagguard.model.tasks.imported_callables import imported_callable
from dagguard.model.tasks.python_tasks import call_name
from dagguard.model.tasks.task_io import file_task_ios, runs_on_a_clock
from dagguard.rules.base import MADE_AT, Report, Rule, RuleContext

PYTHON_HELP = "use the run's data_interval_start / data_interval_end (or logical_date) from the context"
SQL_HELP = "compare with '{{ data_interval_start }}' and '{{ data_interval_end }}' instead"
PARSE_TIME_HELP = ("pass a template Airflow renders for each run, such as '{{ ds }}' or "
                   "'{{ data_interval_start }}', or read the interval from the context inside the task")


class WallClockInTask(Rule):
    code = "DG202"
    name = "wall-clock-in-task"
    severity = "error"
    summary = "A task uses the current time (datetime.now(), CURRENT_DATE) instead of its data interval"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        seen: set[int] = set()   # a callable or SQL constant shared by several tasks is reported once
        settings = context.settings
        for io in file_task_ios(file, context.path):
            # A manual or asset-triggered run may have no logical date: the clock is all it has.
            if not runs_on_a_clock(io.dag, settings.airflow_version, settings.create_cron_data_intervals):
                continue
            if io.callable is not None:
                for read in io.callable.clock_reads:
                    if id(read.node) in seen:
                        continue
                    seen.add(id(read.node))
                    yield Report(
                        node=read.node,
                        message=f"{io.label} calls {read.name}; a re-run or backfill of an old interval "
                                "uses the time it runs at, not the interval's",
                        help=PYTHON_HELP,
                    )
            imported = imported_callable(file, io.task)
            if imported is not None and imported.facts.clock_reads and id(io.task.node) not in seen:
                # The body is another module's, which has no DAG to judge it by: one finding per
                # call bringing it into this DAG, naming where the body reads the clock.
                seen.add(id(io.task.node))
                first, *others = imported.facts.clock_reads
                reads = [f"{first.name} ({MADE_AT})"] + [
                    f"{read.name} ({context.place_of(imported.home.path, imported.home.module, read.node)})"
                    for read in others]
                yield Report(
                    node=io.task.node,
                    message=f"{io.label} calls {_listed(reads)} in its body; a re-run or backfill of an old "
                            "interval uses the time it runs at, not the interval's",
                    help=PYTHON_HELP, made_at=imported.at(first.node),
                )
            for argument, call in io.parse_time_clock:
                if id(call) in seen:
                    continue
                seen.add(id(call))
                # A clock read another module makes is reported at the argument bringing it in.
                arg = io.task.args.get(argument)
                where = made_at(call, arg.node, arg.read_in(io.task.scope), file.scope) if arg is not None else None
                yield Report(
                    node=call if where is None else arg.report_node,  # type: ignore[union-attr]
                    message=f"{io.label} gets {call_name(call)}" + (f" ({MADE_AT})" if where is not None else "")
                            + f" in '{argument}' when the DAG file is parsed; "
                            "every run, re-run and backfill uses the time of the last parse, not its interval",
                    help=PARSE_TIME_HELP, argument=arg, made_at=where,
                )
            for source in io.sql:
                if source.parsed is None or id(source.node) in seen:
                    continue
                seen.add(id(source.node))
                # One finding per piece of SQL, naming each clock function in it once.
                functions = _distinct(f for statement in source.parsed.statements for f in statement.wall_clock)
                if functions:
                    yield Report(
                        node=source.node,
                        message=f"{io.label} uses {_listed(functions)} in its SQL ({source.origin}); a re-run "
                                "or backfill of an old interval reads or writes the day it runs, not the interval",
                        help=SQL_HELP,
                    )
            for string in io.strings:
                if id(string.node) in seen:
                    continue
                seen.add(id(string.node))
                functions = _distinct(f"{{{{ {function} }}}}" for function in string.template.wall_clock)
                if functions:
                    yield Report(
                        node=string.node,
                        message=f"{io.label} renders {_listed(functions)} in '{string.argument}'; a re-run or "
                                "backfill of an old interval gets the time it runs at",
                        help="use {{ data_interval_start }}, {{ data_interval_end }} or {{ ds }}",
                    )


def _distinct(names: Iterable[str]) -> list[str]:
    """The names in order of first appearance, each once."""
    return list(dict.fromkeys(names))


def _listed(names: list[str]) -> str:
    """`NOW()`, `NOW() and CURRENT_DATE`, `NOW(), SYSDATE and CURRENT_DATE`."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
