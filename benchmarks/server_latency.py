"""How long after a change does `dagguard server` publish a 300-line DAG file's diagnostics?

A warm process: the server is started, the file opened and checked once (untimed), then each
timed round sends one `textDocument/didChange` (a whole-text change that edits one task's
line, so the text differs every time) and waits for the `publishDiagnostics` of that version.
The time includes the server's debounce (`--debounce-ms`, default the server's 50 ms), the
check and the JSON-RPC round trip. Target (issue 27): 150 ms. The client is the tests' own
(tests/server/lsp_client.py), so run this from the repository root:

    python benchmarks/server_latency.py --rounds 30
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.server.lsp_client import LspClient  # noqa: E402

TARGET_MS = 150.0

_HEAD = '''import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator

default_args = {"retries": 2, "owner": "data"}

with DAG(
    dag_id="orders_hourly",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 9, 1, tz="UTC"),
    catchup=True,
    default_args=default_args,
):
    start = EmptyOperator(task_id="start")
'''


def dag_file(lines: int, round_number: int) -> str:
    """A DAG file of about `lines` lines: one DAG, a chain of Bash tasks; `round_number` is
    written into the first task's command so each round's text is new."""
    body = [_HEAD]
    task = 0
    while sum(part.count("\n") for part in body) < lines - 4:
        command = f"echo {round_number}" if task == 0 else f"echo step {task}"
        body.append(f"    step_{task} = BashOperator(\n        task_id=\"step_{task}\",\n"
                    f"        bash_command=\"{command}\",\n    )\n")
        previous = "start" if task == 0 else f"step_{task - 1}"
        body.append(f"    {previous} >> step_{task}\n")
        task += 1
    return "".join(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--debounce-ms", type=float, default=None,
                        help="the server's debounce (default: the server's own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "pyproject.toml").write_text("[tool.dagguard]\n", encoding="utf-8")
        (project / "dags").mkdir()
        path = project / "dags" / "orders.py"
        text = dag_file(args.lines, 0)
        path.write_text(text, encoding="utf-8")
        client = LspClient(project, env={"DAGGUARD_NO_CACHE": ""})
        try:
            options = {} if args.debounce_ms is None else {"debounce-ms": args.debounce_ms}
            client.initialize(project, options)
            uri = client.open(path, text)
            first = client.diagnostics(uri, version=1)
            timings = []
            for number in range(1, args.rounds + 1):
                changed = dag_file(args.lines, number)
                started = time.perf_counter()
                client.change(uri, changed, number + 1)
                client.diagnostics(uri, version=number + 1)
                timings.append((time.perf_counter() - started) * 1000)
            exit_code = client.close()
        finally:
            client.kill()
    median = statistics.median(timings)
    p90 = sorted(timings)[max(int(len(timings) * 0.9) - 1, 0)]
    print(f"{text.count(chr(10))}-line DAG file, {len(first)} findings, {args.rounds} changes in a warm server")
    print(f"| median ms | p90 ms | max ms | target ms |\n|---|---|---|---|\n"
          f"| {median:.0f} | {p90:.0f} | {max(timings):.0f} | {TARGET_MS:.0f} |")
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    (results / "server_latency.json").write_text(json.dumps({
        "lines": text.count("\n"), "findings": len(first), "timings_ms": timings, "median_ms": median,
        "p90_ms": p90, "target_ms": TARGET_MS, "server_exit": exit_code}, indent=2), encoding="utf-8")
    return 0 if median <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
