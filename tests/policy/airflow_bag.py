"""Load DAG folders with Airflow 3.3's own DagBag in a fresh interpreter (a temporary
AIRFLOW_HOME), as the DAG processor loads them, with dagguard's policy installed the way the
README says: `from dagguard.policy import dag_policy` in `$AIRFLOW_HOME/config/
airflow_local_settings.py`, or the `airflow.policy` entry point of an installed distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

REPO = Path(__file__).resolve().parents[2]
LOCAL_SETTINGS = "from dagguard.policy import dag_policy\n"
# Each bag's folder is also [core] dags_folder (where the search for dagguard.toml stops); the
# environment changes between bags, as the policy reads it on every call.
LOAD = """
import json, logging, os, sys, warnings
warnings.simplefilter("ignore")
from airflow.dag_processing.dagbag import DagBag

records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.levelname, record.getMessage()])
logging.getLogger("dagguard.policy").addHandler(Keep())
out = []
for spec in json.loads(sys.argv[1]):
    saved = dict(os.environ)
    os.environ.update(spec["env"], AIRFLOW__CORE__DAGS_FOLDER=spec["folder"])
    records.clear()
    bag = DagBag(dag_folder=spec["folder"])
    out.append({"dags": sorted(bag.dag_ids), "errors": {os.path.basename(k): v for k, v in bag.import_errors.items()},
                "logs": list(records)})
    os.environ.clear()
    os.environ.update(saved)
print("RESULT" + json.dumps(out))
"""


def airflow_home(tmp: Path, local_settings: Optional[str] = LOCAL_SETTINGS) -> Path:
    """A fresh AIRFLOW_HOME, with airflow_local_settings.py in its config folder if given."""
    home = tmp / "airflow_home"
    (home / "config").mkdir(parents=True, exist_ok=True)
    if local_settings is not None:
        (home / "config" / "airflow_local_settings.py").write_text(local_settings)
    return home


def load_bags(home: Path, bags: Sequence[tuple[Path, Mapping[str, str]]],
              python_path: Sequence[Path] = ()) -> list[dict[str, Any]]:
    """Each folder's DagBag: its DAG ids, its import errors (by file name) and what the policy
    logged while it loaded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__", "AIRFLOW_HOME"))}
    env.update(AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               PYTHONPATH=os.pathsep.join([str(REPO), *map(str, python_path)]))
    specs = [{"folder": str(folder), "env": dict(extra)} for folder, extra in bags]
    run = subprocess.run([sys.executable, "-c", LOAD, json.dumps(specs)], capture_output=True, text=True,
                         env=env, timeout=600)
    line = next((line for line in run.stdout.splitlines() if line.startswith("RESULT")), None)
    assert line is not None, run.stderr[-4000:]
    return json.loads(line[len("RESULT"):])
