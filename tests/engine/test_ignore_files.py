"""Ignore files: git's precedence between folders and files, pathspec's matching within one."""

from __future__ import annotations

from dagguard.engine.ignore_files import IgnoreFiles


def test_deeper_files_override_shallower_ones_and_ignore_overrides_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").write_text("local.py\n")
    (tmp_path / ".gitignore").write_text("*.gen.py\nbuild/\n")
    sub = tmp_path / "dags" / "team"
    sub.mkdir(parents=True)
    (tmp_path / "dags" / ".gitignore").write_text("!kept.gen.py\n")
    (sub / ".gitignore").write_text("notes.py\n")
    (sub / ".ignore").write_text("!notes.py\n")
    rules = IgnoreFiles(sub)  # the root's files count although the walk starts below it
    assert rules.ignored(sub / "x.gen.py", False)
    assert not rules.ignored(sub / "kept.gen.py", False)
    assert not rules.ignored(sub / "notes.py", False)
    assert rules.ignored(sub / "local.py", False)
    assert rules.ignored(sub / "build", True) and not rules.ignored(sub / "build", False)
    assert not rules.ignored(sub / "dag.py", False)


def test_outside_a_repository_only_files_from_the_checked_folder_down_count(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    inner = tmp_path / "dags"
    inner.mkdir()
    (inner / ".ignore").write_text("skip.py\n")
    rules = IgnoreFiles(inner)
    assert not rules.ignored(inner / "dag.py", False)
    assert rules.ignored(inner / "skip.py", False)
