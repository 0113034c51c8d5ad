"""One large generated DAG file: `dagguard check` against libcst's parse of it, whole processes,
wall and CPU time and peak memory (issue 11: a 5 MB many-DAG file in well under a minute, in
bounded memory).

    python benchmarks/large_file.py [--megabytes 5] [--rounds 1]

The file is `with DAG(...)` blocks of one BashOperator each, hourly with catchup on, as a
generator writes them, ~180 bytes per DAG. Rows: `libcst.parse_module` of the whole file (the
floor a linter that parses the file whole cannot go under), `libcst.parse_module` of 256 KB
pieces, and `dagguard check`. Rounds alternate the rows, so load on a shared machine hits all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024)
"""

PARSE_WHOLE = "import sys, libcst; libcst.parse_module(open(sys.argv[1], 'rb').read())"
PARSE_PIECES = """
import sys, libcst
source = open(sys.argv[1], 'rb').read()
blocks = source.split(b"\\n\\nwith ")
step = max(1, len(blocks) * 256 * 1024 // len(source))
for i in range(0, len(blocks), step):
    piece = b"\\n\\nwith ".join(blocks[i:i + step])
    libcst.parse_module(piece if i == 0 else b"with " + piece)
"""


def generate(path: Path, megabytes: float) -> int:
    head = ("from datetime import datetime\nfrom airflow import DAG\n"
            "from airflow.providers.standard.operators.bash import BashOperator\n\n")
    parts, size, count = [head], len(head), 0
    while size < megabytes * 1024 * 1024:
        block = (f'with DAG(dag_id="gen_{count}", schedule="@hourly", start_date=datetime(2025, 1, 1), '
                 f'catchup=True) as dag_{count}:\n'
                 f'    t_{count} = BashOperator(task_id="t", bash_command="echo {{{{ ds }}}}")\n\n')
        parts.append(block)
        size += len(block)
        count += 1
    path.write_text("".join(parts))
    return count


def timed(command: list[str]) -> tuple[float, float, int]:
    out = subprocess.run([sys.executable, "-c", LAUNCHER, *command], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "generated_dags.py"
        count = generate(path, args.megabytes)
        print(f"{path.stat().st_size / 1e6:.1f} MB, {count:,} DAGs, {os.cpu_count()} cores")
        rows = {
            "libcst.parse_module, whole file": [sys.executable, "-c", PARSE_WHOLE, str(path)],
            "libcst.parse_module, 256 KB pieces": [sys.executable, "-c", PARSE_PIECES, str(path)],
            "dagguard check": [sys.executable, "-m", "dagguard", "check", str(path), "--exit-zero", "-q",
                               "--no-cache"],
        }
        if "--no-cache" not in subprocess.run([sys.executable, "-m", "dagguard", "check", "--help"],
                                              capture_output=True, text=True).stdout:
            rows["dagguard check"].remove("--no-cache")
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, command in rows.items():
                runs[name].append(timed(command))
        print(f"| {'run':<36} | wall s | CPU s | peak MB |\n|{'-' * 38}|--------|-------|---------|")
        for name, results in runs.items():
            wall, cpu, peak = (statistics.median(r[i] for r in results) for i in range(3))
            print(f"| {name:<36} | {wall:6.1f} | {cpu:5.1f} | {peak:7,.0f} |")


if __name__ == "__main__":
    main()
