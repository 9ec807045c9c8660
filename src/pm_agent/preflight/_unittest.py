"""unittest: whether a bare `python -m unittest` runs a suite, and discovery for suites pytest does not collect.

pytest collects `test_*.py` and `*_test.py` unless its python_files says otherwise; mkdocs names its modules
`build_tests.py` and runs them with `python -m unittest discover -s mkdocs -p "*tests.py"`, and a project may keep
its unittest tests in `tests.py` modules as Django's `startapp` does. Discovery takes one file pattern and enters
only packages below the folder it starts from.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._probe import Probe, PythonInfo

_DJANGO_TEST = re.compile(r"^\s*(from|import) django\b", re.MULTILINE)


def discover(
    probe: Probe, python: PythonInfo, problem: str | None, tests: list[str], found: Finding, prefix: str, layout: str
) -> None:
    """`python -m unittest discover` with the suite's file pattern, for `*_tests.py` or `tests.py` files pytest does
    not collect (its default python_files is `test_*.py *_test.py`); pytest marked, when they are not unittest's."""
    pytest = f"{prefix}{python.command} -m pytest -q"
    names = {Path(t).name for t in tests}
    pattern = "tests.py" if names == {"tests.py"} else "*tests.py" if "tests.py" in names else "*_tests.py"
    start = os.path.commonpath([Path(t).parent.as_posix() for t in tests]) or "."
    # From the top (`-t .`) when the start folder is a package all the way up: modules get their dotted names.
    packages = [Path(start), *Path(start).parents][:-1]
    top = start != "." and all((probe.repo / p / "__init__.py").is_file() for p in packages)
    where = (f" -s {shlex.quote(start)}" if start != "." else "") + (" -t ." if top else "")
    command = f"{prefix}{python.command} -m unittest discover{where} -p {shlex.quote(pattern)}"
    not_collected = (
        f"pytest collects test_*.py and *_test.py only (no python_files setting): it finds none of {sample(tests)}"
    )
    django = next((t for t in tests if _DJANGO_TEST.search(read(probe.repo / t))), None)
    if django is not None:  # outside a Django project pm-agent recognises (a Flask manage.py): no runner runs it
        why = f"{django} is a Django test (it imports django): only Django's runner, with the settings, runs it"
        found.rejected += [
            Rejected(command, why, Slot.TEST),
            Rejected(pytest, f"no tests it collects: {why}", Slot.TEST),
        ]
        return
    blocker = unittest_blocker(probe.repo, tests, start)
    if blocker is None:
        reason = f"unittest discovery: {sample(tests)} are unittest tests named {pattern}, not collected by pytest"
        found.candidates.append(Candidate(Slot.TEST, command, reason + layout, problem))
        found.rejected.append(Rejected(pytest, not_collected, Slot.TEST))
        return
    found.rejected.append(Rejected(command, blocker, Slot.TEST))
    fix = f"{not_collected}; set python_files = test_*.py {pattern} in its configuration"
    found.candidates.append(Candidate(Slot.TEST, pytest, f"pytest: {sample(tests)}{layout}", problem or fix))


def unittest_blocker(repo: Path, tests: list[str], start: str | None = None) -> str | None:
    """Why a bare `python -m unittest` (`start` None), or discovery from `start` with the tests' own pattern, would
    not run exactly these tests (it must also take file paths)."""
    for rel in tests:
        text = read(repo / rel)
        if "unittest" not in text and "TestCase" not in text:
            return f"{rel} is not a unittest test (pytest style)"
        if start is None and not Path(rel).name.startswith("test"):
            return f"{rel} does not match unittest's default pattern test*.py"
        # Discovery enters only packages below the folder it starts from.
        for parent in Path(rel).parents:
            below = parent != Path() and (start is None or Path(start) in parent.parents)
            if below and not (repo / parent / "__init__.py").is_file():
                where = "from the root" if start is None else f"from {start}/"
                return f"{parent}/ has no __init__.py, so unittest discovery {where} does not enter it"
    return None


def sample(tests: list[str]) -> str:
    """The first two test files, and how many more, for a reason."""
    more = f" and {len(tests) - 2} more" if len(tests) > 2 else ""
    return ", ".join(tests[:2]) + more


def read(path: Path) -> str:
    """A file's text; "" when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


__all__ = ["discover", "read", "sample", "unittest_blocker"]
