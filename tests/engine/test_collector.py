"""The collector policy of a run: a file's cyclic garbage is freed, the run's kept objects
(imports, the project index's trees) leave the collector's scans, and nothing stays frozen
after the run."""

from __future__ import annotations

import datetime as dt
import gc
import weakref
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from dagguard.engine import collector, runner

NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
FIXTURE_REPO = Path(__file__).parents[1] / "fixtures" / "factory_repo"


class _Node:
    def __init__(self) -> None:
        self.other: object = None


@pytest.fixture(autouse=True)
def _nothing_frozen_around():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_after_file_frees_the_files_cycles_before_freezing_the_rest():
    first, second = _Node(), _Node()
    first.other, second.other = second, first    # a cycle: only the collector frees it
    gone = weakref.ref(first)
    kept = [_Node()]
    del first, second
    collector.after_file()
    assert gone() is None                        # freed, not frozen with the survivors
    assert gc.get_freeze_count() > 0 and kept    # what survived is out of later scans
    collector.end_of_run()
    assert gc.get_freeze_count() == 0


def test_a_run_scans_only_the_current_files_objects_and_leaves_nothing_frozen(monkeypatch):
    scanned_after_each_file: list[int] = []
    original = collector.after_file

    def recording() -> None:
        original()
        scanned_after_each_file.append(len(gc.get_objects()))   # the permanent generation is not in it

    monkeypatch.setattr(collector, "after_file", recording)
    tracked_before = len(gc.get_objects())
    result = check_paths([FIXTURE_REPO], settings=Settings(), now=NOW, jobs=1)
    assert result.files_checked >= 5 and len(scanned_after_each_file) == result.files_checked
    # The index keeps the factory modules' trees for the whole run (tens of thousands of
    # objects); after each file the collector's next scans see almost none of them.
    assert max(scanned_after_each_file) < tracked_before / 10
    assert gc.get_freeze_count() == 0


def test_the_index_trees_a_run_kept_are_collectable_after_it():
    check_paths([FIXTURE_REPO], settings=Settings(), now=NOW, jobs=1)
    assert gc.get_freeze_count() == 0
    assert runner._CURRENT == {}
