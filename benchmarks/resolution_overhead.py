"""What resolving factories and project modules costs: `dagguard check` of the same files with
two dagguard checkouts (before and after), alternated N rounds in fresh processes so that load
drifting on a shared machine hits both alike; prints the ratio of the best CPU times (and of
the medians), as engine_overhead.py does with wall time, and each side's peak memory.

    python benchmarks/resolution_overhead.py BEFORE_CHECKOUT AFTER_CHECKOUT REPO [REPO ...]
        [--config-for REPO=pyproject.toml ...] [--rounds 2] [--instructions]

Each REPO is checked as one run (its root a module root), with its --config-for file if given;
the config is read only by the AFTER checkout (BEFORE ignores keys it does not know).

CPU time on a shared machine moves by 20% from one run to the next, more than the 10% being
measured. `--instructions` also counts the instructions each side executes, under valgrind's
cachegrind (about 16x slower; both sides at once, since a count does not depend on load; hash
seed fixed): the same work gives the same count, so that ratio is exact for what it counts. It
does not see memory stalls, which the CPU rounds do.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

_RUN = """
import resource, sys, time, datetime as dt
from pathlib import Path
from dagguard.api import check_paths, discover_settings
from dagguard.config import Settings, load_file
now = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
jobs = [a.split("=", 1) for a in sys.argv[1:]]
start = time.process_time()
for repo, config in jobs:
    try:
        settings = load_file(Path(config)) if config else Settings()
    except Exception:
        settings = Settings()
    check_paths([Path(repo)], settings=settings, now=now, jobs=1)  # in this process: its CPU is measured
print(time.process_time() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def timed(checkout: Path, jobs: list[str]) -> tuple[float, int]:
    """CPU seconds of one check (other processes on a shared machine barely move it) and the
    peak memory in MiB."""
    out = subprocess.run([sys.executable, "-c", _RUN, *jobs], cwd="/", check=True, capture_output=True,
                         text=True, env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"})
    seconds, peak = out.stdout.strip().splitlines()[-1].split()
    return float(seconds), int(peak)


def instructions(checkout: Path, jobs: list[str]) -> subprocess.Popen:
    """Start one side under cachegrind; `counted` reads its instruction count."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, "-c", _RUN, *jobs]
    env = {"PYTHONPATH": str(checkout), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONHASHSEED": "0"}
    return subprocess.Popen(command, cwd="/", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def counted(process: subprocess.Popen) -> int:
    _, err = process.communicate()
    found = re.search(r"I\s+refs:\s+([\d,]+)", err)
    if process.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed:\n{err[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--config-for", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions under valgrind (exact, ~16x slower)")
    options = parser.parse_args()
    if options.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on PATH")
    configs = dict(item.split("=", 1) for item in options.config_for)
    jobs = [f"{repo}={configs.get(str(repo), '')}" for repo in options.repos]
    before: list[float] = []
    after: list[float] = []
    peaks = [0, 0]
    for _ in range(options.rounds):
        for times, checkout, side in ((before, options.before, 0), (after, options.after, 1)):
            seconds, peak = timed(checkout, jobs)
            times.append(seconds)
            peaks[side] = max(peaks[side], peak)
    print(f"before: best {min(before):.1f}s median {statistics.median(before):.1f}s CPU, peak {peaks[0]} MiB")
    print(f"after:  best {min(after):.1f}s median {statistics.median(after):.1f}s CPU, peak {peaks[1]} MiB")
    print(f"ratio:  best {min(after) / min(before):.3f} median {statistics.median(after) / statistics.median(before):.3f}")
    if options.instructions:
        started = [instructions(options.before, jobs), instructions(options.after, jobs)]
        before_count, after_count = (counted(process) for process in started)
        print(f"instructions: before {before_count / 1e9:.2f}G after {after_count / 1e9:.2f}G "
              f"ratio {after_count / before_count:.3f}")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f}s in all)")
