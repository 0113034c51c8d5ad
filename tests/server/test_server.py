"""`dagguard server` driven as a subprocess over stdio: what it publishes and edits is what
`dagguard check` prints and `--fix` / `--add-noqa` write for the same text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from tests.server.lsp_client import WORKTREE, LspClient, apply_action  # noqa: E402

NOW = "2026-11-30T12:00:00Z"

RISKY = '''import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG(
    dag_id="orders_hourly",
    schedule_interval="@hourly",
    start_date=pendulum.datetime(2025, 9, 1, tz="UTC"),
    catchup=True,
):
    EmptyOperator(task_id="start")
'''

SAFE = '''import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 9, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    max_active_tasks=4,
):
    EmptyOperator(task_id="start")
'''


def dagguard(*args: str, stdin: str | None = None, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(WORKTREE), DAGGUARD_NO_CACHE="1")
    return subprocess.run([sys.executable, "-m", "dagguard", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def check_json(text: str, path: Path, cwd: Path, *extra: str) -> list[dict]:
    done = dagguard("check", "-", "--stdin-filename", str(path), "--output-format", "json", "--now", NOW,
                    *extra, stdin=text, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def fixed_by_cli(text: str, path: Path, cwd: Path, *extra: str) -> str:
    done = dagguard("check", "-", "--fix", "--stdin-filename", str(path), "--now", NOW, *extra, stdin=text, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def as_cli(diagnostics: list[dict]) -> list[tuple]:
    """code, line, column (1-based), message: what check's JSON says (ASCII text: UTF-16 = code points)."""
    return sorted((d["code"], d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1, d["message"])
                  for d in diagnostics)


def of_json(findings: list[dict]) -> list[tuple]:
    return sorted((f["code"], f["line"], f["column"], f["message"]) for f in findings)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.dagguard]\n", encoding="utf-8")
    (tmp_path / "dags").mkdir()
    return tmp_path


@pytest.fixture
def client(project: Path):
    started = LspClient(project)
    try:
        started.initialize(project, {"now": NOW, "debounce-ms": 10})
        yield started
    finally:
        started.kill()


def test_diagnostics_on_open_match_check_json(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    path.write_text(RISKY, encoding="utf-8")
    uri = client.open(path, RISKY)
    diagnostics = client.diagnostics(uri)
    expected = check_json(RISKY, path, project)
    assert {f["code"] for f in expected} >= {"DG101", "DG102", "DG103", "DG106"}
    assert as_cli(diagnostics) == of_json(expected)
    by_code = {d["code"]: d for d in diagnostics}
    catchup = by_code["DG101"]
    assert catchup["severity"] == 1 and by_code["DG102"]["severity"] == 2   # error, warning
    assert catchup["source"] == "dagguard"
    page = catchup["codeDescription"]["href"]
    assert page.startswith("file://") and page.endswith("/DG101.md") and Path(page[len("file://"):]).is_file()
    finding = next(f for f in expected if f["code"] == "DG101")
    assert catchup["relatedInformation"][0]["message"] == f"help: {finding['help']}"
    assert catchup["data"]["dag_id"] == "orders_hourly"
    assert catchup["data"]["fix"]["safety"] in ("safe", "unsafe")
    assert (catchup["range"]["end"]["line"] + 1, catchup["range"]["end"]["character"] + 1) == \
        (finding["end_line"], finding["end_column"])


def test_buffer_text_is_checked_not_the_file_on_disk(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    path.write_text(SAFE, encoding="utf-8")
    uri = client.open(path, RISKY)
    assert "DG101" in {d["code"] for d in client.diagnostics(uri)}


def test_fix_all_gives_what_fix_gives(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    diagnostics = client.diagnostics(uri)
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": diagnostics, "only": ["source.fixAll.dagguard"]}})
    assert [a["kind"] for a in actions] == ["source.fixAll.dagguard"]
    fixed = apply_action(RISKY, actions[0])
    assert fixed == fixed_by_cli(RISKY, path, project)
    assert fixed != RISKY


def test_quick_fix_applies_that_finding_s_fix(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    diagnostics = client.diagnostics(uri)
    runs = next(d for d in diagnostics if d["code"] == "DG106")
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": runs["range"],
        "context": {"diagnostics": [runs], "only": ["quickfix"]}})
    fixes = [a for a in actions if "noqa" not in a["title"]]
    assert len(fixes) == 1 and fixes[0]["kind"] == "quickfix"
    assert fixes[0]["isPreferred"] is (runs["data"]["fix"]["safety"] == "safe")
    assert apply_action(RISKY, fixes[0]) == fixed_by_cli(RISKY, path, project, "--select", "DG106")


def test_unsafe_fix_is_labelled(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    catchup = next(d for d in client.diagnostics(uri) if d["code"] == "DG101")
    assert catchup["data"]["fix"]["safety"] == "unsafe"
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": catchup["range"], "context": {"diagnostics": [catchup]}})
    fix = next(a for a in actions if a["kind"] == "quickfix" and "noqa" not in a["title"])
    assert fix["title"].endswith("(unsafe fix)") and not fix.get("isPreferred")
    assert apply_action(RISKY, fix) == fixed_by_cli(RISKY, path, project, "--select", "DG101", "--unsafe-fixes")


def test_add_noqa_merges_into_the_existing_comment(client: LspClient, project: Path) -> None:
    text = RISKY.replace("    catchup=True,\n", "    catchup=True,  # noqa: DG999 backfill wanted\n")
    path = project / "dags" / "orders.py"
    uri = client.open(path, text)
    catchup = next(d for d in client.diagnostics(uri) if d["code"] == "DG101")
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": catchup["range"], "context": {"diagnostics": [catchup]}})
    noqa = next(a for a in actions if "noqa" in a["title"])
    edited = apply_action(text, noqa)
    on_disk = project / "dags" / "copy.py"
    on_disk.write_text(text, encoding="utf-8")
    done = dagguard("check", str(on_disk), "--add-noqa", "--select", "DG101", "--now", NOW, cwd=project)
    assert done.returncode in (0, 1), done.stderr
    assert edited == on_disk.read_text(encoding="utf-8")
    assert "# noqa: DG999, DG101 backfill wanted" in edited


def test_change_to_a_fixed_text_clears_the_diagnostic(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    assert "DG101" in {d["code"] for d in client.diagnostics(uri)}
    client.change(uri, SAFE, 2)
    assert client.diagnostics(uri, version=2) == [] == check_json(SAFE, path, project)


def test_a_change_with_the_same_findings_is_published_again(client: LspClient, project: Path) -> None:
    # The client moved the old diagnostics along with its edits: they must be sent again.
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    first = client.diagnostics(uri)
    client.change(uri, RISKY.replace('task_id="start"', 'task_id="begin"'), 2)
    assert client.diagnostics(uri, version=2) == first


def test_results_go_to_the_cache_check_uses(project: Path) -> None:
    path = project / "dags" / "orders.py"
    path.write_text(RISKY, encoding="utf-8")
    cache = project / "cache"     # DAGGUARD_CACHE_DIR, as the CLI reads it
    client = LspClient(project, env={"DAGGUARD_NO_CACHE": "", "DAGGUARD_CACHE_DIR": str(cache)})
    try:
        client.initialize(project, {"now": NOW})
        uri = client.open(path, RISKY)
        published = as_cli(client.diagnostics(uri))
        assert client.close(timeout=30) == 0
    finally:
        client.kill()
    entries = cache / "results-v2"
    stored = sorted(p.name for p in entries.iterdir())
    assert len(stored) == 1
    env = dict(os.environ, PYTHONPATH=str(WORKTREE), DAGGUARD_CACHE_DIR=str(cache))
    env.pop("DAGGUARD_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "dagguard", "check", str(path), "--output-format", "json",
                           "--now", NOW], capture_output=True, text=True, cwd=project, env=env, timeout=120)
    assert of_json(json.loads(done.stdout)) == published
    assert sorted(p.name for p in entries.iterdir()) == stored   # the same entry: check read it


def test_config_reload_changes_the_selection(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    assert "DG102" in {d["code"] for d in client.diagnostics(uri)}
    (project / "pyproject.toml").write_text('[tool.dagguard]\nignore = ["DG102"]\n', encoding="utf-8")
    client.notify("workspace/didChangeWatchedFiles",
                  {"changes": [{"uri": (project / "pyproject.toml").as_uri(), "type": 2}]})
    codes = {d["code"] for d in client.diagnostics(uri, timeout=60)}
    assert "DG102" not in codes and "DG101" in codes


def test_client_configuration_changes_the_selection(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    assert "DG103" in {d["code"] for d in client.diagnostics(uri)}
    client.notify("workspace/didChangeConfiguration",
                  {"settings": {"dagguard": {"config": ["ignore = ['DG103']"], "now": NOW}}})
    assert "DG103" not in {d["code"] for d in client.diagnostics(uri)}


def test_other_tools_settings_keep_the_options(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    first = client.diagnostics(uri)
    client.notify("workspace/didChangeConfiguration", {"settings": {"python": {"analysis": {}}}})
    assert client.diagnostics(uri) == first     # re-checked with the same `now` and config


def test_closing_a_document_clears_its_diagnostics(client: LspClient, project: Path) -> None:
    uri = client.open(project / "dags" / "orders.py", RISKY)
    assert client.diagnostics(uri)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []


def test_broken_buffer_gives_dg000_at_the_error(client: LspClient, project: Path) -> None:
    broken = RISKY.replace('    catchup=True,\n', '    catchup=True,,\n')
    path = project / "dags" / "orders.py"
    uri = client.open(path, broken)
    diagnostics = client.diagnostics(uri)
    expected = check_json(broken, path, project)
    assert [f["code"] for f in expected] == ["DG000"]
    assert as_cli(diagnostics) == of_json(expected)
    assert diagnostics[0]["range"]["start"]["line"] == 8
    client.change(uri, RISKY, 2)       # and the server is still there
    assert "DG101" in {d["code"] for d in client.diagnostics(uri, version=2)}


def test_hostile_buffers_are_findings_not_a_crash(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    deep = "x = " + "(" * 200_000 + ")" * 200_000 + "\n"
    uri = client.open(path, deep)
    deep_findings = client.diagnostics(uri)
    assert [d["code"] for d in deep_findings] == [f["code"] for f in check_json(deep, path, project)] == ["DG000"]
    binary = "\x00\ufffd" * 1000
    other = client.open(project / "dags" / "binary.py", binary)
    assert [d["code"] for d in client.diagnostics(other)] == ["DG000"]
    huge = "x = 1\n" * (11 * 1024 * 1024 // 6)      # beyond the linter's 10 MiB bound
    large = client.open(project / "dags" / "huge.py", huge)
    assert as_cli(client.diagnostics(large)) == of_json(check_json(huge, project / "dags" / "huge.py", project))
    client.change(uri, RISKY, 2)
    assert "DG101" in {d["code"] for d in client.diagnostics(uri, version=2)}


def test_hover_on_a_diagnostic_shows_the_rule_summary(client: LspClient, project: Path) -> None:
    path = project / "dags" / "orders.py"
    uri = client.open(path, RISKY)
    catchup = next(d for d in client.diagnostics(uri) if d["code"] == "DG101")
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": catchup["range"]["start"]})
    value = hover["contents"]["value"]
    assert value.startswith("**DG101 catchup-without-end-date** (error")
    assert "Flags a DAG whose catchup is on" in value and "help: " in value
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 0, "character": 0}}) is None


FACTORY = '''import pendulum
from airflow.sdk import DAG


def make_dag(dag_id):
    return DAG(dag_id=dag_id, schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
               catchup={catchup}, max_active_runs=1, max_active_tasks=4)
'''

CALLER = '''from factories import make_dag

dag = make_dag("built")
'''


def test_a_factory_edited_in_another_buffer_rechecks_its_callers(client: LspClient, project: Path) -> None:
    factory = project / "dags" / "factories.py"
    factory.write_text(FACTORY.format(catchup="False"), encoding="utf-8")
    caller = project / "dags" / "built.py"
    caller.write_text(CALLER, encoding="utf-8")
    caller_uri = client.open(caller, CALLER)
    assert client.diagnostics(caller_uri) == []
    factory_uri = client.open(factory, FACTORY.format(catchup="False"))
    client.diagnostics(factory_uri)
    client.change(factory_uri, FACTORY.format(catchup="True"), 2)   # not saved: the buffer counts
    recheck = client.wait_for("textDocument/publishDiagnostics",
                              lambda p: p["uri"] == caller_uri and p["diagnostics"], timeout=60)
    assert [d["code"] for d in recheck["diagnostics"]] == ["DG101"]
    assert "made by factories.make_dag" in recheck["diagnostics"][0]["message"]
    factory.write_text(FACTORY.format(catchup="True"), encoding="utf-8")
    assert "DG101" in {f["code"] for f in check_json(CALLER, caller, project)}


def test_duplicate_dag_id_across_open_and_on_disk_files(client: LspClient, project: Path) -> None:
    (project / "dags" / "a_first.py").write_text(SAFE, encoding="utf-8")   # on disk only
    path = project / "dags" / "b_second.py"
    path.write_text(SAFE.replace("orders_hourly", "other"), encoding="utf-8")
    uri = client.open(path, SAFE)      # the buffer reuses a_first's dag_id
    deadline_codes: set[str] = set()
    for _ in range(5):
        deadline_codes = {d["code"] for d in client.diagnostics(uri)}
        if "DG302" in deadline_codes:
            break
    assert "DG302" in deadline_codes
    done = dagguard("check", "dags", "--output-format", "json", "--now", NOW, cwd=project)
    assert "DG302" not in {f["code"] for f in json.loads(done.stdout)}   # the disk says otherwise: other
    third = client.open(project / "dags" / "c_third.py", SAFE)
    assert "DG302" in {d["code"] for d in client.diagnostics(third)}


def test_a_file_changed_on_disk_is_compared_again(client: LspClient, project: Path) -> None:
    first = project / "dags" / "a_first.py"
    first.write_text(SAFE.replace("orders_hourly", "other"), encoding="utf-8")
    path = project / "dags" / "b_second.py"
    path.write_text(SAFE, encoding="utf-8")
    uri = client.open(path, SAFE)
    assert client.diagnostics(uri) == []
    time.sleep(3)     # the scan of the project's files is done
    first.write_text(SAFE, encoding="utf-8")       # now the same dag_id as the open buffer's
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": first.as_uri(), "type": 2}]})
    published = client.wait_for("textDocument/publishDiagnostics",
                                lambda p: p["uri"] == uri and p["diagnostics"], timeout=60)
    assert [d["code"] for d in published["diagnostics"]] == ["DG302"]
    assert "dags/a_first.py:5" in published["diagnostics"][0]["message"]


def test_shutdown_and_exit_are_clean(project: Path) -> None:
    client = LspClient(project)
    try:
        result = client.initialize(project)
        capabilities = result["capabilities"]
        assert capabilities["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.fixAll",
                                                                         "source.fixAll.dagguard"]
        assert capabilities["hoverProvider"]
        assert client.close(timeout=30) == 0
    finally:
        client.kill()


def test_a_missing_pygls_names_the_extra(project: Path) -> None:
    code = ("import sys; sys.modules['pygls'] = None; sys.argv = ['dagguard', 'server']; "
            "from dagguard.cli import main; main()")
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip() == ("dagguard: error: dagguard server needs the pygls package: "
                                   "pip install 'dagguard[server]'")


def test_the_linter_does_not_load_pygls(project: Path) -> None:
    code = ("import sys; from dagguard import api; api.check_source('x = 1\\n'); "
            "import dagguard.cli; print(any(m.split('.')[0] in ('pygls', 'lsprotocol') for m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_a_scan_reads_and_writes_the_cache_pack_once(project: Path, monkeypatch) -> None:
    # The files a scan checks share one result cache per settings: its pack is read once and
    # written once, not read and rewritten whole for every file of the project.
    from dagguard.engine import cache as cache_module
    from dagguard.server.documents import ServerState

    for number in range(5):
        (project / "dags" / f"d{number}.py").write_text(RISKY.replace("orders_hourly", f"orders_{number}"),
                                                       encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setenv("DAGGUARD_CACHE_DIR", str(project / "cache"))
    monkeypatch.delenv("DAGGUARD_NO_CACHE", raising=False)
    reads = []
    read_pack = cache_module.ResultCache._read_pack
    monkeypatch.setattr(cache_module.ResultCache, "_read_pack", lambda self: reads.append(self) or read_pack(self))

    state = ServerState(roots=[project])
    files = state.files_to_scan(project)
    caches: dict = {}
    for path in files:
        state.scan_file(path, project, caches)
    state.save_caches(caches)
    assert len(files) == 5
    assert len(reads) == 2   # loaded once; read again right before its one write, to merge
    assert cache_module.stored_paths(project / "cache") == sorted(str(path) for path in files)

    # Another scan answers every file from that pack, with the same results.
    again = ServerState(roots=[project])
    for path in again.files_to_scan(project):
        again.scan_file(path, project, {})
    assert {p: r.findings for p, r in again.disk_results.items()} == \
        {p: r.findings for p, r in state.disk_results.items()}
