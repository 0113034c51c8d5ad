"""Price each libcst step the linter could take, as a multiple of one bare parse.

Every variant re-parses each file and then does one extra thing (walk, metadata, codegen), so
``ratio`` is the whole cost of "parse + X" divided by the bare parse, and ``extra`` is X alone
in units of a parse. Sources are read into memory first: no file I/O is timed.

    python benchmarks/libcst_costs.py                      # installed airflow example_dags
    python benchmarks/libcst_costs.py /work/corpus --sample 400 --runs 3
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import gc
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import version
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclasses.dataclass(frozen=True)
class Variant:
    """One measured step: a name, what it does, and a function applied to one source."""

    name: str
    description: str
    run: Callable[[str], object]
    extra: bool = False  # not in the lead's list; printed after the main rows


@dataclasses.dataclass(frozen=True)
class Timing:
    """Best and all times of one variant over the whole file list: wall clock and process CPU."""

    name: str
    description: str
    best_s: float
    best_cpu_s: float
    runs_s: tuple[float, ...]
    runs_cpu_s: tuple[float, ...]


def default_folders() -> list[Path]:
    """The example_dags folders shipped inside the installed apache-airflow packages."""
    try:
        import airflow  # noqa: F401  (only to locate the package; never imported by dagguard)
    except Exception:  # noqa: BLE001  (any import failure means "not installed here")
        spec_paths: list[str] = []
    else:
        spec_paths = list(getattr(sys.modules["airflow"], "__path__", []))
    folders: list[Path] = []
    for base in spec_paths:
        folders.extend(sorted(p for p in Path(base).rglob("example_dags") if p.is_dir()))
    return folders


def collect_files(folders: Sequence[Path]) -> list[Path]:
    """Every .py file under the folders, sorted, without duplicates; hidden folders are skipped."""
    files: set[Path] = set()
    for folder in folders:
        if folder.is_file():
            files.add(folder.resolve())
        else:
            files.update(
                p.resolve()
                for p in folder.rglob("*.py")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts[:-1])
            )
    return sorted(files)


def load_parseable(files: Sequence[Path]) -> tuple[list[str], list[Path]]:
    """Sources that both libcst and ast accept, so every variant sees the same inputs."""
    sources: list[str] = []
    kept: list[Path] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            cst.parse_module(text)
            ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, cst.ParserSyntaxError, ValueError, RecursionError):
            continue
        sources.append(text)
        kept.append(path)
    return sources, kept


class _NoopVisitor(cst.CSTVisitor):
    """A visitor with one real visit method, so dispatch cost is like a rule's."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1


class _PositionVisitor(cst.CSTVisitor):
    """Looks up the position of every call: what an engine reporting on calls would do."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.lines = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.lines += self.get_metadata(PositionProvider, node).start.line


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(node_type: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(node_type)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node_type))
        _FIELD_NAMES[node_type] = names
    return names


def iter_nodes_recursive(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below ``node``, read straight from dataclass fields (no visitor machinery)."""
    yield node
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if isinstance(value, cst.CSTNode):
            yield from iter_nodes_recursive(value)
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield from iter_nodes_recursive(item)


def iter_nodes_stack(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Same nodes as ``iter_nodes_recursive`` (other order), with an explicit stack and cached field names."""
    stack: list[cst.CSTNode] = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    node_type = cst.CSTNode
    while stack:
        node = pop()
        yield node
        for name in _field_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, node_type):
                push(value)
            elif isinstance(value, (tuple, list)):
                extend(item for item in value if isinstance(item, node_type))


def _count(nodes: Iterator[cst.CSTNode]) -> int:
    return sum(1 for _ in nodes)


def _parse(source: str) -> cst.Module:
    return cst.parse_module(source)


def _visit(source: str) -> int:
    visitor = _NoopVisitor()
    _parse(source).visit(visitor)
    return visitor.calls


def _resolve(provider: type, copy: bool) -> Callable[[str], object]:
    def run(source: str) -> object:
        wrapper = MetadataWrapper(_parse(source), unsafe_skip_copy=not copy)
        return wrapper.resolve(provider)

    return run


def _wrapper_visit_positions(source: str) -> int:
    visitor = _PositionVisitor()
    MetadataWrapper(_parse(source), unsafe_skip_copy=True).visit(visitor)
    return visitor.lines


def _fields_walk(source: str) -> int:
    return _count(iter_nodes_recursive(_parse(source)))


def _stack_walk(source: str) -> int:
    return _count(iter_nodes_stack(_parse(source)))


def _codegen(source: str) -> int:
    return len(_parse(source).code)


def _ast_parse(source: str) -> object:
    return ast.parse(source)


def _ast_walk(source: str) -> int:
    return sum(1 for _ in ast.walk(ast.parse(source)))


VARIANTS: tuple[Variant, ...] = (
    Variant("parse", "libcst.parse_module", _parse),
    Variant("parse+visitor", "parse + plain CSTVisitor walk (one visit_Call)", _visit),
    Variant(
        "parse+positions(skip_copy)",
        "parse + MetadataWrapper(unsafe_skip_copy=True).resolve(PositionProvider)",
        _resolve(PositionProvider, copy=False),
    ),
    Variant(
        "parse+positions(copy)",
        "parse + MetadataWrapper(module).resolve(PositionProvider) (default deep copy)",
        _resolve(PositionProvider, copy=True),
    ),
    Variant(
        "parse+qualified_names",
        "parse + resolve(QualifiedNameProvider) (skip_copy; includes its ScopeProvider)",
        _resolve(QualifiedNameProvider, copy=False),
    ),
    Variant(
        "parse+scope",
        "parse + resolve(ScopeProvider) (skip_copy)",
        _resolve(ScopeProvider, copy=False),
    ),
    Variant(
        "parse+fields_walk",
        "parse + recursive generator over dataclasses.fields children",
        _fields_walk,
    ),
    Variant("parse+codegen", "parse + module.code", _codegen),
    Variant("ast.parse", "stdlib ast.parse", _ast_parse),
    Variant(
        "parse+stack_walk",
        "parse + iterative stack walk over cached field names",
        _stack_walk,
        extra=True,
    ),
    Variant(
        "parse+parents(skip_copy)",
        "parse + resolve(ParentNodeProvider) (skip_copy)",
        _resolve(ParentNodeProvider, copy=False),
        extra=True,
    ),
    Variant(
        "parse+wrapper.visit(positions)",
        "parse + MetadataWrapper(skip_copy).visit(visitor needing PositionProvider)",
        _wrapper_visit_positions,
        extra=True,
    ),
    Variant("ast.parse+ast.walk", "stdlib ast.parse + ast.walk", _ast_walk, extra=True),
)


def time_pass(variant: Variant, sources: Sequence[str]) -> tuple[float, float]:
    """Wall-clock and process-CPU seconds of one pass of ``variant`` over all sources."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    for source in sources:
        variant.run(source)
    return time.perf_counter() - wall, time.process_time() - cpu


def time_variants(variants: Sequence[Variant], sources: Sequence[str], runs: int) -> list[Timing]:
    """One untimed warm-up pass per variant, then ``runs`` rounds; each round runs every variant once.

    Interleaving the rounds spreads any load from other processes over all variants alike.
    """
    for variant in variants:
        for source in sources:  # warm-up: imports, caches, grammar tables
            variant.run(source)
    walls: dict[str, list[float]] = {v.name: [] for v in variants}
    cpus: dict[str, list[float]] = {v.name: [] for v in variants}
    for round_no in range(runs):
        for variant in variants:
            wall, cpu = time_pass(variant, sources)
            walls[variant.name].append(wall)
            cpus[variant.name].append(cpu)
            print(f"  round {round_no + 1}/{runs} {variant.name:34} {wall:8.3f} s wall {cpu:8.3f} s cpu", flush=True)
    return [
        Timing(
            v.name,
            v.description,
            min(walls[v.name]),
            min(cpus[v.name]),
            tuple(walls[v.name]),
            tuple(cpus[v.name]),
        )
        for v in variants
    ]


def format_table(timings: Sequence[Timing], n_files: int) -> str:
    """A plain-text table: best CPU and wall seconds, ratios to the bare parse, ms per file."""
    base = next(t for t in timings if t.name == "parse")
    rows = [f"{'variant':32} {'cpu s':>7} {'x parse':>7} {'extra':>6} {'wall s':>7} {'x parse':>7} {'ms/file':>7}"]
    for t in timings:
        is_ast = t.name.startswith("ast.")
        extra = "" if is_ast or t.name == "parse" else f"{(t.best_cpu_s - base.best_cpu_s) / base.best_cpu_s:6.2f}"
        rows.append(
            f"{t.name:32} {t.best_cpu_s:7.3f} {t.best_cpu_s / base.best_cpu_s:7.2f} {extra:>6} "
            f"{t.best_s:7.3f} {t.best_s / base.best_s:7.2f} {1000 * t.best_cpu_s / n_files:7.2f}"
        )
    return "\n".join(rows)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, help="folders of DAG files (default: airflow's example_dags)")
    parser.add_argument("--sample", type=int, default=0, help="measure a seeded random sample of N files (0 = all)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per variant; the best is reported")
    parser.add_argument("--only", nargs="*", default=None, help="variant names to run (parse always runs)")
    parser.add_argument("--json", type=Path, default=None, help="where to write results (default: benchmarks/results/)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    folders = args.folders or default_folders()
    if not folders:
        print("no folders given and no installed apache-airflow example_dags found", file=sys.stderr)
        return 2
    sources, kept = load_parseable(collect_files(folders))
    if args.sample and args.sample < len(sources):
        picked = sorted(random.Random(args.seed).sample(range(len(sources)), args.sample))
        sources = [sources[i] for i in picked]
        kept = [kept[i] for i in picked]
    if not sources:
        print("no parseable .py files found", file=sys.stderr)
        return 2
    n_bytes = sum(len(s.encode("utf-8")) for s in sources)
    n_lines = sum(s.count("\n") + 1 for s in sources)
    print(
        f"libcst {version('libcst')} on Python {platform.python_version()}, "
        f"{os.cpu_count()} cpus; {len(sources)} files, {n_lines} lines, {n_bytes / 1e6:.1f} MB; "
        f"best of {args.runs} interleaved rounds after 1 warm-up"
    )
    variants = [v for v in VARIANTS if args.only is None or v.name == "parse" or v.name in args.only]
    timings = time_variants(variants, sources, args.runs)
    main_rows = [t for t, v in zip(timings, variants) if not v.extra]
    extra_rows = [t for t, v in zip(timings, variants) if v.extra]
    print()
    print(format_table(main_rows + extra_rows, len(sources)))
    print(
        "\nx parse = (parse + step) / parse;  extra = step alone, in parses (from CPU time);  "
        "best of each column, rounds interleaved"
    )
    out = args.json or RESULTS_DIR / f"libcst_costs-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    base = next(t for t in timings if t.name == "parse")
    out.write_text(
        json.dumps(
            {
                "libcst": version("libcst"),
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "files": len(sources),
                "lines": n_lines,
                "bytes": n_bytes,
                "runs": args.runs,
                "folders": [str(f) for f in folders],
                "results": [
                    {
                        **dataclasses.asdict(t),
                        "ratio_to_parse_cpu": t.best_cpu_s / base.best_cpu_s,
                        "ratio_to_parse_wall": t.best_s / base.best_s,
                    }
                    for t in timings
                ],
            },
            indent=2,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
