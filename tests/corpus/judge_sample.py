"""Draw a reproducible sample of findings per rule, spread across repositories, with source context.

The findings are `dagguard check --output-format json` reports, one file per repository named
after the repository's folder in the corpus (`FINDINGS_DIR/<repo>.json`); `--run` writes them first.

    python tests/corpus/judge_sample.py --corpus /work/fresh_corpus --findings /tmp/findings --run
    python tests/corpus/judge_sample.py --corpus /work/fresh_corpus --findings /tmp/findings --rule DG103

The same seed and `--per-rule` give the same sample from the same reports. After a change to
dagguard the findings that remain keep their places in the draw, so a judgement can be redone
by drawing again and reading only the findings that are new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

NOW = "2026-12-04T00:00Z"   # the fixed "today" the published judgement was made with


@dataclass(frozen=True)
class Sampled:
    repo: str
    finding: dict


def run_check(corpus: Path, findings_dir: Path, python: str) -> None:
    """Run `dagguard check` in every repository of the corpus, writing <repo>.json (no cache)."""
    findings_dir.mkdir(parents=True, exist_ok=True)
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith(".")):
        out = findings_dir / f"{repo.name}.json"
        run = subprocess.run([python, "-m", "dagguard", "check", "--output-format", "json", "--no-cache",
                              "--now", NOW, "."], cwd=repo, capture_output=True, text=True, env=os.environ.copy(),
                             check=False)   # exit 1 means findings; 2 is reported below
        if run.returncode not in (0, 1):
            print(f"{repo.name}: exit {run.returncode}: {run.stderr.strip()}", file=sys.stderr)
        out.write_text(run.stdout or "[]")


def load_findings(findings_dir: Path) -> dict[str, list[dict]]:
    """Each repository's findings, by repository name (the JSON file's stem)."""
    return {path.stem: json.loads(path.read_text() or "[]") for path in sorted(findings_dir.glob("*.json"))}


def draw(findings: dict[str, list[dict]], per_rule: int, seed: int,
         rules: Optional[Iterable[str]] = None) -> dict[str, list[Sampled]]:
    """Up to `per_rule` findings of each rule, taken in turn from each repository that has some
    (repositories and findings in a seeded pseudo-random order), so one noisy repository cannot
    fill a rule's sample."""
    by_rule: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for repo, items in findings.items():
        for finding in items:
            by_rule[finding["code"]][repo].append(finding)
    wanted = set(rules) if rules else None
    sample: dict[str, list[Sampled]] = {}
    for code in sorted(by_rule):
        if wanted is not None and code not in wanted:
            continue
        # Each finding and repository is ranked by a hash of the seed and where it is, not by
        # a shuffle: after a change, the findings that remain keep their turn, the ones gone
        # drop out, and new ones take their ranked places.
        queues = {repo: sorted(items, key=lambda f, repo=repo: _rank(seed, code, repo, _where(f)))
                  for repo, items in by_rule[code].items()}
        order = sorted(queues, key=lambda repo: _rank(seed, code, repo, ""))
        picked: list[Sampled] = []
        while len(picked) < per_rule and any(queues[repo] for repo in order):
            for repo in order:
                if queues[repo] and len(picked) < per_rule:
                    picked.append(Sampled(repo, queues[repo].pop(0)))
        sample[code] = picked
    return sample


def _where(finding: dict) -> str:
    """A finding's place: its message can change with dagguard, its place in the corpus cannot."""
    return f"{finding['path']}:{finding['line']}:{finding['column']}"


def _rank(seed: int, code: str, repo: str, where: str) -> str:
    return hashlib.sha256(f"{seed}:{code}:{repo}:{where}".encode()).hexdigest()


def context(root: Path, finding: dict, lines_around: int) -> str:
    """The finding's lines with `lines_around` lines either side, numbered, the first one marked."""
    path = root / finding["path"]
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"    (cannot read {path}: {exc})"
    start = max(1, finding["line"] - lines_around)
    end = min(len(text), max(finding["line"], finding.get("end_line", finding["line"])) + lines_around)
    end = min(end, finding["line"] + 3 * lines_around)   # a DAG's whole body is not context
    return "\n".join(f"{'>' if n == finding['line'] else ' '}{n:5d} | {text[n - 1]}" for n in range(start, end + 1))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="folder of repository copies")
    parser.add_argument("--findings", type=Path, required=True, help="folder of <repo>.json reports")
    parser.add_argument("--run", action="store_true", help="run dagguard check first, writing the reports")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs dagguard (with --run)")
    parser.add_argument("--per-rule", type=int, default=12)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--context", type=int, default=3, help="source lines either side")
    parser.add_argument("--rule", action="append", help="only this rule (repeatable)")
    options = parser.parse_args(argv)
    if options.run:
        run_check(options.corpus, options.findings, options.python)
    findings = load_findings(options.findings)
    totals = {code: sum(1 for items in findings.values() for f in items if f["code"] == code)
              for code in {f["code"] for items in findings.values() for f in items}}
    for code, picked in draw(findings, options.per_rule, options.seed, options.rule).items():
        repos = sorted({s.repo for s in picked})
        print(f"\n## {code}: {len(picked)} of {totals[code]} findings, from {len(repos)} repositories")
        for number, item in enumerate(picked, 1):
            f = item.finding
            print(f"\n[{code}-{number}] {item.repo} {f['path']}:{f['line']}:{f['column']}: {f['message']}")
            print(context(options.corpus / item.repo, f, options.context))
    return 0


if __name__ == "__main__":
    sys.exit(main())
