"""The Airflow major version a project pins: `airflow-version` when the config does not set it.

Airflow 2 and 3 differ in defaults the schedule rules read (catchup is on in 2, off in 3), so an
Airflow 2 project checked as 3 misses the very flood the README opens with. As ruff takes its
target version from `requires-python`, dagguard takes the Airflow version from where teams pin
it: the dependencies of a pyproject.toml (PEP 621 and Poetry), requirements and constraints
files, and the Airflow image of a Dockerfile or compose file (`apache/airflow:<tag>`, Astronomer's
`astro-runtime:<tag>`). The search starts in the checked paths' common folder and goes up to the
project's root (a folder with `.git` or a pyproject.toml); the first folder whose files name
Airflow decides, when its pins that settle a major version (`==2.9.3`, `>=2.7,<3`, `^2.9`, an
image tag `2.9.3-python3.11`) all settle the same one.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAJORS = ("2", "3")
# `apache-airflow`, `apache_airflow[celery]`, `apache-airflow-core` (3.x), not a provider package.
_REQUIREMENT = re.compile(r"^\s*apache[-_.]airflow(?:[-_.]core)?(?![-_.\w])\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)",
                          re.IGNORECASE)
_NAME = re.compile(r"apache[-_.]airflow(?:[-_.]core)?", re.IGNORECASE)
# Airflow's own image, and Astronomer's older certified images, are tagged with Airflow's version.
_IMAGE = re.compile(r"\b(?:apache/airflow|astronomer/ap-airflow):(?P<tag>[\w.-]+)")
# Astro Runtime numbers itself: `3.1-11` is Airflow 3.1; `4.0.0` to `12.x.y` are Airflow 2.2 to 2.10
# (and the older `3.0.x`, Airflow 2.1): a dash after two numbers tells the new scheme.
_ASTRO = re.compile(r"\bastro-runtime:(?P<tag>[\w.-]+)")
_EXACT = re.compile(r"^===?\s*v?(?P<major>\d+)(?:\.|$)")
_LEADING = re.compile(r"^v?(?P<major>\d+)\.\d")
# A plain bound, which _majors_of_bounds reads without packaging.
_BOUND = re.compile(r"^\s*(?P<op>>=|<=|~=|>|<)\s*v?(?P<major>\d+)(?P<rest>(?:\.\d+)*)\s*$")
# Versions of each major a specifier set is asked about (`~=3.1.2` allows only 3.1.x from 3.1.2).
_PROBES = ("0", "0.1", "1.5", "5", "9.5", "10.5", "99")
_TEXT_FILES = re.compile(
    r"^(requirements|constraints).*\.(txt|in)$|^Dockerfile|\.Dockerfile$|^(docker-)?compose.*\.ya?ml$", re.IGNORECASE)


@dataclass(frozen=True)
class AirflowPin:
    major: str      # "2" or "3"
    source: str     # where it was read, for --show-settings: `requirements.txt (apache-airflow==2.9.2)`


def find_airflow_pin(start: Path) -> Optional[AirflowPin]:
    """The Airflow major version the project around `start` pins, or None when none is found or
    the deciding folder's pins settle none or disagree."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        try:
            names = sorted(os.listdir(candidate))
        except OSError:
            names = []
        pins = list(_pins(candidate, names))
        if pins:
            # An unpinned `apache-airflow[sentry]` (the image pins it) or `>=2.7` says nothing.
            majors = {major for major, _ in pins if major is not None}
            if len(majors) != 1:
                return None
            major = majors.pop()
            return AirflowPin(major, next(source for m, source in pins if m == major))
        if ".git" in names or "pyproject.toml" in names:
            return None
    return None


def _pins(folder: Path, names: list[str]) -> Iterator[tuple[Optional[str], str]]:
    """(major or None when the pin allows both, where) for each Airflow pin of the folder's files."""
    for name in names:
        if name == "pyproject.toml":
            yield from _pyproject_pins(folder / name)
        elif _TEXT_FILES.search(name):
            text = _read(folder / name)
            if text is None:
                continue
            # Requirement lines count in requirements and constraints files; a Dockerfile's or a
            # compose file's pin is its image.
            requirements = name.lower().startswith(("requirements", "constraints"))
            for line in text.splitlines():
                found = _REQUIREMENT.match(line) if requirements else None
                if found is not None:
                    yield _major_of_specifier(found.group("spec").strip()), f"{name} ({line.strip()})"
                for image in _IMAGE.finditer(line):
                    leading = _LEADING.match(image.group("tag"))
                    if leading is not None:   # `latest`, `slim-latest` pin nothing
                        yield _known(leading.group("major")), f"{name} ({image.group(0)})"
                for image in _ASTRO.finditer(line):
                    major = _astro_runtime_major(image.group("tag"))
                    if major is not None:
                        yield major, f"{name} ({image.group(0)})"


def _pyproject_pins(path: Path) -> Iterator[tuple[Optional[str], str]]:
    text = _read(path)
    if text is None:
        return
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return   # the config reader reports a broken pyproject.toml when it is the config
    project = data.get("project")
    if isinstance(project, dict):
        lists = [project.get("dependencies")]
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            lists.extend(optional.values())
        for requirements in lists:
            for line in requirements if isinstance(requirements, list) else ():
                found = _REQUIREMENT.match(line) if isinstance(line, str) else None
                if found is not None:
                    yield _major_of_specifier(found.group("spec").strip()), f"pyproject.toml ({line.strip()})"
    poetry = _table(data, "tool", "poetry")
    groups = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
    groups.extend(_table(group, "dependencies") for group in _table(poetry, "group").values())
    for dependencies in groups:
        for name, value in dependencies.items():
            if _NAME.fullmatch(name) is not None:
                constraint = value.get("version") if isinstance(value, dict) else value
                if isinstance(constraint, str):
                    yield _major_of_poetry(constraint.strip()), f"pyproject.toml ({name} = {constraint!r})"


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _major_of_poetry(constraint: str) -> Optional[str]:
    """Poetry's `^2.9` and `~2.9.1` keep the major (for a major above 0); `2.9.3` is exact;
    anything else is a PEP 440 specifier set."""
    caret = re.fullmatch(r"[\^~]\s*v?(\d+)(?:\.\d+)*(?:\.\*)?", constraint)
    if caret is not None:
        return _known(caret.group(1))
    if re.fullmatch(r"v?\d+(?:\.\d+)*", constraint):
        return _known(constraint.lstrip("v").split(".")[0])
    return _major_of_specifier(constraint)


def _major_of_specifier(spec: str) -> Optional[str]:
    """The one major version a PEP 440 specifier set allows (`==2.9.3`, `>=2.7,<3`, `~=2.9`), or
    None when it allows both (or none, or is unreadable: a URL, an empty pin)."""
    exact = _EXACT.match(spec)
    if exact is not None:   # the common `==2.9.3`, without loading packaging
        return _known(exact.group("major"))
    if not spec:
        return None
    bounded = _majors_of_bounds(spec)
    if bounded is not None:   # `>=2.7,<3`: every run reads the pin, and packaging costs 10-20 ms to load
        return bounded.pop() if len(bounded) == 1 else None
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
    except ImportError:    # pragma: no cover - pip, pytest and Airflow all bring it
        return None
    try:
        allowed = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    majors = {major for major in MAJORS
              if any(allowed.contains(f"{major}.{minor}", prereleases=True) for minor in _PROBES)}
    return majors.pop() if len(majors) == 1 else None


def _astro_runtime_major(tag: str) -> Optional[str]:
    new_scheme = re.match(r"(\d+)\.\d+-\d+", tag)
    if new_scheme is not None:
        return _known(new_scheme.group(1))
    old_scheme = re.match(r"(\d+)\.\d+\.\d+", tag)
    return "2" if old_scheme is not None and 3 <= int(old_scheme.group(1)) <= 12 else None


def _majors_of_bounds(spec: str) -> Optional[set[str]]:
    """Which of MAJORS a set of plain bounds (`>=2.7`, `<3`, `<=2.10.5`, `~=2.9`, `>3.0`) allows,
    or None for any other clause (left to packaging). A bound on `3` or `3.0.0` excludes all of 3
    from below (`<3`) but `<3.1` lets 3.0 in."""
    allowed = set(MAJORS)
    for clause in spec.split(","):
        found = _BOUND.match(clause)
        if found is None:
            return None
        op, major = found.group("op"), int(found.group("major"))
        if op == "~=" and not found.group("rest"):
            return None   # `~=3` is not a valid specifier: packaging says so
        beyond_zero = any(int(part) for part in found.group("rest").split(".")[1:])
        for candidate in MAJORS:
            m = int(candidate)
            keeps = {">=": m >= major, ">": m >= major, "<=": m <= major, "~=": m == major,
                     "<": m < major or (m == major and beyond_zero)}[op]
            if not keeps:
                allowed.discard(candidate)
    return allowed


def _known(major: str) -> Optional[str]:
    return major if major in MAJORS else None


def _read(path: Path) -> Optional[str]:
    try:
        if path.stat().st_size > 1_000_000:   # not a requirements file
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
