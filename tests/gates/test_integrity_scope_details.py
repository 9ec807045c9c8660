"""Integrity checks: what their results say (evidence and details), globs, ownership, the given change set.

Written against mutmut's survivors (make mutation) in gates/integrity.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates import check_scope, check_tests_weakened, check_vcs_tampering
from pm_agent.gates.integrity import in_scope
from pm_agent.plan.models import ExpectedFiles, Task
from pm_agent.vcs import ChangeSet, record_session_baseline
from pm_agent.vcs.models import FileChange


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


def test_a_glob_with_every_wildcard_kind() -> None:
    assert in_scope("src/x/a1.py", ["src/*/[ab]?.py"])
    assert not in_scope("src/x/c1.py", ["src/*/[ab]?.py"])


@pytest.mark.parametrize("entry", ["/a.py", "a.pyX", "a.py ", "a.py/x"])
def test_an_exact_entry_allows_only_its_own_path(entry: str) -> None:
    assert not in_scope("a.py", [entry])


def test_an_ownership_path_that_does_not_exist_yet_is_a_directory(work: Any) -> None:
    work.write("src/GFX/draw.py", "x\n")
    work.write("src/GFXtra.py", "x\n")
    result = check_scope(_task(ownership="src/GFX"), work.path, work.base)
    assert result.details["allowed"] == ["src/GFX/"]
    assert result.details["outside"] == ["src/GFXtra.py"]


def test_scope_evidence_and_details_when_files_are_outside(work: Any) -> None:
    work.write("calc.py", "y\n")
    work.write("notes.txt", "x\n")
    work.write("setup.cfg", "x\n")
    result = check_scope(
        _task(expected_files=ExpectedFiles(modify=["calc.py", "README.md"]), tests_to_add=["tests/test_calc.py"]),
        work.path,
        work.base,
    )
    assert not result.passed
    assert result.evidence == (
        "2 file(s) changed outside the task's scope:\n"
        "  notes.txt (A)\n"
        "  setup.cfg (A)\n"
        "  allowed: calc.py, README.md, tests/test_calc.py\n"
        "  (expected but untouched: README.md)"
    )
    assert result.details == {
        "checked": True,
        "outside": ["notes.txt", "setup.cfg"],
        "allowed": ["calc.py", "README.md", "tests/test_calc.py"],
        "untouched": ["README.md"],
    }


def test_an_expected_directory_is_touched_by_a_file_inside_it(make_work: Any) -> None:
    work = make_work({"pkg/core.py": "x\n"})
    work.write("pkg/core.py", "y\n")
    result = check_scope(_task(expected_files=ExpectedFiles(modify=["pkg"])), work.path, work.base)
    assert result.passed
    assert result.evidence == "all 1 changed file(s) are within scope"
    assert result.details["untouched"] == []


def test_no_scope_evidence(work: Any) -> None:
    work.write("anything.py", "x\n")
    result = check_scope(_task(), work.path, work.base)
    assert result.passed
    assert result.evidence == "the contract names no expected files or ownership directory; scope not checked"
    assert result.details == {"checked": False, "changed": ["anything.py"]}


def test_tests_weakened_reads_the_given_change_set(work: Any) -> None:
    work.delete("tests/test_calc.py")
    nothing = ChangeSet(base=work.base, target="worktree")
    assert check_tests_weakened(_task(), work.path, work.base, changes=nothing).passed
    deleted = ChangeSet(base=work.base, target="worktree", files=[FileChange(path="tests/test_other.py", status="D")])
    result = check_tests_weakened(_task(), work.path, work.base, changes=deleted)
    assert result.evidence == "test file deleted: tests/test_other.py"


def test_vcs_tampering_needs_a_baseline_or_a_head(work: Any) -> None:
    with pytest.raises(ValueError, match=r"^check_vcs_tampering needs a SessionBaseline or an expected_head$"):
        check_vcs_tampering(work.path)


def test_vcs_tampering_result_when_nothing_moved(work: Any) -> None:
    baseline = record_session_baseline(work.path)
    result = check_vcs_tampering(work.path, baseline)
    assert result.passed
    assert result.evidence == f"HEAD and branch unchanged since the session started ({work.base[:12]})"
    assert result.details == {"reason": None, "expected_head": work.base}


def test_a_branch_switch_is_named(work: Any) -> None:
    baseline = record_session_baseline(work.path)
    work.git.run("switch", "-q", "-c", "agent-branch")
    result = check_vcs_tampering(work.path, baseline)
    assert not result.passed
    assert result.evidence.startswith("switched from branch 'feat/demo/task-1' to branch 'agent-branch'")
    assert result.details["reason"] == result.evidence
    assert result.details["expected_head"] == work.base


def test_an_ownership_directory_not_created_yet_still_sets_the_scope(work: Any) -> None:
    work.write("README.md", "# changed\n")
    result = check_scope(_task(ownership="src/newpkg"), work.path, work.base)
    assert not result.passed
    assert result.details["allowed"] == ["src/newpkg/"]
    assert result.details["outside"] == ["README.md"]


def test_one_assertion_added_for_two_removed_is_still_a_removal(make_work: Any) -> None:
    work = make_work({"tests/test_a.py": "def test_a():\n    assert f(1) == 1\n    assert f(2) == 2\n"})
    work.write("tests/test_a.py", "def test_a():\n    assert f(1) in (1, 2)\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert not result.passed
    assert result.details["removed_asserts"] == {"tests/test_a.py": {"removed": 2, "added": 1}}
    assert result.evidence == "assertions removed: tests/test_a.py (-2 +1 assert lines)"
