"""Property tests over real Airflow repositories written by others (not in this repository).

The corpus is a folder of repository copies, one folder per repository (tests/corpus/README.md
says how to build it). It is taken from `DAGGUARD_CORPUS` (one folder, or several separated by
os.pathsep), else from /work/fresh_corpus and /work/corpus when they exist; without one, every
test here is skipped. Each repository is checked as a user would run `dagguard check .` at its
root: its own pyproject.toml (if any) is the configuration and the root is the project root;
`check` runs once more with `airflow-version = "2"`.

What must hold on any real code: no internal error (no rule raises, every reported node is
located), every finding's span lies inside its file, and `dagguard dags` runs to the end.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from dagguard.api import check_paths, discover_settings
from dagguard.engine.findings import Finding
from tests.lint_helpers import NOW

DEFAULT_CORPORA = (Path("/work/fresh_corpus"), Path("/work/corpus"))
_NEWLINE = re.compile(r"\r\n|\r|\n")   # the line breaks Python's tokenizer knows, not str.splitlines()'s


def corpus_folders() -> list[Path]:
    """The corpus folders: DAGGUARD_CORPUS when set, else the default places that exist."""
    configured = os.environ.get("DAGGUARD_CORPUS")
    if configured:
        return [Path(part) for part in configured.split(os.pathsep) if part]
    return [folder for folder in DEFAULT_CORPORA if folder.is_dir()]


def _is_repository(folder: Path) -> bool:
    """A folder given as a corpus that is itself one repository rather than a folder of them."""
    return any((folder / marker).exists() for marker in (".git", "pyproject.toml", "setup.py", "dags")) \
        or any(folder.glob("*.py"))


def repositories() -> list[Path]:
    """Every repository copy of every corpus folder, sorted; hidden folders (caches) are not ones."""
    found: list[Path] = []
    for corpus in corpus_folders():
        if not corpus.is_dir():
            continue
        if _is_repository(corpus):
            found.append(corpus)
            continue
        found.extend(sorted(child for child in corpus.iterdir()
                            if child.is_dir() and not child.name.startswith(".") and any(child.rglob("*.py"))))
    return found


def _test_id(repo: Path, all_repos: list[Path]) -> str:
    """The repository's folder name, prefixed by its corpus when two corpora share a name."""
    if sum(1 for other in all_repos if other.name == repo.name) > 1:
        return f"{repo.parent.name}/{repo.name}"
    return repo.name


def _corpus_params() -> list:
    repos = repositories()
    if not repos:
        configured = os.environ.get("DAGGUARD_CORPUS")
        where = f"DAGGUARD_CORPUS={configured} holds no repository" if configured else "no real corpus"
        reason = (f"{where}: set DAGGUARD_CORPUS to a folder of repository copies "
                  "(tests/corpus/README.md says how to build one)")
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(repo, id=_test_id(repo, repos)) for repo in repos]


CORPUS = _corpus_params()


def _lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":   # a final line break ends the last line; it starts none
        lines.pop()
    return lines


def span_problem(finding: Finding, root: Path) -> str | None:
    """Why the finding's span is not inside its file, or None when it is (1-based lines and
    columns; a column may point just past a line's last character, as an end does)."""
    path = Path(finding.path)
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        return f"{finding.path} is not a file"
    lines = _lines(path) or [""]   # an empty file still has a line 1, column 1
    where = f"{finding.path}:{finding.line}:{finding.column}-{finding.end_line}:{finding.end_column} {finding.code}"
    for line, column in ((finding.line, finding.column), (finding.end_line, finding.end_column)):
        if not 1 <= line <= len(lines):
            return f"{where}: line {line} outside 1..{len(lines)}"
        if not 1 <= column <= len(lines[line - 1]) + 1:
            return f"{where}: column {column} outside line {line} (1..{len(lines[line - 1]) + 1})"
    if (finding.end_line, finding.end_column) < (finding.line, finding.column):
        return f"{where}: ends before it starts"
    return None


# The repository's own settings, and Airflow 2 (most real repositories still run it; its rules
# take other paths: catchup on by default, no schedule means daily).
SETTINGS = [pytest.param({}, id="configured"), pytest.param({"airflow-version": "2"}, id="airflow-2")]


@pytest.mark.parametrize("overrides", SETTINGS)
@pytest.mark.parametrize("repo", CORPUS)
def test_check_has_no_internal_error_and_findings_lie_inside_their_files(repo: Path, overrides: dict,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)   # as `dagguard check .` at the repository root: paths are shown from here
    here = Path(".")
    result = check_paths([here], settings=discover_settings([here], None, overrides), now=NOW)
    assert result.internal_errors == ()
    assert result.files_checked > 0
    problems = [problem for finding in result.findings if (problem := span_problem(finding, repo)) is not None]
    assert problems == []


@pytest.mark.parametrize("repo", CORPUS)
def test_dags_listing_runs_to_the_end(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from dagguard.cli import app

    monkeypatch.chdir(repo)
    run = CliRunner().invoke(app, ["dags", "--format", "json"])
    assert run.exception is None or (isinstance(run.exception, SystemExit) and run.exit_code == 0), run.output
    assert run.exit_code == 0, run.output
    listed = json.loads(run.stdout)
    assert isinstance(listed, list)
    assert all(entry["path"] and entry["line"] >= 1 for entry in listed)


def _finding(path: str, line: int, column: int, end_line: int, end_column: int) -> Finding:
    return Finding(path=path, line=line, column=column, code="DG999", rule="test", severity="warning",
                   end_line=end_line, end_column=end_column, message="m")


def test_span_check_accepts_spans_inside_and_names_spans_outside(tmp_path: Path) -> None:
    # The property above is only as good as this check: it must tell a bad span from a good one.
    (tmp_path / "dag.py").write_text("x = 1\r\nwith_form_feed = '\x0c'\nlast\n")
    assert span_problem(_finding("dag.py", 1, 1, 3, 5), tmp_path) is None
    assert span_problem(_finding("dag.py", 2, 1, 2, 21), tmp_path) is None   # \x0c breaks no line
    assert "line 4 outside 1..3" in span_problem(_finding("dag.py", 4, 1, 4, 1), tmp_path)
    assert "column 7 outside line 1" in span_problem(_finding("dag.py", 1, 7, 1, 7), tmp_path)
    assert "ends before it starts" in span_problem(_finding("dag.py", 2, 3, 2, 2), tmp_path)
    assert "is not a file" in span_problem(_finding("gone.py", 1, 1, 1, 1), tmp_path)
    (tmp_path / "empty.py").write_text("")
    assert span_problem(_finding("empty.py", 1, 1, 1, 1), tmp_path) is None
