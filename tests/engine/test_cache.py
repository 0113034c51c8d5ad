"""The result cache: a warm run gives the same results without parsing; every input of a
result (the file, the modules it resolved through, the settings, the day) re-checks it."""

from __future__ import annotations

import datetime as dt
import marshal
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import libcst
import pytest

from dagguard.api import check_paths
from dagguard.config import Settings, parse_table
from dagguard.engine import cache as cache_module
from dagguard.engine.cache import DEFAULT_DIR_NAME, ResultCache, stored_paths
from dagguard.engine.run import check_paths as run_check_paths
from dagguard.engine.parallel import effective_jobs
from dagguard.rules import ALL_RULES, RULES_BY_CODE
from dagguard.rules.pages import examples, page_text
from tests.lint_helpers import NOW

REPO = Path(__file__).resolve().parents[2]
FACTORY_REPO = REPO / "tests" / "fixtures" / "factory_repo"
HOURLY = """\
import pendulum
from airflow.sdk import DAG

with DAG("orders_hourly", schedule="@hourly", start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
         catchup=True, max_active_runs=1, max_active_tasks=2):
    pass
"""
OTHER = HOURLY.replace('schedule="@hourly"', 'schedule="@daily"')


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts libcst parses (the engine's and the project index's) in this process."""
    calls: list[int] = []
    real = libcst.parse_module

    def counting(source, *args, **kwargs):
        calls.append(1)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    return calls


def _check(paths, cache: Path, settings: Settings | None = None, now: dt.datetime = NOW, jobs: int = 1):
    return check_paths(paths, settings=settings, now=now, jobs=jobs, cache_dir=cache)


def _entries(cache: Path) -> list[str]:
    """The files the cache holds a result for."""
    return stored_paths(cache)


def _packs(cache: Path) -> list[Path]:
    return sorted(p for p in cache.glob("results-v*/*") if not p.name.startswith(".tmp-"))


def _dagguard(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dagguard", "check", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.fixture
def dags(tmp_path: Path) -> Path:
    folder = tmp_path / "dags"
    shutil.copytree(REPO / "example_dags", folder)
    return folder


def test_a_warm_run_gives_the_same_result_and_parses_nothing(dags: Path, tmp_path: Path, parses: list[int]) -> None:
    cold = _check([dags], tmp_path / "cache")
    assert parses and cold.findings
    assert len(_entries(tmp_path / "cache")) == len(list(dags.glob("*.py")))
    parses.clear()
    warm = _check([dags], tmp_path / "cache")
    assert parses == []
    assert warm == cold


def test_editing_a_file_rechecks_it_alone(dags: Path, tmp_path: Path, parses: list[int]) -> None:
    target = dags / "incident_orders_hourly.py"
    before = _check([dags], tmp_path / "cache")
    target.write_text(target.read_text().replace("catchup=True", "catchup=False"))
    parses.clear()
    after = _check([dags], tmp_path / "cache")
    assert len(parses) == 1
    assert after == _check([dags], None)
    assert ("DG101", "incident_orders_hourly.py") in {(f.code, Path(f.path).name) for f in before.findings}
    assert ("DG101", "incident_orders_hourly.py") not in {(f.code, Path(f.path).name) for f in after.findings}


def test_editing_a_factory_rechecks_its_callers(tmp_path: Path, parses: list[int]) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FACTORY_REPO, repo)
    caller = str(repo / "dags" / "absolute.py")
    before = _check([repo / "dags"], tmp_path / "cache")
    assert "DG101" in {f.code for f in before.findings if str(Path(f.path).resolve()) == caller}
    first_parses = len(parses)
    factory = repo / "lib" / "common" / "factory.py"
    factory.write_text(factory.read_text().replace(
        "def create_dag(dag_id, schedule=HOURLY, catchup=True,", "def create_dag(dag_id, schedule=HOURLY, catchup=False,"))
    parses.clear()
    after = _check([repo / "dags"], tmp_path / "cache")
    assert 0 < len(parses) < first_parses  # the callers and the factory, not every file
    assert "DG101" not in {f.code for f in after.findings if str(Path(f.path).resolve()) == caller}
    assert after == _check([repo / "dags"], None)


def test_defining_a_factory_a_caller_already_imports_rechecks_the_caller(tmp_path: Path) -> None:
    # Regression: a module that lacked the imported name was not among the caller's
    # dependencies, so adding the factory there left the caller's "no DAG" result cached.
    repo = tmp_path / "repo"
    (repo / "dags").mkdir(parents=True)
    helpers = repo / "dags" / "helpers.py"
    helpers.write_text("import pendulum\n\nSTART = pendulum.datetime(2025, 1, 1, tz='UTC')\n")
    (repo / "dags" / "caller.py").write_text(
        "from airflow.sdk import DAG\nfrom helpers import make_dag\n\ndag = make_dag('made_hourly')\n")
    before = _check([repo / "dags"], tmp_path / "cache")
    assert "DG101" not in {f.code for f in before.findings}
    helpers.write_text(helpers.read_text() + (
        "\nfrom airflow.sdk import DAG\n\n\ndef make_dag(dag_id):\n"
        "    return DAG(dag_id, schedule='@hourly', start_date=START, catchup=True)\n"))
    after = _check([repo / "dags"], tmp_path / "cache")
    assert ("DG101", "caller.py") in {(f.code, Path(f.path).name) for f in after.findings}
    assert after == _check([repo / "dags"], None)


@pytest.mark.parametrize("created", ["dags/helpers.py", "dags/helpers/__init__.py", "dags/lib/helpers.py",
                                     # two folders that did not exist either (the cache asks folders first)
                                     "dags/lib/deep/er/helpers.py"])
def test_creating_a_module_a_caller_already_imports_rechecks_the_caller(tmp_path: Path, parses: list[int],
                                                                        created: str) -> None:
    # Issue 25 (known since 2026-12-02): the imported module did not exist when the caller's
    # result was stored, so nothing in its entry named it.
    repo = tmp_path / "repo"
    (repo / "dags" / "lib").mkdir(parents=True)
    (repo / "dags" / "lib" / "__init__.py").write_text("")
    name = created.removeprefix("dags/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    (repo / "dags" / "caller.py").write_text(
        f"from airflow.sdk import DAG\nfrom {name} import make_dag\n\ndag = make_dag('made_hourly')\n")
    before = _check([repo / "dags"], tmp_path / "cache")
    assert "DG101" not in {f.code for f in before.findings}
    parses.clear()
    assert _check([repo / "dags"], tmp_path / "cache") == before and parses == []  # nothing created: all warm
    module = repo / created
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text("import pendulum\nfrom airflow.sdk import DAG\n\n\ndef make_dag(dag_id):\n"
                      "    return DAG(dag_id, schedule='@hourly', start_date=pendulum.datetime(2025, 1, 1, tz='UTC'),"
                      " catchup=True)\n")
    after = _check([repo / "dags"], tmp_path / "cache")
    assert ("DG101", "caller.py") in {(f.code, Path(f.path).name) for f in after.findings}
    assert after == _check([repo / "dags"], None)


def test_changed_settings_recheck(dags: Path, tmp_path: Path, parses: list[int]) -> None:
    cache = tmp_path / "cache"
    config = tmp_path / "pyproject.toml"
    plain = _check([dags], cache, Settings(config_path=config))
    parses.clear()
    only = _check([dags], cache, parse_table({"select": ["DG101"]}, config))
    assert parses and {f.code for f in only.findings} == {"DG101"} != {f.code for f in plain.findings}
    parses.clear()
    strict = _check([dags], cache, parse_table({"max-catchup-runs": 5}, config))
    assert parses
    assert strict == _check([dags], None, parse_table({"max-catchup-runs": 5}, config))
    assert strict != plain


def test_another_day_rechecks_the_same_day_does_not(tmp_path: Path, parses: list[int]) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    cache = tmp_path / "cache"
    first = _check([tmp_path / "orders.py"], cache)
    parses.clear()
    _check([tmp_path / "orders.py"], cache, now=NOW + dt.timedelta(hours=1))
    assert parses == []   # the same UTC day: run-count estimates are the day's (README)
    later = _check([tmp_path / "orders.py"], cache, now=NOW + dt.timedelta(days=30))
    assert parses
    message = {f.code: f.message for f in first.findings}["DG101"]
    assert {f.code: f.message for f in later.findings}["DG101"] != message


@pytest.mark.parametrize("damage", ["truncated", "garbage", "foreign", "empty", "bad-checksum"])
def test_a_damaged_entry_is_ignored_and_rewritten(dags: Path, tmp_path: Path, parses: list[int], damage: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # From the checkout, the working folder is a module root: DG301 would follow the example
    # DAGs' IntervalMergeOperator(...) into dagguard's own modules, parses this test does not count.
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    cold = _check([dags], cache)
    stored = _entries(cache)
    for entry in _packs(cache):
        data = entry.read_bytes()
        entry.write_bytes({"truncated": data[:len(data) // 2], "garbage": os.urandom(len(data)),
                           "foreign": b"\x80\x04\x95" + data[3:], "empty": b"",
                           "bad-checksum": data[:-1] + bytes([data[-1] ^ 1])}[damage])
    parses.clear()
    assert _check([dags], cache) == cold
    assert len(parses) == len(stored)   # every file checked again
    parses.clear()
    assert _check([dags], cache) == cold
    assert parses == []                          # and the entries rewritten


def test_duplicate_dag_ids_across_files_on_a_warm_run(tmp_path: Path, parses: list[int]) -> None:
    (tmp_path / "one.py").write_text(HOURLY)
    (tmp_path / "two.py").write_text(OTHER)
    cold = _check([tmp_path], tmp_path / "cache")
    parses.clear()
    warm = _check([tmp_path], tmp_path / "cache")
    assert parses == []
    assert [f.path for f in warm.findings if f.code == "DG302"] == [str(tmp_path / "two.py")]
    assert warm == cold
    (tmp_path / "two.py").write_text(OTHER.replace("orders_hourly", "orders_daily"))
    assert "DG302" not in {f.code for f in _check([tmp_path], tmp_path / "cache").findings}


def test_results_with_internal_errors_and_unreadable_files_are_not_kept(
        tmp_path: Path, parses: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    os.mkfifo(tmp_path / "pipe.py")
    cache = tmp_path / "cache"
    given = [tmp_path / "orders.py", tmp_path / "pipe.py"]   # a FIFO is checked when named

    def broken(self, model, context):
        raise RuntimeError("a rule bug")

    with monkeypatch.context() as patch:
        patch.setattr(type(RULES_BY_CODE["DG101"]), "check", broken)
        assert _check(given, cache).internal_errors
    assert _entries(cache) == []
    parses.clear()
    result = _check(given, cache)
    assert parses and not result.internal_errors
    assert [f.code for f in result.findings if f.path.endswith("pipe.py")] == ["DG000"]
    assert len(_entries(cache)) == 1   # orders.py; the FIFO is never read, so never kept


def test_the_cli_honours_no_cache_the_env_var_and_cache_dir(tmp_path: Path, _private_result_cache: Path) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    assert _dagguard("orders.py", "--no-cache", cwd=tmp_path).returncode == 1
    assert _dagguard("orders.py", cwd=tmp_path, env={"DAGGUARD_NO_CACHE": "1"}).returncode == 1
    assert not _entries(_private_result_cache)
    assert _dagguard("orders.py", cwd=tmp_path).returncode == 1
    assert len(_entries(_private_result_cache)) == 1
    chosen = tmp_path / "chosen"
    assert _dagguard("orders.py", "--cache-dir", str(chosen), cwd=tmp_path).returncode == 1
    assert len(_entries(chosen)) == 1
    assert (chosen / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (chosen / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (tmp_path / DEFAULT_DIR_NAME).exists()


def test_the_default_cache_sits_beside_the_pyproject(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "dags").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.dagguard]\n")
    (project / "dags" / "orders.py").write_text(HOURLY)
    env = {k: v for k, v in os.environ.items() if k != "DAGGUARD_CACHE_DIR"}
    run = subprocess.run([sys.executable, "-m", "dagguard", "check", "orders.py"], cwd=project / "dags",
                         capture_output=True, text=True, timeout=120, env={**env, "PYTHONPATH": str(REPO)})
    assert run.returncode == 1
    assert len(_entries(project / DEFAULT_DIR_NAME)) == 1
    (project / "pyproject.toml").write_text('[tool.dagguard]\ncache-dir = "build/lint-cache"\n')
    subprocess.run([sys.executable, "-m", "dagguard", "check", "orders.py"], cwd=project / "dags",
                   capture_output=True, text=True, timeout=120, env={**env, "PYTHONPATH": str(REPO)})
    assert len(_entries(project / "build" / "lint-cache")) == 1


def test_stdin_and_dags_do_not_use_the_cache(tmp_path: Path, _private_result_cache: Path) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    run = subprocess.run([sys.executable, "-m", "dagguard", "check", "-"], input=HOURLY, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 1
    listed = subprocess.run([sys.executable, "-m", "dagguard", "dags", "orders.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "orders_hourly" in listed.stdout
    assert not _entries(_private_result_cache)


def test_two_concurrent_runs_share_a_cache_dir(dags: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = [sys.executable, "-m", "dagguard", "check", str(dags), "--output-format", "json", "--jobs", "1",
            "--cache-dir", str(cache), "--now", "2026-11-30T00:00:00Z"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [1, 1]
    assert outputs[0] == outputs[1] and outputs[0][1] == ""
    assert len(_entries(cache)) == len(list(dags.glob("*.py")))
    assert not list(cache.glob("results-v*/.tmp-*"))
    warm = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert (warm.stdout, warm.stderr) == outputs[0]


def _corpus(folder: Path) -> Path:
    """example_dags/ and every example of every rule page, each page example in its own folder."""
    shutil.copytree(REPO / "example_dags", folder / "example_dags")
    for rule in ALL_RULES:
        for example in examples(page_text(rule.code) or ""):
            home = folder / "pages" / f"{rule.code}_{example.kind}_{example.number}"
            for name, text in example.files:
                (home / name).parent.mkdir(parents=True, exist_ok=True)
                (home / name).write_text(text, encoding="utf-8")
            home.mkdir(parents=True, exist_ok=True)
            (home / "example_dag.py").write_text(example.code, encoding="utf-8")
    return folder


def test_the_same_results_with_one_job_two_jobs_and_a_warm_cache(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    files = list(corpus.rglob("*.py"))
    assert effective_jobs(2, len(files)) == 2   # the two-job run does use two processes
    settings = Settings(config_path=corpus / "pyproject.toml")
    one = check_paths([corpus], settings=settings, now=NOW, jobs=1)
    two = check_paths([corpus], settings=settings, now=NOW, jobs=2)
    assert one.findings and {f.code for f in one.findings} >= {"DG101", "DG302"}
    cold = _check([corpus], tmp_path / "cache", settings, jobs=2)
    assert len(_entries(tmp_path / "cache")) == len(files)
    warm = _check([corpus], tmp_path / "cache", settings, jobs=2)
    assert one == two == cold == warm


def test_another_working_folder_shows_its_own_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "orders.py").write_text(HOURLY)
    target = tmp_path / "dags"   # absolute: the shown path still depends on the working folder
    monkeypatch.chdir(tmp_path)
    here = _check([target], tmp_path / "cache")
    monkeypatch.chdir(target)
    there = _check([target], tmp_path / "cache")
    assert {f.path for f in here.findings} == {"dags/orders.py"}
    assert {f.path for f in there.findings} == {"orders.py"}


def test_editing_a_sql_file_rechecks_the_dag_that_reads_it(tmp_path: Path, parses: list[int]) -> None:
    (tmp_path / "load.sql").write_text("INSERT INTO t SELECT * FROM s WHERE d = '{{ next_ds }}'")
    (tmp_path / "dag.py").write_text("""\
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import DAG

with DAG("d", schedule="@daily", max_active_runs=1, max_active_tasks=1):
    SQLExecuteQueryOperator(task_id="t", sql="load.sql")
""")
    before = _check([tmp_path / "dag.py"], tmp_path / "cache")
    assert "DG205" in {f.code for f in before.findings}   # next_ds is gone in Airflow 3
    (tmp_path / "load.sql").write_text("INSERT INTO t SELECT * FROM s WHERE d = '{{ ds }}'")
    parses.clear()
    after = _check([tmp_path / "dag.py"], tmp_path / "cache")
    assert parses
    assert "DG205" not in {f.code for f in after.findings}


def test_a_cache_that_cannot_be_written_is_a_warning_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    (tmp_path / "blocked").write_text("a file where the cache folder would go")
    result = _check([tmp_path / "orders.py"], tmp_path / "blocked")
    assert result == replace(_check([tmp_path / "orders.py"], None), warnings=result.warnings)
    (warning,) = result.warnings
    assert warning.startswith(f"cannot write the cache in {tmp_path / 'blocked'}: ")
    assert warning.endswith("; results are not cached")
    run = _dagguard("orders.py", "--cache-dir", "blocked", cwd=tmp_path)
    assert run.returncode == 1
    assert "dagguard: warning: cannot write the cache in blocked" in run.stderr


def test_markers_go_only_into_a_folder_the_cache_has_to_itself(tmp_path: Path) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    shared = tmp_path / "build"
    shared.mkdir()
    (shared / "report.txt").write_text("someone else's file")
    _check([tmp_path / "orders.py"], shared)
    assert len(_entries(shared)) == 1
    assert not (shared / ".gitignore").exists() and not (shared / "CACHEDIR.TAG").exists()


# --- the pack (issue 25): one file per configuration, stats vouching for unchanged files -------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the cache reads to hash (not the checker's reads)."""
    calls: list[str] = []
    real = cache_module.read_source

    def counting(path, max_bytes):
        calls.append(Path(path).name)
        return real(path, max_bytes)

    monkeypatch.setattr(cache_module, "read_source", counting)
    return calls


def test_a_warm_run_trusts_unchanged_stats_and_rechecks_an_edit_that_keeps_size_and_mtime(
        dags: Path, tmp_path: Path, parses: list[int], reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written by a test are seconds old: the racy-clean margin would keep every stat out.
    monkeypatch.setattr(cache_module, "_RACY_NS", 0)
    cache = tmp_path / "cache"
    cold = _check([dags], cache)
    reads.clear()
    parses.clear()
    assert _check([dags], cache) == cold
    assert reads == [] and parses == []   # nothing read, nothing parsed
    target = dags / "incident_orders_hourly.py"
    before = target.stat()
    text = target.read_text()
    target.write_text(text.replace("catchup=True", "catchup=Nope"))   # same size, same mtime:
    assert target.stat().st_size == before.st_size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    after = _check([dags], cache)
    assert reads == ["incident_orders_hourly.py"] and len(parses) == 1   # ctime moved: read, re-checked
    assert after == _check([dags], None) != cold


def test_a_file_edited_just_before_its_read_keeps_no_stat(tmp_path: Path, reads: list[str]) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    cache = tmp_path / "cache"
    _check([tmp_path / "orders.py"], cache)
    reads.clear()
    _check([tmp_path / "orders.py"], cache)
    assert reads == ["orders.py"]   # within the margin: hashed again, not trusted by its stat


def test_a_pack_of_another_dagguard_version_is_ignored_and_replaced(dags: Path, tmp_path: Path, parses: list[int],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "__version__", "0.0.1")
        old = _check([dags], cache)
    (cache / "results-v1").mkdir()                       # an older format's folder is not read
    (cache / "results-v1" / "entry").write_bytes(b"old")
    parses.clear()
    assert _check([dags], cache) == old
    assert parses                                        # every file checked again
    assert len(_packs(cache)) == 2 and len(_entries(cache)) == len(list(dags.glob("*.py")))
    parses.clear()
    assert _check([dags], cache) == old and parses == []


def test_a_pack_of_an_unexpected_shape_is_a_miss_not_a_traceback(tmp_path: Path, parses: list[int]) -> None:
    (tmp_path / "orders.py").write_text(HOURLY)
    cache = tmp_path / "cache"
    cold = _check([tmp_path / "orders.py"], cache)
    (pack,) = _packs(cache)
    stamp = ResultCache(cache, Settings(), NOW)._stamp
    for entries in ({str(tmp_path / "orders.py"): ("not", "an", "entry")}, {str(tmp_path / "orders.py"): 3}):
        pack.write_bytes(cache_module._wrap(marshal.dumps((stamp, entries, {}))))
        parses.clear()
        assert _check([tmp_path / "orders.py"], cache) == cold
        assert parses
    parses.clear()
    assert _check([tmp_path / "orders.py"], cache) == cold and parses == []   # rewritten


def test_two_runs_writing_one_pack_keep_each_others_entries(tmp_path: Path) -> None:
    for name in ("first.py", "second.py"):
        (tmp_path / name).write_text(HOURLY.replace("orders_hourly", name[:-3]))
    cache, settings = tmp_path / "cache", Settings()
    one, two = ResultCache(cache, settings, NOW), ResultCache(cache, settings, NOW)
    assert one.lookup_many([tmp_path / "first.py"])[1] == [None]
    assert two.lookup_many([tmp_path / "second.py"])[1] == [None]   # both read the empty pack
    run_check_paths([tmp_path / "first.py"], settings, NOW, cache=one)
    run_check_paths([tmp_path / "second.py"], settings, NOW, cache=two)   # merges what `one` wrote
    assert _entries(cache) == [str(tmp_path / "first.py"), str(tmp_path / "second.py")]
    assert not list(cache.glob("results-v*/.tmp-*"))


def test_an_older_formats_packs_are_deleted_when_this_format_first_writes(dags: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "results-v1" / "ab").mkdir(parents=True)    # format 1 kept an entry file per checked file
    (cache / "results-v1" / "ab" / "entry").write_bytes(b"old")
    (cache / "results-vnext").mkdir()                    # not a format folder of ours: kept
    (cache / "notes.txt").write_text("mine")
    first = _check([dags], cache)
    assert not (cache / "results-v1").exists()
    assert (cache / "results-vnext").is_dir() and (cache / "notes.txt").read_text() == "mine"
    assert len(_entries(cache)) == len(list(dags.glob("*.py"))) and _check([dags], cache) == first
