"""Side-by-side speed and peak memory of dagguard and other Airflow linters on one file list.

Every tool gets the same explicit list of files (as pre-commit would pass them) and runs as a
whole process (interpreter start-up included), the floors too. Tools are run in alternating
rounds (each tool once per round), so load on a shared machine hits all of them alike; the
median wall-clock time, CPU seconds and peak RSS are reported, with ratios to a bare
``libcst.parse_module`` of the same files.

    python benchmarks/compare.py --build 2000 --tools-venv /work/bench-venv   # generated corpus
    python benchmarks/compare.py /path/to/dags --tools-venv /work/bench-venv --runs 3

``--build N`` replicates the example DAGs shipped in the installed apache-airflow package, with
distinct dag_ids, up to N files. Peer tools (ruff, dagruff, daglint, airflint, pylint +
pylint-airflow) are looked up in ``--tools-venv`` (or next to this interpreter, then on PATH);
a tool that is missing or cannot run is skipped with the reason, never fatal. See
benchmarks/README.md for how to install them.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"

# Runs airflint's own CLI (its rule list, its argument parsing) with one change: a file that
# makes airflint raise is counted and skipped instead of aborting the whole run, so it sees
# the same files as every other tool. Prints {"changed": n, "failed": n} as its last line.
AIRFLINT_DRIVER = r"""
import json, sys
from concurrent.futures import ProcessPoolExecutor
import refactor.runner

stats = {"changed": 0, "failed": 0, "first_error": None}

def _record_error(exc):
    stats["failed"] += 1
    if stats["first_error"] is None:
        stats["first_error"] = f"{type(exc).__name__}: {exc}"

def _consume(change):
    if change is not None:
        stats["changed"] += 1
        sys.stdout.write(change.compute_diff())

def tolerant_run_files(session, files, apply=False, workers=1):
    files = list(files)
    if workers == 1:
        for path in files:
            try:
                change = session.run_file(path)
            except Exception as exc:
                _record_error(exc)
                continue
            _consume(change)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(session.run_file, path) for path in files]:
                try:
                    change = future.result()
                except Exception as exc:
                    _record_error(exc)
                    continue
                _consume(change)
    return 0

refactor.runner.run_files = tolerant_run_files
from airflint.__main__ import main
sys.argv = ["airflint"] + sys.argv[1:]
try:
    main()
except SystemExit:
    pass
print("\n" + json.dumps(stats))
"""

PYLINT_AIRFLOW_MESSAGES = r"""
import inspect, pylint_airflow.checkers as checkers
ids = sorted(k for o in vars(checkers).values() if inspect.isclass(o) and hasattr(o, "msgs") for k in o.msgs)
print(",".join(ids))
"""


class ToolUnavailable(Exception):
    """The tool is not installed or cannot run here; the message says why."""


class ToolFailed(Exception):
    """The tool ran but failed; the message says how."""


@dataclasses.dataclass(frozen=True)
class Run:
    """One timed run of a tool: what it found and what its processes cost."""

    findings: int | None
    wall_s: float
    cpu_s: float
    peak_mb: float
    failed_files: int = 0
    first_error: str | None = None


@dataclasses.dataclass(frozen=True)
class Tool:
    """A measured tool: ``prepare`` checks it can run and returns one run."""

    name: str
    parallelism: str
    prepare: Callable[[Setup], Callable[[], Run]]
    note: str = ""
    slow: bool = False  # run once unless --runs-slow says otherwise


@dataclasses.dataclass(frozen=True)
class Result:
    """What one tool did on the file list."""

    tool: str
    status: str  # "ok", "skipped" or "failed"
    reason: str = ""
    median_s: float | None = None
    runs_s: tuple[float, ...] = ()
    median_cpu_s: float | None = None
    runs_cpu_s: tuple[float, ...] = ()
    peak_mb: float | None = None
    findings: int | None = None
    parallelism: str = ""
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Setup:
    """Everything the tools share: the files, where to find the peers, limits."""

    files: tuple[Path, ...]
    folders: tuple[Path, ...]
    single: Path
    tools_bin: tuple[Path, ...]
    workdir: Path
    timeout_s: float
    cores: int

    @property
    def file_list(self) -> Path:
        """The file list, one path a line, for the floors' drivers."""
        return self.workdir / "files.txt"


# --- file list ---------------------------------------------------------------------------------


def installed_airflow_dir() -> Path | None:
    """The installed apache-airflow package directory, found without importing Airflow."""
    spec = importlib.util.find_spec("airflow")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_folders() -> list[Path]:
    """The example_dags folders shipped inside the installed apache-airflow packages."""
    base = installed_airflow_dir()
    if base is None:
        return []
    return sorted(p for p in base.rglob("example_dags") if p.is_dir())


def collect_files(paths: Sequence[Path]) -> list[Path]:
    """Every .py file under the given folders (or the files themselves), sorted, deduplicated.

    Hidden folders (.git, .venv, .tox ...) below a given folder are skipped, as linters do.
    """
    files: set[Path] = set()
    for path in paths:
        if path.is_file():
            files.add(path.resolve())
        elif path.is_dir():
            files.update(
                p.resolve()
                for p in path.rglob("*.py")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts[:-1])
            )
    return sorted(files)


def dag_names(source: str) -> tuple[set[str], set[str]]:
    """The static dag_ids a file spells out, and the @dag functions whose name is the dag_id."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), set()
    ids: set[str] = set()
    functions: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee == "DAG" and node.args and isinstance(node.args[0], ast.Constant):
                ids.add(str(node.args[0].value))
            ids.update(str(k.value.value) for k in node.keywords
                       if k.arg == "dag_id" and isinstance(k.value, ast.Constant))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name == "dag":
                    functions.add(node.name)
    return ids, functions


def replicate(source: str, copy: int) -> str:
    """`source` with every dag_id it spells out made unique to this copy."""
    if copy == 0:
        return source
    ids, functions = dag_names(source)
    for dag_id in sorted(ids, key=len, reverse=True):
        for quote in ('"', "'"):
            source = source.replace(f"{quote}{dag_id}{quote}", f"{quote}{dag_id}_c{copy}{quote}")
    for name in functions:
        source = re.sub(rf"\b{re.escape(name)}\b", f"{name}_c{copy}", source)
    return source


def build_corpus(target: Path, count: int) -> list[Path]:
    """Airflow's example DAGs replicated with distinct dag_ids into `target`, `count` files."""
    sources = [(folder, path) for folder in default_folders() for path in collect_files([folder])]
    if not sources:
        raise SystemExit("--build needs apache-airflow installed (its example_dags are the corpus)")
    written: list[Path] = []
    copy = 0
    while len(written) < count:
        for folder, path in sources:
            if len(written) == count:
                break
            out = target / f"copy_{copy:03d}" / folder.parent.name / path.relative_to(folder)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(replicate(path.read_text(encoding="utf-8"), copy), encoding="utf-8")
            written.append(out)
        copy += 1
    return sorted(written)


def fingerprint(files: Sequence[Path]) -> tuple[str, int, int]:
    """sha256 over paths and contents, total bytes and total lines of the file list."""
    digest = hashlib.sha256()
    n_bytes = n_lines = 0
    for path in files:
        data = path.read_bytes()
        digest.update(str(path).encode() + b"\0" + data + b"\0")
        n_bytes += len(data)
        n_lines += data.count(b"\n")
    return digest.hexdigest(), n_bytes, n_lines


# --- running subprocesses ----------------------------------------------------------------------


def find_executable(name: str, setup: Setup) -> Path | None:
    """``name`` in the tools venv, else beside this interpreter, else on PATH."""
    for folder in setup.tools_bin:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    return Path(found) if found else None


@dataclasses.dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    peak_mb: float  # the largest RSS of the process or of any of its children (a pool's workers)


# Starts the tool from a fresh, small interpreter and reports the tool's own rusage: on Linux a
# child's peak RSS starts from the memory of the process it was forked from, so forking the
# tool straight from this (larger) process would put this process's size under every row.
LAUNCHER = r"""
import json, os, shutil, sys, time
usage_path, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
start = time.perf_counter()
try:
    pid = os.posix_spawn(shutil.which(argv[0]) or argv[0], argv, os.environ)
except OSError as exc:
    sys.exit(f"cannot start {argv[0]}: {exc}")
deadline = time.monotonic() + timeout
timed_out = False
while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        done, status, usage = os.wait4(pid, 0)
        timed_out = True
        break
    time.sleep(0.001)
wall = time.perf_counter() - start
with open(usage_path, "w") as handle:
    json.dump({"exit": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime,
               "peak_kb": usage.ru_maxrss, "timed_out": timed_out, "wall_s": wall}, handle)
"""


def run_command(argv: Sequence[str], setup: Setup, ok_codes: Sequence[int],
                env: dict[str, str] | None = None) -> Completed:
    """Run (in the scratch directory main() moved to); raise ToolFailed on a bad exit.

    CPU and peak RSS are the tool's own (os.wait4 in LAUNCHER), its pool workers included.
    """
    usage_file = setup.workdir / "usage.json"
    usage_file.unlink(missing_ok=True)
    launcher = [sys.executable, "-S", "-c", LAUNCHER, str(usage_file), str(setup.timeout_s), *argv]
    with tempfile.TemporaryFile(dir=setup.workdir) as out, tempfile.TemporaryFile(dir=setup.workdir) as err:
        try:
            subprocess.run(launcher, stdout=out, stderr=err, env={**os.environ, **(env or {})}, check=False)
        except OSError as exc:
            raise ToolFailed(f"cannot start: {exc}") from exc
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    try:
        usage = json.loads(usage_file.read_text())
    except (OSError, json.JSONDecodeError):
        raise ToolFailed(f"cannot start: {stderr.strip()[-300:]}") from None
    if usage["timed_out"]:
        raise ToolFailed(f"timed out after {setup.timeout_s:.0f} s")
    done = Completed(usage["exit"], stdout, stderr, usage["wall_s"], usage["cpu_s"], usage["peak_kb"] / 1024)
    if done.returncode not in ok_codes:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise ToolFailed(f"exit {done.returncode}: {tail[0][:300]}")
    return done


def probe(argv: Sequence[str], setup: Setup, what: str) -> str:
    """Run a quick command that must succeed; its stdout, or ToolUnavailable with the reason."""
    try:
        return run_command(argv, setup, ok_codes=(0,)).stdout.strip()
    except ToolFailed as exc:
        raise ToolUnavailable(f"{what}: {exc}") from exc


def tool_python(setup: Setup, module: str) -> Path:
    """The interpreter of the tools venv that has ``module`` importable, else why not."""
    reasons: list[str] = []
    for folder in setup.tools_bin:
        python = folder / "python"
        if not python.is_file():
            continue
        check = subprocess.run(
            [str(python), "-c", f"import {module}"], check=False, capture_output=True, text=True, cwd=setup.workdir
        )
        if check.returncode == 0:
            return python
        last = check.stderr.strip().splitlines()[-1:] or ["(no output)"]
        reasons.append(f"{python}: {last[0][:160]}")
    raise ToolUnavailable(f"cannot import {module}: " + "; ".join(reasons))


def count_json(stdout: str) -> int | None:
    """Findings in a JSON list (or a {'findings': [...]} object) on stdout; None if not JSON."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict):
        data = next((data[key] for key in ("findings", "diagnostics", "issues") if key in data), None)
    return len(data) if isinstance(data, list) else None


def sample(done: Completed, findings: int | None, failed: int = 0, first_error: str | None = None) -> Run:
    return Run(findings, done.wall_s, done.cpu_s, done.peak_mb, failed, first_error)


# --- the tools ---------------------------------------------------------------------------------

# The floors: read and parse every file of the list in one fresh process; prints files rejected.
FLOOR_DRIVER = r"""
import sys
paths = open(sys.argv[2]).read().splitlines()
if sys.argv[1] == "libcst":
    import libcst
    parse = libcst.parse_module
else:
    import ast
    parse = ast.parse
errors = 0
for path in paths:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        parse(data)
    except Exception:
        errors += 1
print(errors)
"""


def floor(parser: str) -> Callable[[Setup], Callable[[], Run]]:
    """``ast.parse`` or ``libcst.parse_module`` of every file, in one process of this interpreter."""

    def prepare(setup: Setup) -> Callable[[], Run]:
        argv = [sys.executable, "-c", FLOOR_DRIVER, parser, str(setup.file_list)]

        def run() -> Run:
            done = run_command(argv, setup, ok_codes=(0,))
            return sample(done, int(done.stdout.strip() or 0))

        return run

    return prepare


def dagguard_cli(jobs: int | None, single: bool = False, warm: bool = False) -> Callable[[Setup], Callable[[], Run]]:
    """``dagguard check --format json`` on the list (or one file), as users and pre-commit run it.

    Cold rows run with ``--no-cache``; the warm row's cache is filled by one untimed run first,
    so every timed run is a re-run with nothing changed."""

    def prepare(setup: Setup) -> Callable[[], Run]:
        base = [sys.executable, "-m", "dagguard"]
        probe([*base, "check", "--help"], setup, "dagguard: not available (no `dagguard check`)")
        options = ["--jobs", str(jobs)] if jobs else []
        cache = ["--cache-dir", str(setup.workdir / "dagguard-cache")] if warm else ["--no-cache"]
        targets = [str(setup.single)] if single else list(map(str, setup.files))
        argv = [*base, "check", "--format", "json", "--exit-zero", *options, *cache, *targets]
        if warm:
            run_command(argv, setup, ok_codes=(0,))

        def run() -> Run:
            done = run_command(argv, setup, ok_codes=(0,))
            return sample(done, count_json(done.stdout))

        return run

    return prepare


def ruff(preview: bool, single: bool = False) -> Callable[[Setup], Callable[[], Run]]:
    """``ruff check --select AIR --no-cache``, all cores (ruff's default)."""

    def prepare(setup: Setup) -> Callable[[], Run]:
        exe = find_executable("ruff", setup)
        if exe is None:
            raise ToolUnavailable("ruff not installed (pip install ruff)")
        probe([str(exe), "--version"], setup, "ruff")
        targets = [str(setup.single)] if single else list(map(str, setup.files))
        argv = [str(exe), "check", "--isolated", "--no-cache", "--select", "AIR", *(["--preview"] if preview else []),
                "--output-format", "json", "--exit-zero", *targets]

        def run() -> Run:
            done = run_command(argv, setup, ok_codes=(0,))
            return sample(done, count_json(done.stdout))

        return run

    return prepare


def dagruff(setup: Setup) -> Callable[[], Run]:
    """dagruff's CLI with its cache off (a cold run), JSON output; it skips hidden folders."""
    exe = find_executable("dagruff", setup)
    if exe is None:
        raise ToolUnavailable("dagruff not installed (pip install dagruff)")
    probe([str(exe), "--help"], setup, "dagruff")
    argv = [str(exe), "--no-cache", "--format", "json", "--exit-zero", "--log-level", "ERROR",
            *map(str, setup.files)]

    def run() -> Run:
        done = run_command(argv, setup, ok_codes=(0,))
        return sample(done, count_json(done.stdout))

    return run


def daglint(setup: Setup) -> Callable[[], Run]:
    """daglint's CLI on the corpus folder (it takes one PATH, not a file list), JSON output."""
    exe = find_executable("daglint", setup)
    if exe is None:
        raise ToolUnavailable("daglint not installed (pip install daglint)")
    probe([str(exe), "--version"], setup, "daglint")
    if len(setup.folders) != 1 or not setup.folders[0].is_dir():
        raise ToolUnavailable("daglint takes one folder, not a file list: give one corpus folder")
    argv = [str(exe), "check", "--format", "json", str(setup.folders[0])]

    def run() -> Run:
        done = run_command(argv, setup, ok_codes=(0, 1))
        return sample(done, count_json(done.stdout))

    return run


def airflint(workers: int) -> Callable[[Setup], Callable[[], Run]]:
    """airflint's CLI via a driver that survives files airflint crashes on (see AIRFLINT_DRIVER)."""

    def prepare(setup: Setup) -> Callable[[], Run]:
        if find_executable("airflint", setup) is None:
            raise ToolUnavailable("airflint not installed (pip install --pre airflint)")
        python = tool_python(setup, "airflint.__main__")
        argv = [str(python), "-c", AIRFLINT_DRIVER, "--workers", str(workers), *map(str, setup.files)]

        def run() -> Run:
            done = run_command(argv, setup, ok_codes=(0,))
            stats = json.loads(done.stdout.strip().splitlines()[-1])
            return sample(done, int(stats["changed"]), stats["failed"], stats["first_error"])

        return run

    return prepare


def pylint_airflow(jobs: int) -> Callable[[Setup], Callable[[], Run]]:
    """pylint with only pylint-airflow's messages enabled; Airflow's sources visible to astroid."""

    def prepare(setup: Setup) -> Callable[[], Run]:
        exe = find_executable("pylint", setup)
        if exe is None:
            raise ToolUnavailable("pylint not installed (pip install 'pylint<3' --pre pylint-airflow)")
        try:
            python = tool_python(setup, "pylint_airflow")
        except ToolUnavailable as exc:
            raise ToolUnavailable(f"{exc} (pylint-airflow 0.1.0a1 needs pylint<3)") from exc
        messages = probe([str(python), "-c", PYLINT_AIRFLOW_MESSAGES], setup, "pylint-airflow")
        smoke = setup.workdir / "pylint_airflow_smoke.py"
        smoke.write_text("VALUE = 1\n")
        probe(
            [str(exe), "--load-plugins=pylint_airflow", "--disable=all", f"--enable={messages}",
             "--persistent=n", "--score=n", "--rcfile=/dev/null", str(smoke)],
            setup,
            "pylint-airflow cannot load (0.1.0a1 needs pylint<3)",
        )  # fmt: skip
        # F0001/F0002 are enabled too: they are how pylint reports a file it could not check
        # (a plugin exception included), counted apart from the plugin's findings.
        argv = [
            str(exe), "--load-plugins=pylint_airflow", "--disable=all", f"--enable={messages},F0001,F0002",
            "--output-format=json", "--persistent=n", "--score=n", "--rcfile=/dev/null", f"--jobs={jobs}",
        ]  # fmt: skip
        airflow_dir = installed_airflow_dir()
        if airflow_dir is not None:
            # Appended, not prepended: the tools venv's own packages win; astroid can still
            # find airflow's sources to infer operators, as it would in a user's Airflow env.
            hook = f"import sys; sys.path.append({str(airflow_dir.parent)!r})"
            argv.append(f"--init-hook={hook}")
        argv.extend(map(str, setup.files))

        def run() -> Run:
            # pylint's exit code is a bit mask of message kinds; 32 is a usage error.
            proc = run_command(argv, setup, ok_codes=tuple(range(32)))
            try:
                messages_out = json.loads(proc.stdout)
            except json.JSONDecodeError:
                # With --jobs > 1 an exception inside a plugin aborts the whole run, no report.
                tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
                raise ToolFailed(f"exit {proc.returncode}, no report (aborted): {tail[0][:200]}") from None
            fatal = [m for m in messages_out if m.get("message-id", "").startswith("F")]
            return sample(proc, len(messages_out) - len(fatal), len(fatal), fatal[0]["symbol"] if fatal else None)

        return run

    return prepare


PYLINT_NOTE = "only pylint-airflow's messages; installed Airflow on astroid's path"
PARSE_FLOOR = "libcst.parse_module (floor)"
WARM = "dagguard check, warm cache"


def build_tools(args: argparse.Namespace, cores: int) -> list[Tool]:
    """The rows of the table, in order."""
    tools = [
        Tool(PARSE_FLOOR, "1 process", floor("libcst"), "files it rejects"),
        Tool("ast.parse (floor)", "1 process", floor("ast"), "files it rejects"),
        Tool("dagguard check --jobs 1", "1 process", dagguard_cli(1)),
        Tool(f"dagguard check (--jobs {cores})", f"{cores} processes", dagguard_cli(None), "the default"),
        Tool("dagguard check, one file", "1 process", dagguard_cli(None, single=True), "pre-commit's case"),
        Tool(WARM, f"{cores} processes", dagguard_cli(None, warm=True), "a re-run, nothing changed"),
        Tool("ruff --select AIR", f"{cores} threads", ruff(preview=False)),
        Tool("ruff --select AIR --preview", f"{cores} threads", ruff(preview=True)),
        Tool("ruff --select AIR, one file", "1 thread", ruff(preview=False, single=True)),
        Tool("dagruff --no-cache", "1 process", dagruff, "skips hidden folders"),
        Tool("daglint", "1 process", daglint, "given the folder"),
        Tool("airflint -w 1", "1 process", airflint(1), slow=True),
        Tool("pylint + pylint-airflow", "1 process", pylint_airflow(1), PYLINT_NOTE, slow=True),
    ]
    wanted = set(args.only or [])
    return [t for t in tools if not wanted or any(w.lower() in t.name.lower() for w in wanted)]


# --- measuring ---------------------------------------------------------------------------------


def measure(tools: Sequence[Tool], setup: Setup, runs: int, slow_runs: int) -> list[Result]:
    """Alternating rounds: every tool once per round, slow ones only in their first rounds; never raises."""
    ready: dict[str, Callable[[], Run]] = {}
    results: dict[str, Result] = {}
    for tool in tools:
        try:
            ready[tool.name] = tool.prepare(setup)
        except ToolUnavailable as exc:
            results[tool.name] = Result(tool.name, "skipped", str(exc), parallelism=tool.parallelism, note=tool.note)
        except Exception as exc:  # noqa: BLE001  (a broken tool must not stop the others)
            results[tool.name] = Result(tool.name, "skipped", f"{type(exc).__name__}: {exc}",
                                        parallelism=tool.parallelism)
    samples: dict[str, list[Run]] = {name: [] for name in ready}
    for round_number in range(runs):
        for tool in tools:
            if tool.name not in ready or (tool.slow and round_number >= slow_runs):
                continue
            print(f"  round {round_number + 1}/{runs}  {tool.name} ...", end=" ", flush=True)
            try:
                run = ready[tool.name]()
            except (ToolFailed, Exception) as exc:  # noqa: BLE001
                reason = str(exc) if isinstance(exc, ToolFailed) else f"{type(exc).__name__}: {exc}"
                results[tool.name] = Result(tool.name, "failed", reason, parallelism=tool.parallelism, note=tool.note)
                del ready[tool.name]
                print(f"failed: {reason}", flush=True)
                continue
            samples[tool.name].append(run)
            print(f"{run.wall_s:.3f} s, {run.cpu_s:.2f} cpu s, {run.peak_mb:.0f} MB", flush=True)
    for tool in tools:
        if tool.name in ready and samples[tool.name]:
            results[tool.name] = summarise(tool, samples[tool.name], len(setup.files))
    return [results[tool.name] for tool in tools if tool.name in results]


def summarise(tool: Tool, runs: Sequence[Run], n_files: int) -> Result:
    last = runs[-1]
    note = tool.note
    if last.failed_files:
        note = f"{note}; crashed on {last.failed_files} files ({(last.first_error or '')[:80]})".lstrip("; ")
    return Result(
        tool.name, "ok", median_s=statistics.median(r.wall_s for r in runs), runs_s=tuple(r.wall_s for r in runs),
        median_cpu_s=statistics.median(r.cpu_s for r in runs), runs_cpu_s=tuple(r.cpu_s for r in runs),
        peak_mb=max(r.peak_mb for r in runs), findings=last.findings, parallelism=tool.parallelism, note=note,
    )  # fmt: skip


def format_table(results: Sequence[Result]) -> str:
    """Median wall and CPU seconds, their ratio to the libcst parse floor, peak memory."""
    base = next((r for r in results if r.tool == PARSE_FLOOR and r.median_s), None)
    header = (f"{'tool':32} {'median s':>9} {'x parse':>8} {'cpu s':>8} {'x parse':>8} {'peak MB':>8} "
              f"{'findings':>8} {'runs':>4}  parallelism / note")
    lines = [header, "-" * len(header)]
    for r in results:
        if r.status != "ok" or r.median_s is None or r.median_cpu_s is None:
            lines.append(f"{r.tool:32} {r.status:>9}  {r.reason[:150]}")
            continue
        wall_ratio = f"{r.median_s / base.median_s:8.2f}" if base else f"{'-':>8}"
        cpu_ratio = f"{r.median_cpu_s / base.median_cpu_s:8.2f}" if base and base.median_cpu_s else f"{'-':>8}"
        findings = "-" if r.findings is None else str(r.findings)
        note = ", ".join(x for x in (r.parallelism, r.note) if x)
        lines.append(f"{r.tool:32} {r.median_s:9.3f} {wall_ratio} {r.median_cpu_s:8.2f} {cpu_ratio} "
                     f"{r.peak_mb:8.0f} {findings:>8} {len(r.runs_s):>4}  {note}")
    return "\n".join(lines)


def ratios(results: Sequence[Result]) -> dict[str, float]:
    """The issue's target ratios, from medians of this run."""
    by_name = {r.tool: r for r in results if r.status == "ok" and r.median_s}
    out: dict[str, float] = {}

    def ratio(key: str, numerator: str, denominator: str, field: str = "median_s") -> None:
        a, b = by_name.get(numerator), by_name.get(denominator)
        if a is not None and b is not None and getattr(b, field):
            out[key] = round(getattr(a, field) / getattr(b, field), 2)

    one_job = "dagguard check --jobs 1"
    all_jobs = next((name for name in by_name if name.startswith("dagguard check (--jobs")), "")
    ratio("dagguard 1 job / libcst parse (wall)", one_job, PARSE_FLOOR)
    ratio("dagguard 1 job / libcst parse (cpu)", one_job, PARSE_FLOOR, "median_cpu_s")
    ratio("dagguard 1 job / all jobs (wall)", one_job, all_jobs)
    ratio("airflint / dagguard all jobs (wall)", "airflint -w 1", all_jobs)
    ratio("pylint-airflow / dagguard all jobs (wall)", "pylint + pylint-airflow", all_jobs)
    ratio("dagguard all jobs / ruff (wall)", all_jobs, "ruff --select AIR")
    ratio("dagguard all jobs / dagruff (wall)", all_jobs, "dagruff --no-cache")
    ratio("dagguard warm cache / ruff (wall)", WARM, "ruff --select AIR")
    ratio("dagguard all jobs / warm cache (wall)", all_jobs, WARM)
    return out


def tool_versions(setup: Setup) -> dict[str, str]:
    """Versions of what was measured, for the JSON record."""
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str] = {"python": platform.python_version()}
    for dist in ("libcst", "dagguard", "apache-airflow"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            pass
    for folder in setup.tools_bin:
        python = folder / "python"
        if not python.is_file():
            continue
        code = (
            "import json, importlib.metadata as m\n"
            "out = {}\n"
            "for d in ('ruff', 'airflint', 'refactor', 'pylint', 'astroid', 'pylint-airflow', 'dagruff', 'daglint'):\n"
            "    try: out[d] = m.version(d)\n"
            "    except m.PackageNotFoundError: pass\n"
            "print(json.dumps(out))"
        )
        proc = subprocess.run([str(python), "-c", code], check=False, capture_output=True, text=True, cwd=setup.workdir)
        if proc.returncode == 0:
            versions.update({f"{k} (tools venv)": v for k, v in json.loads(proc.stdout).items()})
        break
    return versions


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="folders or files (default: airflow's example_dags)")
    parser.add_argument("--build", type=int, metavar="N", default=None,
                        help="replicate airflow's example DAGs with distinct dag_ids up to N files, and use those")
    parser.add_argument("--corpus-dir", type=Path, default=None,
                        help="where --build writes the corpus (default: a temporary folder, deleted after)")
    parser.add_argument("--single", type=Path, default=Path(__file__).resolve().parent.parent
                        / "example_dags" / "clean_signups_daily.py", help="the file of the one-file rows")
    parser.add_argument("--tools-venv", type=Path, default=None, help="venv holding the peer tools")
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds: timed runs per tool (median reported)")
    parser.add_argument("--runs-slow", type=int, default=1, help="rounds that include airflint and pylint")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before one run of a tool is killed")
    parser.add_argument("--only", nargs="*", help="run only tools whose name contains one of these words")
    parser.add_argument("--json", type=Path, default=None, help="where to write results (default: benchmarks/results/)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    home = Path.cwd()
    out = (args.json or RESULTS_DIR / f"compare-{time.strftime('%Y%m%dT%H%M%S')}.json").resolve()
    try:
        return _compare(args, out)
    finally:
        os.chdir(home)


def _compare(args: argparse.Namespace, out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="dagguard-bench-") as workdir:
        if args.build:
            folder = args.corpus_dir or Path(workdir) / "corpus"
            if folder.exists() and any(folder.iterdir()):
                print(f"--corpus-dir {folder}: not empty", file=sys.stderr)
                return 2
            build_corpus(folder, args.build)
            folders = [folder]
        else:
            folders = args.folders or default_folders()
        files = collect_files(folders)
        if not files:
            print("no .py files found (give a folder, --build N, or install apache-airflow)", file=sys.stderr)
            return 2
        tools_bin: list[Path] = []
        if args.tools_venv is not None:
            if not (args.tools_venv / "bin").is_dir():
                print(f"--tools-venv {args.tools_venv}: no bin/ folder", file=sys.stderr)
                return 2
            tools_bin.append(args.tools_venv.resolve() / "bin")
        tools_bin.append(Path(sys.executable).parent)
        cores = os.cpu_count() or 1
        digest, n_bytes, n_lines = fingerprint(files)
        scratch = Path(workdir) / "scratch"
        scratch.mkdir()
        setup = Setup(tuple(files), tuple(folders), args.single.resolve(), tuple(tools_bin), scratch,
                      args.timeout, cores)
        setup.file_list.write_text("\n".join(map(str, files)))
        os.chdir(scratch)  # every tool runs here, where no project configuration is found
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{len(files)} files, {n_lines} lines, {n_bytes / 1e6:.1f} MB (sha256 {digest[:12]}); "
              f"Python {platform.python_version()}, {cores} cores, load {load:.1f}; "
              f"median of {args.runs} alternating rounds")
        results = measure(build_tools(args, cores), setup, args.runs, args.runs_slow)
        versions = tool_versions(setup)
    print()
    print(format_table(results))
    print("\nmedian s: wall clock of the whole process; cpu s: user+system CPU of the process and its children;\n"
          "x parse: divided by libcst.parse_module of the same files; peak MB: largest RSS of one process")
    summary = ratios(results)
    for key, value in summary.items():
        print(f"  {key}: {value}")
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"platform": platform.platform(), "cores": cores, "load_at_start": load},
        "versions": versions,
        "files": {"count": len(files), "bytes": n_bytes, "lines": n_lines, "sha256": digest,
                  "built": args.build},
        "folders": [str(f) for f in folders],
        "runs": args.runs,
        "results": [dataclasses.asdict(r) for r in results],
        "ratios": summary,
    }
    out.write_text(json.dumps(record, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
