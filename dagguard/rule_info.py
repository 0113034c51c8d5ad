"""Every rule's code, name, severity, fixability and summary, in code order, without the rules:
what a report names (SARIF's rule list) and `dagguard rules` lists. A run whose results all come
from the cache needs it, and importing the rules would import libcst (~0.4 s).

The rows of RULE_INFO are generated from the rule classes, which stay the one place to edit;
regenerate them with `PYTHONPATH=$PWD python tests/rules/test_rule_info.py --write`
(tests/rules/test_rule_info.py fails when this file and the classes differ).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    severity: str    # "error" or "warning"
    fixable: bool    # some of its findings carry a fix
    summary: str


RULE_INFO: tuple[RuleInfo, ...] = (
    RuleInfo('DG000', 'syntax-error', 'error', False,
             'The file cannot be parsed, so nothing in it was checked'),
    RuleInfo('DG101', 'catchup-without-end-date', 'error', True,
             'Catchup is on with no end_date: the scheduler queues every interval since start_date'),
    RuleInfo('DG102', 'missing-max-active-runs', 'warning', True,
             'The DAG sets no max_active_runs: up to 16 of its runs may run at once'),
    RuleInfo('DG103', 'missing-max-active-tasks', 'warning', True,
             'The DAG sets no max_active_tasks: up to 16 of its tasks may run at once'),
    RuleInfo('DG104', 'dynamic-start-date', 'error', False,
             'start_date comes from the wall clock, so it moves on every parse or every day'),
    RuleInfo('DG105', 'missing-schedule', 'warning', True,
             'The DAG passes no schedule: daily on Airflow 2, never on Airflow 3'),
    RuleInfo('DG106', 'removed-dag-argument', 'error', True,
             'The DAG passes an argument Airflow 3 rejects (TypeError) or ignores'),
    RuleInfo('DG107', 'large-catchup-backlog', 'warning', False,
             'Catchup would create more runs than max-catchup-runs between start_date and end_date'),
    RuleInfo('DG108', 'dag-version-inflation', 'warning', False,
             'A DAG or task argument comes from the clock, random or uuid, so every parse makes a new DAG version'),
    RuleInfo('DG109', 'removed-operator-argument', 'error', True,
             'A task passes an argument Airflow 3 rejects (task_concurrency, provide_context...)'),
    RuleInfo('DG110', 'partition-keys-never-match', 'error', False,
             "A PartitionedAssetTimetable whose assets' mappers emit keys that never match: it never triggers"),
    RuleInfo('DG201', 'write-not-keyed-on-interval', 'error', False,
             "A task writes, but neither filters nor keys its output on the run's data interval"),
    RuleInfo('DG202', 'wall-clock-in-task', 'error', False,
             'A task uses the current time (datetime.now(), CURRENT_DATE) instead of its data interval'),
    RuleInfo('DG203', 'append-only-insert', 'warning', False,
             'An INSERT appends rows without a prior DELETE/TRUNCATE, MERGE or ON CONFLICT'),
    RuleInfo('DG204', 'inclusive-interval-bounds', 'warning', True,
             'An interval filter includes both ends (BETWEEN, <= data_interval_end)'),
    RuleInfo('DG205', 'removed-template-variable', 'error', True,
             'A template variable or context key removed in Airflow 3 (execution_date, next_ds...)'),
    RuleInfo('DG206', 'empty-data-interval', 'error', True,
             'A data_interval_start..data_interval_end range that is empty on Airflow 3 trigger timetables'),
    RuleInfo('DG207', 'logical-date-on-trigger-timetable', 'warning', True,
             "A read keyed on ds/logical_date, which Airflow 3's trigger timetables set to the period only beginning"),
    RuleInfo('DG208', 'data-interval-on-partitioned-dag', 'error', False,
             'A task of a partitioned DAG reads data_interval_*/logical_date/ds, which its runs lack'),
    RuleInfo('DG301', 'top-level-variable-get', 'warning', False,
             'Variable/Connection reads or hook queries run at every parse of the DAG file'),
    RuleInfo('DG302', 'duplicate-dag-id', 'error', False,
             'Two DAGs share a dag_id, in one file or across the checked files'),
    RuleInfo('DG303', 'duplicate-task-id', 'error', False,
             'Two tasks in one DAG share a task_id, so the DAG fails to import'),
)
