"""The command line as users and CI see it: exit codes, formats, stdout purity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INCIDENT = """\
import pendulum
from airflow.sdk import DAG

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 10, 1, tz="UTC"),
    catchup=True,
):
    pass
"""
CLEAN = """\
from airflow.sdk import DAG

with DAG("clean", schedule=None, max_active_runs=1, max_active_tasks=2):
    pass
"""
FIELDS = {"code": str, "rule": str, "severity": str, "path": str, "line": int, "column": int,
          "end_line": int, "end_column": int, "message": str, "dag_id": (str, type(None)), "fixable": bool}


def dagguard(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "dagguard", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "incident.py").write_text(INCIDENT)
    (tmp_path / "dags" / "clean.py").write_text(CLEAN)
    return tmp_path


def test_findings_exit_1_with_ruff_shaped_lines_and_summary(project):
    run = dagguard("check", "dags", "--now", "2026-11-30T00:00:00Z", cwd=project)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert "dags/incident.py:4:6: DG102 DAG 'orders_hourly' sets no max_active_runs; up to 16 of its runs can run at once" in lines
    assert any(line.startswith("dags/incident.py:8:5: DG101 ") and "~10,000 runs" in line for line in lines)
    assert lines[-2] == "Found 3 problems in 1 file (1 DAG clean)"
    assert lines[-1] == "No fixes available (3 hidden fixes can be enabled with the `--unsafe-fixes` option)"
    assert "\x1b[" not in run.stdout  # no colour when not a TTY
    assert run.stderr == ""


def test_clean_tree_exits_0(project):
    run = dagguard("check", "dags/clean.py", cwd=project)
    assert run.returncode == 0
    assert run.stdout.strip() == "All checks passed: 1 file, 1 DAG clean"


def test_json_output_is_only_a_json_array_with_the_documented_fields(project):
    run = dagguard("check", "dags", "--format", "json", "--now", "2026-11-30T00:00Z", cwd=project)
    assert run.returncode == 1
    findings = json.loads(run.stdout)
    assert len(findings) == 3
    for finding in findings:
        for field, kind in FIELDS.items():
            assert isinstance(finding[field], kind), field
        assert finding["severity"] in ("error", "warning")
        assert finding["line"] >= 1 and finding["column"] >= 1
        assert finding["dag_id"] == "orders_hourly"
    assert [f["code"] for f in findings] == ["DG102", "DG103", "DG101"]


def test_select_and_ignore_on_the_command_line(project):
    run = dagguard("check", "dags", "--format", "json", "--select", "DG1", "--ignore", "DG103,DG102", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]


def test_sarif_and_github_formats(project):
    sarif = json.loads(dagguard("check", "dags", "--format", "sarif", cwd=project).stdout)
    results = sarif["runs"][0]["results"]
    assert sarif["version"] == "2.1.0" and len(results) == 3
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dags/incident.py"
    github = dagguard("check", "dags", "--format", "github", cwd=project).stdout.splitlines()
    assert github[0].startswith("::warning title=dagguard (DG102),file=dags/incident.py,line=4,endLine=9::")


def test_extend_select_and_extend_ignore_flags_layer_on_the_config(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nselect = ["DG101"]\n')
    run = dagguard("check", "dags", "--format", "json", "--extend-select", "DG10", "--extend-ignore", "DG103",
                   cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG102", "DG101"]
    run = dagguard("check", "dags", "--format", "json", "--select", "ALL", "--ignore", "DG102,DG103", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select", "--extend-ignore"])
def test_an_unknown_rule_selector_on_the_command_line_is_an_error(project, option):
    """Regression: `--select XYZ999` checked nothing, said "All checks passed" and exited 0."""
    run = dagguard("check", "dags", option, "DG1,XYZ999", cwd=project)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [run.stderr.strip()]
    assert option in run.stderr and "'XYZ999'" in run.stderr
    empty = dagguard("check", "dags", option, "", cwd=project)
    assert empty.returncode == 2 and option in empty.stderr


def test_start_up_loads_only_the_chosen_format(project):
    """Keep `dagguard check` lean: no rich, no other format's module, no pathspec without ignore files."""
    code = ("import sys\nfrom dagguard.cli import main\nsys.argv = ['dagguard', 'check', 'dags', '-q']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = ('rich', 'jsonschema', 'xml', 'dagguard.report.sarif', 'dagguard.report.full', 'pathspec')\n"
            "print(sorted(m for m in sys.modules if m.startswith(heavy)))")
    run = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines()[-1] == "[]", run.stderr


@pytest.mark.parametrize("args", [
    ("check", "does-not-exist"),
    ("check", "dags", "--format", "xml"),
    ("check", "dags", "--output-format", "pylint"),
    ("check", "dags", "--now", "yesterday"),
    ("check", "dags", "--config", "missing.toml"),
])
def test_usage_errors_exit_2_with_one_line_and_no_traceback(project, args):
    run = dagguard(*args, cwd=project)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert run.stderr.startswith("dagguard: error: ") and len(run.stderr.strip().splitlines()) == 1


def test_bad_config_key_exits_2_naming_key_and_file(project):
    (project / "pyproject.toml").write_text("[tool.dagguard]\nmax-catchup = 10\n")
    run = dagguard("check", "dags", cwd=project)
    assert run.returncode == 2
    assert "'max-catchup'" in run.stderr and "pyproject.toml" in run.stderr


def test_config_from_pyproject_is_applied(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nignore = ["DG102", "DG103"]\n')
    run = dagguard("check", "dags", "--format", "json", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]


def test_exit_zero(project):
    assert dagguard("check", "dags", "--exit-zero", cwd=project).returncode == 0


def test_rules_lists_every_rule_and_rule_prints_its_page(project):
    from dagguard.rules import ALL_RULES

    listing = dagguard("rules", cwd=project).stdout.splitlines()
    assert [line.split("\t")[0] for line in listing] == [r.code for r in ALL_RULES]
    page = dagguard("rule", "DG101", cwd=project)
    assert page.returncode == 0 and page.stdout.startswith("# DG101 catchup-without-end-date")
    assert dagguard("rule", "catchup-without-end-date", cwd=project).stdout == page.stdout
    assert dagguard("rule", "DG999", cwd=project).returncode == 2


def test_linter_does_not_import_airflow_or_runtime_helpers(project):
    code = ("import sys; from dagguard.api import check_paths; check_paths(['dags']); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('airflow', 'sqlalchemy', 'duckdb', 'psycopg') "
            "or m.startswith(('dagguard.idempotent', 'dagguard.doctor'))]; print(bad)")
    run = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert run.stdout.strip() == "[]", run.stderr


def test_a_symlink_loop_in_the_folder_loses_no_other_file(tmp_path, monkeypatch):
    """Regression: display_path's resolve() raised RuntimeError and the whole run was lost."""
    from dagguard.api import check_paths
    from dagguard.config import Settings

    (tmp_path / "good.py").write_text("from airflow.sdk import DAG\nDAG('d', schedule='@daily')\n")
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    monkeypatch.chdir(tmp_path)
    result = check_paths([tmp_path], settings=Settings())
    assert "DG102" in {f.code for f in result.findings if f.path.endswith("good.py")}


def test_output_format_names_and_the_format_alias(project):
    full = dagguard("check", "dags", "--output-format", "full", "--now", "2026-11-30T00:00Z", cwd=project)
    assert full.returncode == 1
    assert " --> dags/incident.py:8:5" in full.stdout and "  |     ^^^^^^^^^^^^" in full.stdout
    lines = dagguard("check", "dags", "--format", "json-lines", cwd=project).stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["DG102", "DG103", "DG101"]
    assert dagguard("check", "dags", "--format", "text", cwd=project).stdout == \
        dagguard("check", "dags", "--output-format", "concise", cwd=project).stdout


def test_dags_flagged_by_dg302_and_another_rule_are_counted_once_in_the_summary(tmp_path):
    """Regression: "N DAGs clean" subtracted a DAG flagged by DG302 and by a per-file rule twice."""
    from dagguard.api import check_paths

    (tmp_path / "a.py").write_text(CLEAN.replace('"clean"', '"d"'))
    (tmp_path / "b.py").write_text("from airflow.sdk import DAG\nDAG('d', schedule='@daily')\n")
    (tmp_path / "c.py").write_text(CLEAN)
    result = check_paths([tmp_path])
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [
        ("b.py", "DG102"), ("b.py", "DG103"), ("b.py", "DG302")]
    assert (result.dag_count, result.clean_dag_count) == (3, 2)


def dagguard_stdin(source: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dagguard", *args], cwd=cwd, capture_output=True, text=True,
                          input=source, timeout=120)


def test_stdin_is_checked_under_the_stdin_filename_with_its_config(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nper-file-ignores = { "legacy/*" = ["DG103"] }\n')
    run = dagguard_stdin(INCIDENT, "check", "-", "--stdin-filename", "legacy/x.py", "--now", "2026-11-30T00:00Z",
                         cwd=project)
    assert run.returncode == 1, run.stderr
    assert [line.split(" ")[:2] for line in run.stdout.splitlines()
            if not line.startswith(("  ", "Found", "No fixes", "[*]"))] == [
        ["legacy/x.py:4:6:", "DG102"], ["legacy/x.py:8:5:", "DG101"]]
    assert run.stdout.splitlines()[-2] == "Found 2 problems in 1 file (0 DAGs clean)"
    bare = dagguard_stdin(INCIDENT, "check", "-", "--output-format", "full", cwd=project)
    assert " --> -:8:5" in bare.stdout and "8 |     catchup=True," in bare.stdout  # source quoted from stdin
    clean = dagguard_stdin(CLEAN, "check", "--stdin-filename", "dags/new.py", cwd=project)
    assert (clean.returncode, clean.stdout) == (0, "All checks passed: 1 file, 1 DAG clean\n")
    both = dagguard_stdin(CLEAN, "check", "-", "dags", cwd=project)
    assert both.returncode == 2 and both.stderr.startswith("dagguard: error: ")


def test_statistics_count_findings_per_rule(project):
    (project / "dags" / "second.py").write_text(INCIDENT.replace("orders_hourly", "other"))
    run = dagguard("check", "dags", "--statistics", cwd=project)
    assert run.returncode == 1
    # As ruff: no [*]/[ ] column when nothing is fixable in this run (these fixes are unsafe), and
    # the check's summary below the table.
    assert run.stdout.splitlines()[:3] == ["2\tDG101\tcatchup-without-end-date",
                                           "2\tDG102\tmissing-max-active-runs",
                                           "2\tDG103\tmissing-max-active-tasks"]
    assert run.stdout.splitlines()[3].startswith("Found 6 problems in 2 files")
    unsafe = dagguard("check", "dags", "--statistics", "--unsafe-fixes", cwd=project)
    assert unsafe.stdout.splitlines()[0] == "2\tDG101\t[*] catchup-without-end-date"
    rows = json.loads(dagguard("check", "dags", "--statistics", "--output-format", "json", cwd=project).stdout)
    assert rows[0] == {"code": "DG101", "name": "catchup-without-end-date", "count": 2, "fixable": False,
                       "fixable_count": 0}


def test_output_file_quiet_and_silent(project):
    run = dagguard("check", "dags", "-o", "report.json", "--output-format", "json", cwd=project)
    assert run.returncode == 1 and run.stdout == ""
    assert len(json.loads((project / "report.json").read_text())) == 3
    quiet = dagguard("check", "dags", "-q", cwd=project)
    assert quiet.returncode == 1 and not any(line.startswith("Found") for line in quiet.stdout.splitlines())
    assert quiet.stdout.startswith("dags/incident.py:4:6: DG102")
    assert dagguard("check", "dags/clean.py", "--quiet", cwd=project).stdout == ""
    silent = dagguard("check", "dags", "--silent", cwd=project)
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")


def test_show_files_and_show_settings(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nexclude = ["clean.py"]\nignore = ["DG103"]\n')
    run = dagguard("check", "dags", "--show-files", cwd=project)
    assert run.returncode == 0 and run.stdout.splitlines() == [str((project / "dags" / "incident.py").resolve())]
    shown = dagguard("check", "dags", "--show-settings", "--extend-ignore", "DG3", cwd=project)
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert lines[0] == f"# config file: {(project / 'pyproject.toml').resolve()}"
    assert 'ignore = ["DG103"]' in lines and 'exclude = ["clean.py"]' in lines
    enabled = lines[-1].removeprefix("# enabled rules: ").split(", ")
    assert "DG102" in enabled and "DG103" not in enabled and not any(c.startswith("DG3") for c in enabled)


def test_config_key_value_overrides_win_over_the_file(project):
    (project / "pyproject.toml").write_text('[tool.dagguard]\nignore = ["DG103"]\nselect = ["DG1"]\n')
    run = dagguard("check", "dags", "--format", "json", "--config", 'ignore = ["DG102", "DG103"]', cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG101"]
    (project / "other.toml").write_text('select = ["DG102"]\n')
    run = dagguard("check", "dags", "--format", "json", "--config", "other.toml",
                   "--config", "select = ['DG103']", cwd=project)
    assert [f["code"] for f in json.loads(run.stdout)] == ["DG103"]
    bad = dagguard("check", "dags", "--config", "max-catchup-runs = 'many'", cwd=project)
    assert bad.returncode == 2 and "--config" in bad.stderr and "max-catchup-runs" in bad.stderr
    typo = dagguard("check", "dags", "--config", "selct = ['DG1']", cwd=project)
    assert typo.returncode == 2 and "'selct'" in typo.stderr


def test_help_reads_like_ruffs(project):
    """Regression: rich markup ate `[tool.dagguard]`; help showed <list[Path]>, <bool> and {code}."""
    env = {**os.environ, "COLUMNS": "100"}
    for command in (("check",), ("rule",), ("rules",), ("doctor",), ("ledger",)):
        run = subprocess.run([sys.executable, "-m", "dagguard", *command, "--help"], capture_output=True,
                             text=True, env=env, cwd=project)
        assert run.returncode == 0, run.stderr
        for odd in ("<list[", "<bool>", "<str>", "<path>", "{", "\x1b[", "╭"):
            assert odd not in run.stdout, (command, odd)
    check_help = subprocess.run([sys.executable, "-m", "dagguard", "check", "-h"], capture_output=True,
                                text=True, env=env, cwd=project).stdout
    assert "[OPTIONS] [PATHS]..." in check_help and "[tool.dagguard]" in check_help
    assert "--select <RULE_CODE>" in check_help and "-o, --output-file <OUTPUT_FILE>" in check_help
    assert "  -q, --quiet " in check_help
    rule_help = subprocess.run([sys.executable, "-m", "dagguard", "rule", "--help"], capture_output=True,
                               text=True, env=env, cwd=project).stdout
    assert "[OPTIONS] <CODE>" in rule_help


def _on_terminal(*args: str, cwd: Path, columns: int = 80) -> str:
    import re

    from tests.support.terminal import run_in_terminal

    code, shown, _ = run_in_terminal(list(args), cwd, columns=columns)
    assert code == 0, shown
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)


def test_rules_on_an_80_column_terminal_shows_every_name_whole(project):
    """Regression: the rich table cut names to 'catchup-without-end-d…'."""
    from dagguard.rules import ALL_RULES

    lines = _on_terminal("rules", cwd=project).splitlines()
    for rule in ALL_RULES:
        assert any(rule.code in line and f" {rule.name} " in line for line in lines), rule.name
    assert "…" not in "".join(lines)


def test_rule_page_on_a_terminal_keeps_the_bad_and_good_labels(project):
    """Regression: rich's Markdown dropped the `bad`/`good` of ```python bad, so examples read alike."""
    from dagguard.rules.pages import examples, page_text

    shown = [line.strip() for line in _on_terminal("rule", "DG101", cwd=project).splitlines()]
    labels = [line for line in shown if line.startswith(("bad", "good")) and line.endswith(":")]
    tagged = examples(page_text("DG101"))
    assert [label.split()[0].rstrip(":") for label in labels] == [example.kind for example in tagged]
    assert "bad airflow-version=2:" in labels


NO_DELAY = "import dagguard.progress\ndagguard.progress.DELAY_SECONDS = 0"


@pytest.fixture
def many_dags(project):
    for number in range(30):
        (project / "dags" / f"d{number}.py").write_text(CLEAN.replace('"clean"', f'"d{number}"'))
    return project


def test_a_progress_bar_on_a_terminal_stderr_only_after_the_delay(many_dags):
    from tests.support.terminal import run_in_terminal

    code, shown, stdout = run_in_terminal(["check", "dags"], many_dags, stdout_tty=False, prelude=NO_DELAY)
    assert code == 1 and "Checking" in shown and "32/32" in shown
    assert "Checking" not in stdout and stdout.splitlines()[-2].startswith("Found 3 problems")
    # The default delay: a run this short draws no bar.
    code, shown, _ = run_in_terminal(["check", "dags/clean.py"], many_dags, stdout_tty=False)
    assert code == 0 and "Checking" not in shown


@pytest.mark.parametrize(("args", "env", "stderr_tty"), [
    (("check", "dags"), {}, False),                                  # stderr is not a terminal
    (("check", "dags"), {"CI": "true"}, True),                        # CI
    (("check", "dags", "--output-format", "sarif"), {}, True),        # a machine format
    (("check", "dags", "--quiet"), {}, True),
])
def test_no_progress_bar_off_a_terminal_in_ci_or_with_machine_formats(many_dags, args, env, stderr_tty):
    from tests.support.terminal import run_in_terminal

    code, shown, other = run_in_terminal(list(args), many_dags, env=env, stdout_tty=not stderr_tty,
                                         stderr_tty=stderr_tty, prelude=NO_DELAY)
    assert code == 1
    assert "Checking" not in shown and "Checking" not in other


def test_wants_progress_only_for_a_person_at_a_terminal():
    import io

    from dagguard.progress import wants_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_progress(True, False, Terminal(), {})
    assert not wants_progress(True, False, io.StringIO(), {})
    assert not wants_progress(True, False, Terminal(), {"CI": "1"})
    assert not wants_progress(False, False, Terminal(), {})
    assert not wants_progress(True, True, Terminal(), {})


def test_a_missing_path_is_reported_and_the_others_are_still_checked(project):
    run = dagguard("check", "dags/incident.py", "nope.py", "dags/clean.py", "--format", "json", cwd=project)
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["dagguard: error: nope.py: no such file or directory"]
    assert {f["code"] for f in json.loads(run.stdout)} == {"DG101", "DG102", "DG103"}


def _git_project(project: Path) -> Path:
    subprocess.run(["git", "init", "--quiet"], cwd=project, check=True)
    (project / ".gitignore").write_text("generated/\n*_backup.py\n!keep_backup.py\n")
    for name in ("generated/gen.py", "dags/old_backup.py", "dags/keep_backup.py", "dags/sub/scratch.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(CLEAN)
    (project / "dags" / "sub" / ".ignore").write_text("scratch.py\n")
    return project


def _shown_files(*args: str, cwd: Path) -> list[str]:
    run = dagguard("check", *args, "--show-files", cwd=cwd)
    assert run.returncode == 0, run.stderr
    return sorted(Path(line).relative_to(cwd.resolve()).as_posix() for line in run.stdout.splitlines())


def test_gitignore_and_ignore_files_are_respected_by_default(project):
    project = _git_project(project)
    assert _shown_files(".", cwd=project) == ["dags/clean.py", "dags/incident.py", "dags/keep_backup.py"]
    assert _shown_files(".", "--no-respect-gitignore", cwd=project) == [
        "dags/clean.py", "dags/incident.py", "dags/keep_backup.py", "dags/old_backup.py", "dags/sub/scratch.py",
        "generated/gen.py"]
    assert _shown_files("generated", cwd=project) == ["generated/gen.py"]  # given explicitly
    (project / "pyproject.toml").write_text("[tool.dagguard]\nrespect-gitignore = false\n")
    assert "generated/gen.py" in _shown_files(".", cwd=project)


def test_force_exclude_applies_exclusions_to_explicit_paths(project):
    project = _git_project(project)
    (project / "pyproject.toml").write_text('[tool.dagguard]\nexclude = ["incident.py"]\n')
    explicit = ("dags/incident.py", "dags/old_backup.py", "dags/clean.py")
    assert _shown_files(*explicit, cwd=project) == ["dags/clean.py", "dags/incident.py", "dags/old_backup.py"]
    assert _shown_files(*explicit, "--force-exclude", cwd=project) == ["dags/clean.py"]
    stdin = dagguard_stdin(INCIDENT, "check", "--stdin-filename", "dags/incident.py", "--force-exclude", cwd=project)
    assert (stdin.returncode, stdin.stderr) == (0, "")


def test_dags_takes_key_value_config_overrides_as_check_does(tmp_path):
    """`dagguard dags --config 'src = ["lib"]'` once said "config file not found"."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "factory.py").write_text(
        "from airflow import DAG\n\ndef make():\n    return DAG('made_in_lib', schedule='@daily')\n")
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "x.py").write_text("from factory import make\n\ndag = make()\n")
    without = dagguard("dags", "dags", "--format", "json", cwd=tmp_path)
    assert without.returncode == 0, without.stderr
    assert [d["dag_id"] for d in json.loads(without.stdout)] == []
    with_root = dagguard("dags", "dags", "--format", "json", "--config", 'src = ["lib"]', cwd=tmp_path)
    assert with_root.returncode == 0, with_root.stderr
    assert [d["dag_id"] for d in json.loads(with_root.stdout)] == ["made_in_lib"]
    bad = dagguard("dags", "dags", "--config", 'srcx = ["lib"]', cwd=tmp_path)
    assert bad.returncode == 2 and "unknown key 'srcx'" in bad.stderr
