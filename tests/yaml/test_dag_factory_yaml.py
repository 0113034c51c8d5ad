"""dag-factory YAML in `dagguard check` and `dagguard dags`: the fixtures load with dag-factory
1.1 and Airflow 3.3 themselves, so the findings are about DAGs that exist (or, for the legacy
file, about the error that stops it loading, which --fix removes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths, fix_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

FIXTURES = Path(__file__).parent / "fixtures"

LOAD = """
import json, logging, sys, warnings
warnings.simplefilter("ignore")
from dagfactory import load_yaml_dags
errors = []
class Failures(logging.Handler):
    def emit(self, record):
        if record.exc_info:
            errors.append(f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}")
logging.getLogger().addHandler(Failures())
found = {}
load_yaml_dags(globals_dict=found, dags_folder=sys.argv[1])
dags = {}
for dag in found.values():
    dags[dag.dag_id] = {
        "catchup": dag.catchup, "max_active_runs": dag.max_active_runs,
        "max_active_tasks": dag.max_active_tasks, "timetable": type(dag.timetable).__name__,
        "start_date": dag.start_date.isoformat() if dag.start_date else None,
        "end_date": dag.end_date.isoformat() if dag.end_date else None,
        "tasks": {t.task_id: {"bash_command": getattr(t, "bash_command", None),
                              "max_active_tis_per_dag": t.max_active_tis_per_dag} for t in dag.tasks},
    }
print("RESULT" + json.dumps({"dags": dags, "errors": errors}))
"""


def load_with_dag_factory(folder: Path, home: Path) -> dict:
    """The DAGs dag-factory builds from `folder`'s YAML, with real Airflow, in a fresh process."""
    pytest.importorskip("dagfactory")
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(folder), "DO_NOT_TRACK": "1", "SCARF_NO_ANALYTICS": "1"}
    run = subprocess.run([sys.executable, "-c", LOAD, str(folder)], capture_output=True, text=True, env=env,
                         timeout=600)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr[-3000:]
    return json.loads(line[len("RESULT"):])


def settings(root: Path, **kwargs) -> Settings:
    return Settings(config_path=root / "pyproject.toml", **kwargs)


def check(path: Path, **kwargs):
    return check_paths([path], settings=settings(path if path.is_dir() else path.parent, **kwargs), now=NOW)


@pytest.fixture(scope="module")
def orders_loaded(tmp_path_factory):
    return load_with_dag_factory(FIXTURES / "dags", tmp_path_factory.mktemp("airflow_home"))


def test_the_orders_fixture_loads_with_dag_factory_as_the_linter_reads_it(orders_loaded):
    dags = orders_loaded["dags"]
    assert orders_loaded["errors"] == []
    assert sorted(dags) == ["orders_bounded", "orders_daily", "orders_hourly"]
    listed = {d.dag_id: d for d in check(FIXTURES / "dags").dags}
    assert sorted(listed) == sorted(dags)
    hourly, bounded = dags["orders_hourly"], dags["orders_bounded"]
    # What DG101/DG102 report: catchup on from the `default` block, no end_date, 16 runs at once.
    assert hourly["catchup"] is True and listed["orders_hourly"].catchup == "True"
    assert hourly["end_date"] is None and listed["orders_hourly"].end_date == "not set"
    assert hourly["max_active_runs"] == 16 and listed["orders_hourly"].max_active_runs == "not set"
    assert hourly["timetable"] == "CronTriggerTimetable" and listed["orders_hourly"].schedule == "@hourly"
    assert hourly["start_date"] == listed["orders_hourly"].start_date == "2024-01-01T00:00:00+00:00"
    assert hourly["tasks"]["export"]["bash_command"] == "echo {{ execution_date }}"   # DG205's template
    assert bounded["end_date"] == listed["orders_bounded"].end_date == "2024-02-01T00:00:00+00:00"
    assert bounded["max_active_tasks"] == 4 and listed["orders_bounded"].max_active_tasks == "4"
    # DG104: `start_date: 3 days` is today's midnight minus three days, in the DAG's time zone.
    assert dags["orders_daily"]["start_date"].endswith("T00:00:00+00:00")
    assert listed["orders_daily"].start_date == "unknown"


def test_findings_point_at_the_yaml_line_and_column():
    result = check(FIXTURES / "dags")
    found = [(f.path.rsplit("/", 1)[-1], f.line, f.column, f.code, f.dag_id) for f in result.findings]
    assert found == [
        ("orders.yml", 3, 3, "DG101", "orders_hourly"),    # `catchup: true` in the default block
        ("orders.yml", 9, 1, "DG102", "orders_hourly"),    # the DAG block's key
        ("orders.yml", 15, 21, "DG205", "orders_hourly"),  # the bash_command value
        ("orders.yml", 20, 3, "DG104", "orders_daily"),    # `start_date: 3 days`
    ]
    # `# noqa: DG103` on the DAG's key line silences DG103 for that DAG.
    assert "DG103" not in {f.code for f in result.findings}
    assert result.dag_count == 3 and result.clean_dag_count == 1
    # The Python file that calls load_yaml_dags is not a DAG file whose DAGs went unseen.
    assert result.files_without_dags == ()


def test_dags_listing_names_dag_factory():
    listed = check(FIXTURES / "dags").dags
    assert {d.found_by for d in listed} == {"dag-factory"}
    assert [(d.path.rsplit("/", 1)[-1], d.line) for d in listed] == [
        ("orders.yml", 9), ("orders.yml", 17), ("orders.yml", 26)]
    run = subprocess.run([sys.executable, "-m", "dagguard", "dags", str(FIXTURES / "dags"), "--format", "json"],
                         capture_output=True, text=True, cwd=FIXTURES.parent.parent.parent, timeout=120)
    assert run.returncode == 0, run.stderr
    assert {d["dag_id"]: d["found_by"] for d in json.loads(run.stdout)} == {
        "orders_hourly": "dag-factory", "orders_daily": "dag-factory", "orders_bounded": "dag-factory"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


DAILY = """\
    daily_report:
      schedule: "@daily"
      start_date: 2026-01-01
      max_active_runs: 1
      max_active_tasks: 2
      default_args:
        owner: data
      tasks:
        report:
          operator: airflow.providers.standard.operators.bash.BashOperator
          bash_command: echo {{ next_ds }}{noqa}
    """


def test_noqa_as_a_yaml_comment(tmp_path):
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", ""))
    assert [f.code for f in check(tmp_path / "dags").findings] == ["DG205"]
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", "  # noqa: DG205"))
    result = check(tmp_path / "dags")
    assert result.findings == () and result.clean_dag_count == 1   # its one finding is silenced
    # A `#` inside a quoted scalar is no comment.
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", "").replace(
        "echo {{ next_ds }}", "'echo {{ next_ds }} # noqa: DG205'"))
    assert [f.code for f in check(tmp_path / "dags").findings] == ["DG205"]


def test_fix_renames_keys_keeps_comments_and_the_result_loads_with_dag_factory(tmp_path):
    folder = tmp_path / "dags"
    shutil.copytree(FIXTURES / "legacy", folder)
    target = folder / "report.yaml"
    before = target.read_text(encoding="utf-8")
    loaded = load_with_dag_factory(folder, tmp_path / "home_before")
    assert loaded["dags"] == {}
    assert any("schedule_interval" in error for error in loaded["errors"])   # what DG106 is about
    assert [f.code for f in check(folder).findings] == ["DG106", "DG109"]

    run = fix_paths([folder], settings=settings(folder), now=NOW)
    assert run.result.findings == ()
    after = target.read_text(encoding="utf-8")
    assert after == before.replace("schedule_interval:", "schedule:").replace(
        "task_concurrency:", "max_active_tis_per_dag:")
    assert "# keep this comment" in after and "# and this one" in after
    loaded = load_with_dag_factory(folder, tmp_path / "home_after")
    assert loaded["errors"] == []
    dag = loaded["dags"]["legacy_report"]
    assert dag["timetable"] == "CronTriggerTimetable"
    assert dag["tasks"]["report"]["max_active_tis_per_dag"] == 1
    # Fixing again changes nothing.
    assert fix_paths([folder], settings=settings(folder), now=NOW).applied == 0


def test_unsafe_fix_inserts_a_key_in_the_dag_block(tmp_path):
    target = write(tmp_path / "dags" / "hourly.yml", """\
        hourly:
          schedule: "@hourly"
          catchup: false
          start_date: 2026-01-01  # fixed date
          max_active_tasks: 2
          tasks:
            - task_id: t
              operator: airflow.providers.standard.operators.empty.EmptyOperator
        """)
    assert [f.code for f in check(target.parent).findings] == ["DG102"]
    fix_paths([target.parent], settings=settings(target.parent), now=NOW, unsafe_fixes=True)
    assert target.read_text(encoding="utf-8").startswith('hourly:\n  max_active_runs: 1\n  schedule: "@hourly"\n')
    assert check(target.parent).findings == ()


def test_duplicate_dag_id_across_yaml_and_python(tmp_path):
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", "").replace("{{ next_ds }}", "hi"))
    write(tmp_path / "dags" / "report.py", """\
        import pendulum
        from airflow.sdk import DAG

        with DAG("daily_report", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")):
            pass
        """)
    found = [(Path(f.path).name, f.line, f.column, f.code, f.message) for f in check(tmp_path / "dags").findings]
    assert found == [("report.yml", 1, 1, "DG302", f"DAG 'daily_report' is already defined at "
                      f"{tmp_path / 'dags' / 'report.py'}:4; Airflow keeps only one of them")]
    # `# noqa: DG302` on the DAG block's key line silences it.
    text = (tmp_path / "dags" / "report.yml").read_text(encoding="utf-8")
    (tmp_path / "dags" / "report.yml").write_text(text.replace("daily_report:", "daily_report:  # noqa: DG302"),
                                                  encoding="utf-8")
    assert check(tmp_path / "dags").findings == ()


def test_other_yaml_is_silent_and_not_counted(tmp_path):
    write(tmp_path / "dags" / ".pre-commit-config.yaml", """\
        repos:
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v0.5.0
            hooks:
              - id: ruff
        """)
    write(tmp_path / "dags" / "ci.yml", """\
        name: ci
        on: [push]
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
              - run: pytest
        """)
    write(tmp_path / "dags" / "Taskfile.yml", """\
        version: '3'
        tasks:
          build:
            cmds: [make]
        """)
    shutil.copy(FIXTURES / "docker-compose.yml", tmp_path / "dags")
    result = check(tmp_path / "dags")
    assert result.findings == () and result.dag_count == 0 and result.files_checked == 0


def test_malformed_yaml_is_dg000_and_other_files_are_checked(tmp_path):
    write(tmp_path / "dags" / "broken.yml", """\
        broken:
          default_args: {owner: data
          tasks:
            t:
              operator: airflow.providers.standard.operators.empty.EmptyOperator
        """)
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", ""))
    found = [(Path(f.path).name, f.line, f.code) for f in check(tmp_path / "dags").findings]
    assert found[0][0] == "broken.yml" and found[0][2] == "DG000"
    assert ("report.yml", 11, "DG205") in found


def test_machine_formats_carry_yaml_findings(tmp_path):
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", ""))
    for fmt, expected in (("json", '"line": 11'), ("sarif", '"startLine": 11'), ("github", "line=11,col=")):
        run = subprocess.run([sys.executable, "-m", "dagguard", "check", "dags", "--output-format", fmt, "--no-cache"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert run.returncode == 1, run.stderr
        assert "report.yml" in run.stdout and expected in run.stdout.replace(" ", " "), (fmt, run.stdout)


def test_readme_example_prints_what_it_says(tmp_path):
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### dag-factory YAML", 1)[1]
    yaml_text = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = section.split("```\n$ dagguard check dags/\n", 1)[1].split("```", 1)[0]
    expected_check, expected_dags = shown.split("$ dagguard dags dags/\n")
    write(tmp_path / "dags" / "orders.yml", yaml_text)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    run = subprocess.run([sys.executable, "-m", "dagguard", "check", "dags/", "--now", "2026-11-30T00:00Z",
                          "--no-cache"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.stdout == expected_check
    run = subprocess.run([sys.executable, "-m", "dagguard", "dags", "dags/"], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert run.stdout == expected_dags


def test_add_noqa_writes_yaml_comments(tmp_path):
    from dagguard.engine.add_noqa import add_noqa

    shutil.copytree(FIXTURES / "dags", tmp_path / "dags")
    folder = tmp_path / "dags"
    assert add_noqa([folder], settings(folder), NOW) == 4
    text = (folder / "orders.yml").read_text(encoding="utf-8")
    assert "orders_hourly:  # noqa: DG103, DG102\n" in text      # merged into the existing comment
    assert "  catchup: true  # noqa: DG101\n" in text
    assert check(folder).findings == ()
    assert add_noqa([folder], settings(folder), NOW) == 0


def test_defaults_files_merge_as_dag_factory_merges_them(tmp_path):
    # defaults.yml of the folder and of its parents up to `dags`: DAG-level keys beat the
    # file's `default` block (max_active_runs 3, not 7), default_args lose to it and to the DAG's.
    folder = FIXTURES / "defaults" / "dags"
    loaded = load_with_dag_factory(folder, tmp_path / "home")
    dag = loaded["dags"]["sales_daily"]
    (listed,) = check(folder).dags
    assert (dag["catchup"], dag["max_active_runs"], dag["max_active_tasks"]) == (True, 3, 5)
    assert (listed.catchup, listed.max_active_runs, listed.max_active_tasks) == ("True", "3", "5")
    assert listed.start_date == "2025-06-01T00:00:00+00:00"   # default_args' start_date, from defaults.yml
    # dag-factory also tries defaults.yml as a DAG file and fails on it; dagguard does not check it.
    assert any("not a mapping" in error for error in loaded["errors"])
    result = check(folder)
    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [("sales.yml", 5, "DG101")]
    assert "; the value is set in " in result.findings[0].help
    assert result.findings[0].help.endswith("fixtures/defaults/dags/defaults.yml")


def test_stdin_with_a_yaml_filename(tmp_path):
    from dagguard.api import check_stdin

    result = check_stdin(DAILY.replace("{noqa}", "").replace("    ", "", 0), tmp_path / "dags" / "x.yml",
                         now=NOW)
    assert [f.code for f in result.findings] == ["DG205"]


def test_a_warm_cache_gives_the_same_yaml_results(tmp_path):
    from dagguard.engine.cache import ResultCache
    from dagguard.engine.run import check_paths as run_check_paths

    shutil.copytree(FIXTURES / "defaults", tmp_path / "project")
    folder = tmp_path / "project" / "dags"
    chosen = settings(folder)
    cold = run_check_paths([folder], chosen, NOW, cache=ResultCache(tmp_path / "cache", chosen, NOW))
    warm = run_check_paths([folder], chosen, NOW, cache=ResultCache(tmp_path / "cache", chosen, NOW))
    assert warm.findings == cold.findings and warm.dags == cold.dags and len(cold.findings) == 1
    # A defaults.yml the result was read through invalidates it.
    (folder / "defaults.yml").write_text("catchup: false\n", encoding="utf-8")
    changed = run_check_paths([folder], chosen, NOW, cache=ResultCache(tmp_path / "cache", chosen, NOW))
    assert changed.findings == ()


def test_yaml_that_is_not_dag_factorys_is_silent_even_when_it_does_not_parse(tmp_path):
    # A Kubernetes manifest: two documents and an `operator:` key, valid YAML dag-factory never reads.
    write(tmp_path / "dags" / "k8s.yaml", """\
        apiVersion: v1
        kind: Pod
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions:
                      - key: pool
                        operator: In
        ---
        apiVersion: v1
        kind: Service
        """)
    (tmp_path / "dags" / "big.yml").write_bytes(b"tasks:\n" + b"  - x: 1\n" * (11 * 1024 * 1024 // 9))
    result = check(tmp_path / "dags")
    assert result.findings == () and result.files_checked == 0


def test_a_repeated_task_key_is_one_task_as_in_pyyaml(tmp_path):
    repeated = DAILY.replace("{noqa}", "").replace("{{ next_ds }}", "hi").rstrip(" ") + (
        "        report:\n"
        "          operator: airflow.providers.standard.operators.bash.BashOperator\n"
        "          bash_command: echo again\n")
    target = write(tmp_path / "dags" / "report.yml", repeated)
    assert target.read_text().count("    report:\n") == 2
    assert check(tmp_path / "dags").findings == ()   # no DG303: PyYAML keeps the last `report`


def test_default_block_tasks_merge_task_by_task(tmp_path):
    # dag-factory's merge_configs merges the `default` block's tasks mapping into the DAG's:
    # `load` keeps its own bash_command and takes the operator, `extract` comes whole.
    folder = FIXTURES / "merged"
    loaded = load_with_dag_factory(folder, tmp_path / "home")
    assert loaded["errors"] == []
    tasks = loaded["dags"]["sales"]["tasks"]
    assert tasks["load"]["bash_command"] == "echo {{ next_ds }}"
    assert tasks["extract"]["bash_command"] == "echo {{ prev_ds }}"
    found = [(f.line, f.code, f.message.split(" uses ")[0]) for f in check(folder).findings]
    assert found == [(9, "DG205", "task 'extract'"), (17, "DG205", "task 'load'")]


def test_a_top_level_key_that_is_no_mapping_is_dg000(tmp_path):
    write(tmp_path / "dags" / "report.yml", DAILY.replace("{noqa}", "").replace("{{ next_ds }}", "hi").rstrip(" ")
          + "    version: 3\n")
    found = [(f.line, f.column, f.code) for f in check(tmp_path / "dags").findings]
    assert found == [(12, 1, "DG000")]
    assert "'version' is not a mapping" in check(tmp_path / "dags").findings[0].message
    assert check(tmp_path / "dags", ignore=("DG000",)).findings == ()


def test_one_fix_as_an_editor_asks_for_it():
    from dagguard.engine.fixes import fix_one

    target = FIXTURES / "legacy" / "report.yaml"
    source = target.read_bytes()
    fixed = fix_one(source, target, settings(target.parent), NOW, "DG109", 13, 7)
    assert fixed == source.replace(b"task_concurrency:", b"max_active_tis_per_dag:")
    assert fix_one(source, target, settings(target.parent), NOW, "DG109", 12, 7) is None


def test_dg105_fix_writes_schedule_null_and_dag_factory_loads_it(tmp_path):
    folder = tmp_path / "dags"
    target = write(folder / "manual.yml", """\
        manual:
          # triggered by hand
          start_date: 2026-01-01
          default_args:
            owner: data
          tasks:
            - task_id: t
              operator: airflow.providers.standard.operators.empty.EmptyOperator
        """)
    assert [(f.code, f.line, f.fixable) for f in check(folder).findings] == [("DG105", 1, True)]
    fix_paths([folder], settings=settings(folder), now=NOW)
    assert target.read_text(encoding="utf-8").startswith("manual:\n  schedule: null\n  # triggered by hand\n")
    assert check(folder).findings == ()
    loaded = load_with_dag_factory(folder, tmp_path / "home")
    assert loaded["errors"] == [] and loaded["dags"]["manual"]["timetable"] == "NullTimetable"


def test_odd_yaml_gives_findings_not_internal_errors(tmp_path):
    folder = tmp_path / "dags"
    write(folder / "odd.yml", """\
        base: &base
          default_args: {owner: x}
          rec: &r [*r]
          tasks:
            t: {operator: a.B, x: !!python/name:os.system , y: !custom 3, "a b": 1, class: 2, 3: 4}
        d4:
          <<: *base
          schedule: "@daily"
          params: &p {a: *p}
        1: {default_args: {}}
        """)
    write(folder / "default.yml", """\
        default: 5
        d1:
          default_args: [1, 2]
          tasks: 5
        d2:
          default_args: {owner: x}
        """)
    result = check(folder)
    assert result.internal_errors == ()
    assert {d.dag_id for d in result.dags} == {"base", "d4", "d1", "d2"}
    assert ("default.yml", 1, "DG000") in [(Path(f.path).name, f.line, f.code) for f in result.findings]


def test_start_date_is_the_wall_time_in_the_dags_timezone(tmp_path):
    # dag-factory's get_datetime replaces the zone (10:00 in Amsterdam), and an unknown zone
    # makes the value unknown (dag-factory fails on it).
    write(tmp_path / "dags" / "tz.yml", DAILY.replace("{noqa}", "").replace(
        "start_date: 2026-01-01", "start_date: 2024-01-01T10:00:00+05:00\n      timezone: Europe/Amsterdam"))
    (listed,) = check(tmp_path / "dags").dags
    assert listed.start_date == "2024-01-01T10:00:00+01:00"
    write(tmp_path / "dags" / "tz.yml", DAILY.replace("{noqa}", "").replace(
        "start_date: 2026-01-01", "start_date: 2024-01-01\n      timezone: Mars/Base"))
    (listed,) = check(tmp_path / "dags").dags
    assert listed.start_date == "unknown"
