"""Which rule codes are enabled for a file: select/ignore prefixes and per-file-ignores."""

from __future__ import annotations

from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable

from dagguard.config import ALL_SELECTOR, RuleSelection, Settings
from dagguard.engine.findings import Finding
from dagguard.engine.results import FileResult


def _specificity(selector: str) -> int:
    # ruff's order: ALL < the linter (DG) < one-digit prefix < ... < a full code.
    return 0 if selector == ALL_SELECTOR else len(selector)


def _matches(code: str, selector: str) -> bool:
    return selector == ALL_SELECTOR or code.startswith(selector)


def resolve_rules(selections: Iterable[RuleSelection], codes: Iterable[str]) -> frozenset[str]:
    """The codes the layered selections enable, with ruff's resolution: within a layer the more
    specific selector wins and an ignore wins a tie; a later layer's `select` starts over."""
    codes = tuple(codes)
    enabled: set[str] = set()
    for selection in selections:
        updates: dict[str, bool] = {}
        selected = (*(selection.select or ()), *selection.extend_select)
        for level in sorted({_specificity(s) for s in (*selected, *selection.ignore)}):
            for value, selectors in ((True, selected), (False, selection.ignore)):
                for selector in selectors:
                    if _specificity(selector) == level:
                        updates.update((code, value) for code in codes if _matches(code, selector))
        if selection.select is not None:
            enabled = {code for code, on in updates.items() if on}
        else:
            enabled |= {code for code, on in updates.items() if on}
            enabled -= {code for code, on in updates.items() if not on}
    return frozenset(enabled)


def _resolve(settings: Settings) -> frozenset[str]:
    from dagguard.rules import RULE_CODES   # the codes alone: no rule module is imported

    return resolve_rules(settings.rule_selections, RULE_CODES)


_resolve_cached = lru_cache(maxsize=32)(_resolve)


def enabled_codes(settings: Settings) -> frozenset[str]:
    """The rule codes `settings` enable (resolved once per settings object)."""
    try:
        return _resolve_cached(settings)
    except TypeError:  # a hand-made Settings holding lists is not hashable
        return _resolve(settings)


def is_enabled(code: str, settings: Settings) -> bool:
    """Whether the rule with `code` runs under `settings`' select/ignore layers."""
    return code in enabled_codes(settings)


def is_ignored(code: str, settings: Settings) -> bool:
    """Whether some ignore selector names `code` (a syntax error is shown unless ignored)."""
    return any(_matches(code, s) for layer in settings.rule_selections for s in layer.ignore)


def relative_posix(path: Path, root: Path) -> str:
    try:
        return PurePosixPath(path.resolve().relative_to(root.resolve())).as_posix()
    except ValueError:
        return PurePosixPath(path).as_posix()


def matches_glob(path: Path, pattern: str, root: Path) -> bool:
    """ruff-style matching: against the path relative to the config folder, or the file name."""
    rel = relative_posix(path, root)
    pattern = pattern.rstrip("/")
    if fnmatch(rel, pattern) or fnmatch(path.name, pattern):
        return True
    # A folder pattern excludes everything below it.
    parts = PurePosixPath(rel).parts
    return any(fnmatch("/".join(parts[:i]), pattern) or fnmatch(parts[i - 1], pattern)
               for i in range(1, len(parts)))


def ignored_for_file(code: str, path: Path, settings: Settings) -> bool:
    for pattern, codes in settings.per_file_ignores:
        if matches_glob(path, pattern, settings.root) and any(_matches(code, c) for c in codes):
            return True
    return False


def syntax_result(path: Path, finding: Finding, settings: Settings) -> FileResult:
    """A file's DG000 alone, unless the configuration turns DG000 off."""
    keep = (not ignored_for_file(finding.code, path, settings)
            and (is_enabled(finding.code, settings) or not is_ignored(finding.code, settings)))
    return FileResult(path, (finding,) if keep else ())
