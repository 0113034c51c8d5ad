"""The drawn plan of dagguard/: every import between its modules (at module level, inside
functions, under `if TYPE_CHECKING:`, and `import_module("dagguard...")` with a literal name)
runs down the layers and never round a circle. Read with `ast`; nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Which part each module belongs to: the longest matching prefix. The package `dagguard` itself
# (its version) is only ever matched exactly, so a new top-level module must be placed here.
PARTS = {
    "dagguard": "basics", "dagguard.extras": "basics", "dagguard.progress": "basics",
    "dagguard.config": "config", "dagguard.rule_codes": "config",
    "dagguard.rule_info": "config", "dagguard.airflow_pin": "config",
    "dagguard.model": "model",
    "dagguard.model.basics": "model.basics", "dagguard.model.sql": "model.sql",
    "dagguard.model.project": "model.project", "dagguard.model.dags": "model.dags",
    "dagguard.model.schedules": "model.schedules", "dagguard.model.tasks": "model.tasks",
    "dagguard.rules": "rules", "dagguard.engine": "engine", "dagguard.report": "report",
    "dagguard.api": "api", "dagguard.server": "server",
    "dagguard.policy": "policy", "dagguard.doctor": "doctor", "dagguard.idempotent": "idempotent",
    "dagguard.__main__": "cli", "dagguard.cli": "cli", "dagguard.cli_fixes": "cli", "dagguard.cli_help": "cli",
    "dagguard.cli_output": "cli", "dagguard.typer_plain": "cli",
}

# What each part may import besides itself: cli -> api -> engine -> rules -> model -> config ->
# basics, the model's packages in their own order; server, policy, doctor and idempotent are
# parts of their own beside the linter.
MODEL = {"model.tasks", "model.schedules", "model.dags", "model.sql", "model.project", "model.basics"}
LOW = {"config", "basics"}
MAY_IMPORT = {
    "cli": {"api", "server", "policy", "doctor", "idempotent", "report", "engine", "rules", *MODEL, *LOW},
    "server": {"api", "report", "engine", "rules", *MODEL, *LOW},
    "api": {"engine", "rules", *MODEL, *LOW},
    "report": {"engine", "rules", *LOW},
    "policy": {"engine", "rules", *MODEL, *LOW},
    "idempotent": {"engine", *MODEL, *LOW},
    "doctor": LOW,
    "engine": {"rules", *MODEL, *LOW},
    "rules": {*MODEL, *LOW},
    "model.tasks": {"model.schedules", "model.dags", "model.sql", "model.project", "model.basics", *LOW},
    "model.schedules": {"model.dags", "model.project", "model.basics", *LOW},
    "model.dags": {"model.project", "model.basics", *LOW},
    "model.project": {"model.basics", *LOW},
    "model.sql": {"model.basics", *LOW},
    "model.basics": set(),
    "model": set(),
    "config": {"basics"},
    "basics": set(),
}

def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "dagguard").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The dagguard modules `name` imports anywhere in its text (`from pkg import module` names
    the module, `from module import function` the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()

    def add(module: str, member: str | None = None) -> None:
        if member and f"{module}.{member}" in known:
            module = f"{module}.{member}"
        while module and module not in known:
            module = module.rpartition(".")[0]
        if module and module != name:
            targets.add(module)

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                add(module, alias.name)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            add(node.args[0].value)
    return {target for target in targets if target == "dagguard" or target.startswith("dagguard.")}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def part_of(module: str) -> str:
    if module == "dagguard":
        return PARTS["dagguard"]
    prefix = module
    while prefix != "dagguard":
        if prefix in PARTS:
            return PARTS[prefix]
        prefix = prefix.rpartition(".")[0]
    raise AssertionError(f"{module} is in no part: place it in PARTS of tests/test_import_layout.py")


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_every_part_names_only_parts_that_exist():
    assert set(PARTS.values()) == set(MAY_IMPORT)
    assert all(allowed <= set(MAY_IMPORT) for allowed in MAY_IMPORT.values())


def test_no_import_runs_up_the_layers():
    upward = sorted(f"{source} -> {target} ({part_of(source)} may not import {part_of(target)})"
                    for source, targets in graph().items() for target in targets
                    if part_of(source) != part_of(target) and part_of(target) not in MAY_IMPORT[part_of(source)])
    assert upward == []


def test_no_import_circle():
    assert [sorted(circle) for circle in circles(graph())] == []


def test_the_model_packages_say_what_they_know_and_export_nothing():
    for package in sorted((ROOT / "dagguard" / "model").iterdir()):
        init = package / "__init__.py"
        if not package.is_dir() or package.name.startswith("__"):
            continue
        body = ast.parse(init.read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), init
        assert "may import" in body[0].value.value or "imports no other" in body[0].value.value, init
    assert not [path for path in (ROOT / "dagguard" / "model").glob("*.py") if path.name != "__init__.py"]


@pytest.mark.parametrize("source, expected", [
    ("from dagguard.model.basics import values\n", {"dagguard.model.basics.values"}),
    ("def f():\n    from dagguard.engine.runner import check_source\n", {"dagguard.engine.runner"}),
    ("from .base import Rule\n", {"dagguard.rules.base"}),
    ("import importlib\nimportlib.import_module('dagguard.rules.dg101_catchup_without_end_date')\n",
     {"dagguard.rules.dg101_catchup_without_end_date"}),
])
def test_the_graph_reads_every_kind_of_import(tmp_path, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert imported("dagguard.rules.probe", path, modules()) == expected


def test_a_circle_is_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
