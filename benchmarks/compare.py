"""Side-by-side speed of dagguard and other Airflow linters on one list of DAG files.

Every tool gets the same explicit list of files (as pre-commit would pass them), one untimed
warm-up run, then N timed runs; the best wall-clock time (time.perf_counter) is reported, with
its ratio to a bare ``libcst.parse_module`` of the same files in this process.

    python benchmarks/compare.py                                   # airflow's own example_dags
    python benchmarks/compare.py /path/to/dags --tools-venv /work/bench-venv --runs 3

Competitors (ruff, airflint, pylint + pylint-airflow) are looked up in ``--tools-venv`` (or next
to this interpreter, then on PATH); a tool that is missing or cannot run is skipped with the
reason, never fatal. See benchmarks/README.md for how to install them.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import gc
import hashlib
import importlib.util
import json
import os
import platform
import resource
import shutil
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
class Tool:
    """A measured tool: ``prepare`` checks it can run and returns one run, which returns a findings count."""

    name: str
    parallelism: str
    prepare: Callable[[Setup], Callable[[], int | None]]
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Result:
    """What one tool did on the file list."""

    tool: str
    status: str  # "ok", "skipped" or "failed"
    reason: str = ""
    best_s: float | None = None
    runs_s: tuple[float, ...] = ()
    best_cpu_s: float | None = None
    runs_cpu_s: tuple[float, ...] = ()
    warmup_s: float | None = None
    findings: int | None = None
    parallelism: str = ""
    note: str = ""
    command: str = ""


@dataclasses.dataclass(frozen=True)
class Setup:
    """Everything the tools share: the files, where to find the competitors, limits."""

    files: tuple[Path, ...]
    folders: tuple[Path, ...]
    tools_bin: tuple[Path, ...]
    workdir: Path
    timeout_s: float
    cores: int


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


def run_command(
    argv: Sequence[str], setup: Setup, ok_codes: Sequence[int], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run in a scratch directory (so no project config is picked up); raise ToolFailed on a bad exit."""
    try:
        proc = subprocess.run(
            list(argv),
            check=False,
            cwd=setup.workdir,
            capture_output=True,
            text=True,
            timeout=setup.timeout_s,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolFailed(f"timed out after {setup.timeout_s:.0f} s") from exc
    except OSError as exc:
        raise ToolFailed(f"cannot start: {exc}") from exc
    if proc.returncode not in ok_codes:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise ToolFailed(f"exit {proc.returncode}: {tail[0][:300]}")
    return proc


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
        data = data.get("findings", data.get("diagnostics"))
    return len(data) if isinstance(data, list) else None


# --- the tools ---------------------------------------------------------------------------------


def read_all(files: Sequence[Path]) -> list[bytes]:
    return [path.read_bytes() for path in files]


def libcst_parse(setup: Setup) -> Callable[[], int | None]:
    """Read and ``libcst.parse_module`` every file in this process; counts files libcst rejects."""
    import libcst

    def run() -> int:
        errors = 0
        for data in read_all(setup.files):
            try:
                libcst.parse_module(data)
            except Exception:  # noqa: BLE001  (a file libcst rejects is still timed, and counted)
                errors += 1
        return errors

    return run


def ast_parse(setup: Setup) -> Callable[[], int | None]:
    """Read and ``ast.parse`` every file in this process; counts files ast rejects."""

    def run() -> int:
        errors = 0
        for data in read_all(setup.files):
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                errors += 1
        return errors

    return run


def dagguard_api(setup: Setup) -> Callable[[], int | None]:
    """``dagguard.api.check_paths(files)`` in this process."""
    try:
        from dagguard.api import check_paths  # type: ignore[import-not-found]
    except Exception as exc:  # the API may be missing or broken while it is being written
        raise ToolUnavailable(f"dagguard: not available ({type(exc).__name__}: {exc})") from exc
    paths = list(setup.files)

    def run() -> int:
        result = check_paths(paths)
        run.files_checked = getattr(result, "files_checked", None)  # type: ignore[attr-defined]
        run.internal_errors = len(getattr(result, "internal_errors", ()) or ())  # type: ignore[attr-defined]
        return len(result.findings)

    return run


def dagguard_cli(setup: Setup) -> Callable[[], int | None]:
    """``dagguard check --format json FILES`` as a subprocess (interpreter start-up included)."""
    exe = find_executable("dagguard", setup)
    base = [str(exe)] if exe else [sys.executable, "-m", "dagguard"]
    probe([*base, "check", "--help"], setup, "dagguard: not available (no `dagguard check`)")
    argv = [*base, "check", "--format", "json", *map(str, setup.files)]

    def run() -> int | None:
        return count_json(run_command(argv, setup, ok_codes=(0, 1)).stdout)

    return run


def ruff(threads: int | None) -> Callable[[Setup], Callable[[], int | None]]:
    """``ruff check --select AIR --no-cache``; ``threads`` pins rayon's pool (None = ruff's default)."""

    def prepare(setup: Setup) -> Callable[[], int | None]:
        exe = find_executable("ruff", setup)
        if exe is None:
            raise ToolUnavailable("ruff not installed (pip install ruff)")
        probe([str(exe), "--version"], setup, "ruff")
        argv = [
            str(exe), "check", "--isolated", "--no-cache", "--select", "AIR",
            "--output-format", "json", "--exit-zero", *map(str, setup.files),
        ]  # fmt: skip
        env = {"RAYON_NUM_THREADS": str(threads)} if threads else {}

        def run() -> int | None:
            return count_json(run_command(argv, setup, ok_codes=(0,), env=env).stdout)

        return run

    return prepare


def airflint(workers: int) -> Callable[[Setup], Callable[[], int | None]]:
    """airflint's CLI via a driver that survives files airflint crashes on (see AIRFLINT_DRIVER)."""

    def prepare(setup: Setup) -> Callable[[], int | None]:
        if find_executable("airflint", setup) is None:
            raise ToolUnavailable("airflint not installed (pip install --pre airflint)")
        python = tool_python(setup, "airflint.__main__")
        argv = [str(python), "-c", AIRFLINT_DRIVER, "--workers", str(workers), *map(str, setup.files)]

        def run() -> int | None:
            stdout = run_command(argv, setup, ok_codes=(0,)).stdout
            stats = json.loads(stdout.strip().splitlines()[-1])
            run.failed = stats["failed"]  # type: ignore[attr-defined]
            run.first_error = stats["first_error"]  # type: ignore[attr-defined]
            return int(stats["changed"])

        return run

    return prepare


def pylint_airflow(jobs: int) -> Callable[[Setup], Callable[[], int | None]]:
    """pylint with only pylint-airflow's messages enabled; Airflow's sources visible to astroid."""

    def prepare(setup: Setup) -> Callable[[], int | None]:
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

        def run() -> int | None:
            # pylint's exit code is a bit mask of message kinds; 32 is a usage error.
            proc = run_command(argv, setup, ok_codes=tuple(range(32)))
            try:
                messages_out = json.loads(proc.stdout)
            except json.JSONDecodeError:
                # With --jobs > 1 an exception inside a plugin aborts the whole run, no report.
                tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
                raise ToolFailed(f"exit {proc.returncode}, no report (aborted): {tail[0][:200]}") from None
            fatal = [m for m in messages_out if m.get("message-id", "").startswith("F")]
            run.failed = len(fatal)  # type: ignore[attr-defined]
            run.first_error = fatal[0]["symbol"] if fatal else None  # type: ignore[attr-defined]
            return len(messages_out) - len(fatal)

        return run

    return prepare


PYLINT_NOTE = "only pylint-airflow's messages; installed Airflow on astroid's path"


def build_tools(args: argparse.Namespace, cores: int) -> list[Tool]:
    """The rows of the table, in order."""
    tools = [
        Tool("libcst.parse_module", "1 process", libcst_parse, "findings = files it rejects"),
        Tool("ast.parse", "1 process", ast_parse, "findings = files it rejects"),
        Tool("dagguard (API, in-process)", "1 process", dagguard_api),
        Tool("dagguard check (CLI)", "1 process", dagguard_cli, "includes interpreter start-up"),
        Tool("ruff --select AIR", f"{cores} threads", ruff(None), "ruff's default: all cores"),
        Tool("ruff --select AIR (1 thread)", "1 thread", ruff(1), "RAYON_NUM_THREADS=1"),
        Tool("airflint -w 1", "1 process", airflint(1)),
        Tool("pylint + pylint-airflow", "1 process", pylint_airflow(1), PYLINT_NOTE),
    ]
    if args.parallel:
        tools += [
            Tool(f"airflint -w {cores}", f"{cores} processes", airflint(cores)),
            Tool(f"pylint + pylint-airflow -j {cores}", f"{cores} processes", pylint_airflow(cores), PYLINT_NOTE),
        ]
    wanted = set(args.only or [])
    return [t for t in tools if not wanted or any(w.lower() in t.name.lower() for w in wanted)]


# --- measuring ---------------------------------------------------------------------------------


def cpu_seconds() -> float:
    """User + system CPU of this process and of its finished children (subprocess tools)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(tool: Tool, setup: Setup, runs: int, budget_s: float) -> Result:
    """Warm-up once (untimed), then up to ``runs`` timed runs within ``budget_s``; never raises."""
    try:
        run = tool.prepare(setup)
    except ToolUnavailable as exc:
        return Result(tool.name, "skipped", str(exc), parallelism=tool.parallelism, note=tool.note)
    except Exception as exc:  # noqa: BLE001  (a broken tool must not stop the others)
        return Result(tool.name, "skipped", f"{type(exc).__name__}: {exc}", parallelism=tool.parallelism)
    try:
        start = time.perf_counter()
        findings = run()
        warmup = time.perf_counter() - start
        n_runs = max(1, min(runs, int(budget_s // max(warmup, 1e-9)))) if budget_s else runs
        times: list[float] = []
        cpu_times: list[float] = []
        for _ in range(n_runs):
            gc.collect()
            cpu_before = cpu_seconds()
            start = time.perf_counter()
            findings = run()
            times.append(time.perf_counter() - start)
            cpu_times.append(cpu_seconds() - cpu_before)
    except ToolFailed as exc:
        return Result(tool.name, "failed", str(exc), parallelism=tool.parallelism, note=tool.note)
    except Exception as exc:  # noqa: BLE001
        return Result(tool.name, "failed", f"{type(exc).__name__}: {exc}", parallelism=tool.parallelism)
    note = tool.note
    files_checked = getattr(run, "files_checked", None)
    if isinstance(files_checked, int) and files_checked != len(setup.files):
        note = f"{note}; checked {files_checked} of {len(setup.files)} files".lstrip("; ")
    internal_errors = getattr(run, "internal_errors", 0)
    if internal_errors:
        note = f"{note}; {internal_errors} internal errors".lstrip("; ")
    failed_files = getattr(run, "failed", 0)
    if failed_files:
        first_error = getattr(run, "first_error", None) or ""
        note = f"{note}; crashed on {failed_files} files ({first_error[:80]})".lstrip("; ")
    return Result(
        tool.name, "ok", best_s=min(times), runs_s=tuple(times), warmup_s=warmup,
        best_cpu_s=min(cpu_times), runs_cpu_s=tuple(cpu_times),
        findings=findings, parallelism=tool.parallelism, note=note,
    )  # fmt: skip


def format_table(results: Sequence[Result], n_files: int) -> str:
    """The comparison table: wall seconds, its ratio to a bare libcst parse, files per second, CPU seconds."""
    base = next((r.best_s for r in results if r.tool == "libcst.parse_module" and r.best_s), None)
    header = (
        f"{'tool':34} {'seconds':>8} {'x parse':>8} {'files/s':>8} {'cpu s':>8} "
        f"{'findings':>8} {'runs':>4}  parallelism / note"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        if r.status != "ok" or r.best_s is None:
            lines.append(f"{r.tool:34} {r.status:>8}  {r.reason}")
            continue
        ratio = f"{r.best_s / base:8.2f}" if base else f"{'-':>8}"
        cpu = f"{r.best_cpu_s:8.2f}" if r.best_cpu_s is not None else f"{'-':>8}"
        findings = "-" if r.findings is None else str(r.findings)
        note = ", ".join(x for x in (r.parallelism, r.note) if x)
        lines.append(
            f"{r.tool:34} {r.best_s:8.3f} {ratio} {n_files / r.best_s:8.1f} {cpu} "
            f"{findings:>8} {len(r.runs_s):>4}  {note}"
        )
    return "\n".join(lines)


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
            "for d in ('ruff', 'airflint', 'refactor', 'pylint', 'astroid', 'pylint-airflow'):\n"
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
    parser.add_argument("--tools-venv", type=Path, default=None, help="venv holding ruff, airflint, pylint-airflow")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per tool after 1 warm-up (best is reported)")
    parser.add_argument(
        "--budget", type=float, default=0.0,
        help="seconds of timed runs allowed per tool (fewer runs for slow tools; 0 = always --runs)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before one run of a tool is killed")
    parser.add_argument("--parallel", action="store_true", help="also run airflint and pylint with one worker per core")
    parser.add_argument("--only", nargs="*", help="run only tools whose name contains one of these words")
    parser.add_argument("--json", type=Path, default=None, help="where to write results (default: benchmarks/results/)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    folders = args.folders or default_folders()
    files = collect_files(folders)
    if not files:
        print("no .py files found (give a folder, or install apache-airflow for its example_dags)", file=sys.stderr)
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
    with tempfile.TemporaryDirectory(prefix="dagguard-bench-") as workdir:
        setup = Setup(tuple(files), tuple(folders), tuple(tools_bin), Path(workdir), args.timeout, cores)
        print(
            f"{len(files)} files, {n_lines} lines, {n_bytes / 1e6:.1f} MB (sha256 {digest[:12]}); "
            f"Python {platform.python_version()}, {cores} cores; best of {args.runs} runs after 1 warm-up"
        )
        results: list[Result] = []
        for tool in build_tools(args, cores):
            print(f"  {tool.name} ...", end=" ", flush=True)
            result = measure(tool, setup, args.runs, args.budget)
            results.append(result)
            shown = f"{result.best_s:.3f} s" if result.best_s is not None else f"{result.status}: {result.reason}"
            print(shown, flush=True)
        versions = tool_versions(setup)
    print()
    print(format_table(results, len(files)))
    print(
        "\nseconds: best wall clock; x parse: seconds / libcst.parse_module of the same files in this "
        "process;\ncpu s: best user+system CPU of the run (all threads and child processes)"
    )
    out = args.json or RESULTS_DIR / f"compare-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"platform": platform.platform(), "cores": cores},
        "versions": versions,
        "files": {"count": len(files), "bytes": n_bytes, "lines": n_lines, "sha256": digest},
        "folders": [str(f) for f in folders],
        "runs": args.runs,
        "results": [dataclasses.asdict(r) for r in results],
    }
    out.write_text(json.dumps(record, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
