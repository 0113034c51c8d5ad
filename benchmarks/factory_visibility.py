"""How many DAG files dagguard sees no DAG in: files whose text builds a DAG (a regex over
the source, `--builds`) yet in which the linter finds none. Run it with the dagguard of any
commit to compare before and after factory resolution.

    python benchmarks/factory_visibility.py REPO --under dags [--config pyproject.toml] [--builds REGEX] [--list]

The whole REPO is checked (as CI would: its root is a module root); only files under
`--under` are counted.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from dagguard.api import check_paths, discover_settings

DEFAULT_BUILDS = r"\b(DAG|TtdDag|create_dag)\(|@dag\b"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--under", default=".", help="count only the files below this subfolder")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--builds", default=DEFAULT_BUILDS)
    parser.add_argument("--list", action="store_true", help="print the files without a seen DAG")
    options = parser.parse_args()
    builds = re.compile(options.builds)
    files = sorted(p for p in (options.folder / options.under).rglob("*.py")
                   if builds.search(p.read_text(encoding="utf-8", errors="replace")))
    settings = discover_settings([options.folder], options.config).with_overrides(select=("DG000",))
    from dagguard.engine import runner

    if hasattr(runner.CheckResult, "dags"):
        result = check_paths([options.folder], settings=settings)
        shown = {d.path for d in result.dags}
        seen = {p for p in files if runner.display_path(p) in shown}
    else:  # before `dagguard dags`: one file at a time, by its DAG count
        seen = {p for p in files if check_paths([p], settings=settings).dag_count}
    unseen = [p for p in files if p not in seen]
    print(f"{len(files)} files build a DAG; dagguard sees none in {len(unseen)}")
    if options.list:
        for path in unseen:
            print(f"  {path}")


if __name__ == "__main__":
    main()
