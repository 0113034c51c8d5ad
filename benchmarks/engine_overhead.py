"""What `dagguard check` costs on top of the parse it cannot avoid, in one process.

Alternates a bare `libcst.parse_module` of every file with a full `dagguard.api.check_paths`
of the same files, N rounds, so that load drifting on a shared machine hits both alike, and
prints the ratio of the best times (and of the medians). This is the figure the linter's
speed target is stated in: a full check at most 1.5x a bare parse.

    python benchmarks/engine_overhead.py [FOLDER ...] [--rounds 4]

Default files: the example_dags folders of the installed apache-airflow packages.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import libcst as cst

from dagguard.api import check_paths


def default_folders() -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("airflow")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("give a folder of DAG files (apache-airflow is not installed for its example_dags)")
    root = Path(next(iter(spec.submodule_search_locations)))
    return sorted(p for p in root.rglob("example_dags") if p.is_dir())


def python_files(folders: list[Path]) -> list[Path]:
    found: set[Path] = set()
    for folder in folders:
        found.update(p for p in ([folder] if folder.is_file() else folder.rglob("*.py")) if p.is_file())
    return sorted(found)


def bare_parse(files: list[Path]) -> None:
    for path in files:
        try:
            cst.parse_module(path.read_bytes())
        except Exception:  # noqa: BLE001 - a file libcst rejects still costs its attempt
            pass


def timed(action, *args) -> float:
    start = time.perf_counter()
    action(*args)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    files = python_files(args.folders or default_folders())
    check_paths(files)  # warm-up: imports, lazily loaded sqlglot/jinja2, OS page cache
    parses, checks = [], []
    for _ in range(args.rounds):
        parses.append(timed(bare_parse, files))
        checks.append(timed(check_paths, files))
    print(f"{len(files)} files, {args.rounds} alternating rounds")
    print(f"bare libcst parse   best {min(parses):7.2f} s   median {statistics.median(parses):7.2f} s")
    print(f"dagguard check      best {min(checks):7.2f} s   median {statistics.median(checks):7.2f} s")
    print(f"ratio               best {min(checks) / min(parses):7.2f} x   "
          f"median {statistics.median(checks) / statistics.median(parses):7.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
