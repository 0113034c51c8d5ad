"""DG110 against Airflow 3.3's own partition mappers: for each DAG waiting on every one of
several assets (DG110's page examples, Airflow's example_asset_partition.py), the scheduler's
timetable maps one instant, written as each asset's mapper reads it, to one key for all the
assets exactly when dagguard does not flag the DAG."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagguard.rules.pages import examples, page_text
from tests.lint_helpers import lint

pytest.importorskip("airflow.sdk")
pytestmark = pytest.mark.airflow

MAP = """
import json, sys, warnings
from datetime import datetime
warnings.simplefilter("ignore")
from airflow.dag_processing.dagbag import DagBag
from airflow.serialization.serialized_objects import DagSerialization

INSTANT = datetime(2026, 1, 5, 10, 0, 0)

def names(condition):
    if hasattr(condition, "objects"):
        return [n for part in condition.objects for n in names(part)]
    return [condition.name]

def input_format(mapper):
    inner = getattr(mapper, "upstream_mapper", None)
    return input_format(inner) if inner is not None else getattr(mapper, "input_format", "%Y-%m-%dT%H:%M:%S")

out = {}
for path in sys.argv[1:]:
    bag = DagBag(dag_folder=path)
    assert not bag.import_errors, bag.import_errors
    for dag in bag.dags.values():
        condition = getattr(dag.timetable, "asset_condition", None)
        if type(dag.timetable).__name__ != "PartitionedAssetTimetable" or not hasattr(condition, "objects") \\
                or type(condition).__name__ != "AssetAll":
            continue
        core = DagSerialization.from_dict(DagSerialization.to_dict(dag)).timetable
        keys = set()
        for name in names(condition):
            mapper = core.get_partition_mapper(name=name)
            keys.add(str(mapper.to_downstream(INSTANT.strftime(input_format(mapper)))))
        out[f"{path}:{dag.dag_id}"] = sorted(keys)
print("RESULT" + json.dumps(out))
"""


def _files(tmp_path: Path) -> list[Path]:
    import airflow

    files = [Path(airflow.__file__).parent / "example_dags" / "example_asset_partition.py"]
    for example in examples(page_text("DG110") or ""):
        path = tmp_path / f"dg110_{example.kind}_{example.number}.py"
        path.write_text(example.code, encoding="utf-8")
        files.append(path)
    return files


def test_dg110_flags_exactly_the_dags_whose_mapped_keys_differ(tmp_path):
    files = _files(tmp_path)
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "home"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    run = subprocess.run([sys.executable, "-c", MAP, *map(str, files)], capture_output=True, text=True,
                         env=env, timeout=300)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr[-3000:]
    mapped = json.loads(line[len("RESULT"):])
    assert len(mapped) >= 7   # the page's AND examples and the two of Airflow's file
    flagged = set()
    for path in files:
        for finding in lint(tmp_path, path.read_text(encoding="utf-8"), name=f"lint_{path.name}"):
            if finding.code == "DG110":
                flagged.add(f"{path}:{finding.message.split(chr(39))[1]}")
    never_equal = {dag for dag, keys in mapped.items() if len(keys) > 1}
    assert flagged == never_equal
    assert any(dag.endswith(":player_odds_quality_check_wont_ever_to_trigger") for dag in flagged)
