"""The judging sample must be reproducible and spread across repositories."""

from __future__ import annotations

from tests.corpus.judge_sample import draw


def _finding(code: str, line: int) -> dict:
    return {"code": code, "path": "dags/d.py", "line": line, "column": 1, "message": "m"}


FINDINGS = {
    "noisy": [_finding("DG103", n) for n in range(1, 101)],
    "quiet": [_finding("DG103", 1), _finding("DG103", 2)],
    "other": [_finding("DG101", 5)],
}


def test_same_seed_same_sample_and_another_seed_another():
    first = draw(FINDINGS, per_rule=12, seed=21)
    assert first == draw(FINDINGS, per_rule=12, seed=21)
    assert first["DG103"] != draw(FINDINGS, per_rule=12, seed=22)["DG103"]


def test_a_noisy_repository_cannot_fill_a_rules_sample():
    picked = draw(FINDINGS, per_rule=12, seed=21)["DG103"]
    assert len(picked) == 12
    assert sum(1 for s in picked if s.repo == "quiet") == 2   # every finding of the quiet one
    assert len({(s.repo, s.finding["line"]) for s in picked}) == 12   # none drawn twice


def test_fewer_findings_than_asked_are_all_taken_and_rules_can_be_chosen():
    sample = draw(FINDINGS, per_rule=12, seed=21, rules=["DG101"])
    assert list(sample) == ["DG101"]
    assert [s.repo for s in sample["DG101"]] == ["other"]


def test_findings_that_remain_keep_their_turn_when_others_disappear():
    before = [s.finding["line"] for s in draw(FINDINGS, per_rule=1000, seed=21)["DG103"] if s.repo == "noisy"]
    fewer = {**FINDINGS, "noisy": [f for f in FINDINGS["noisy"] if f["line"] % 3]}   # a third fixed
    after = [s.finding["line"] for s in draw(fewer, per_rule=1000, seed=21)["DG103"] if s.repo == "noisy"]
    assert after == [line for line in before if line % 3]
