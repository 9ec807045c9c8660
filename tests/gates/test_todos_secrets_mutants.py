"""No-orphan-TODOs and secrets gates with their whole evidence pinned, and the scans shown to go on past a
skipped file. Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

from typing import Any

from pm_agent.gates import check_secrets, gate_no_orphan_todos
from pm_agent.gates.todos import follow_up
from pm_agent.vcs import ChangeSet

FAKE_AWS_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id


def test_a_task_id_with_leading_zeros_or_trailing_zeros() -> None:
    assert follow_up("# TODO(task-007): later", {"7"}) == "task-007"
    assert follow_up("# TODO(task-70): later", {"7"}) is None  # "70" is not task 7
    assert follow_up("# TODO(task-12): later", {"12", "3"}) == "task-12"
    assert follow_up("# TODO(task-12): later", {"3"}) is None
    assert follow_up("# TODO(task-12): later", None) == "task-12"


def test_orphans_are_listed_with_place_text_and_the_hint(make_work: Any) -> None:
    work = make_work({"a.py": "", "__pycache__/x.py": ""})
    work.write("__pycache__/x.py", "# TODO ignored: generated\n")  # sorts first; the scan goes on past it
    long_text = "# FIXME " + "x" * 300
    work.write("a.py", f"x = 1\n# TODO(task-3): ok\n{long_text}\n")
    work.write("b.py", "# HACK quick\n")
    result = gate_no_orphan_todos(work.path, work.base)
    assert not result.passed
    assert result.details["orphans"] == [
        {"path": "a.py", "line": 3, "marker": "FIXME", "text": long_text[:200]},
        {"path": "b.py", "line": 1, "marker": "HACK", "text": "# HACK quick"},
    ]
    assert result.details["linked"] == ["a.py:2 -> task-3"]
    assert result.evidence == "\n".join(
        [
            "2 added TODO/FIXME/HACK/XXX without a follow-up task, issue or URL:",
            f"  a.py:3: {long_text[:200]}",
            "  b.py:1: # HACK quick",
            "  reference one of: task-<id>, #<issue> or a URL",
        ]
    )
    known = gate_no_orphan_todos(work.path, work.base, known_task_ids={"1"})
    assert known.evidence.endswith("\n  reference one of: task ids in the plan")
    assert len(known.details["orphans"]) == 3  # task-3 is not in this plan


def test_linked_todos_are_named_in_a_passing_evidence(make_work: Any) -> None:
    work = make_work({"a.py": ""})
    work.write("a.py", "# TODO(task-3): later\n# XXX see #88\n")
    result = gate_no_orphan_todos(work.path, work.base)
    assert result.passed
    assert (
        result.evidence == "no added TODO/FIXME/HACK/XXX without a follow-up; linked: a.py:1 -> task-3, a.py:2 -> #88"
    )
    work.write("a.py", "x = 1\n")
    assert gate_no_orphan_todos(work.path, work.base).evidence == "no added TODO/FIXME/HACK/XXX without a follow-up"


def test_secrets_evidence_lists_each_place_once_with_its_kinds(make_work: Any) -> None:
    work = make_work({"a.py": ""})
    work.write("__pycache__/k.py", f'KEY = "{FAKE_AWS_KEY}"\n')  # ignored, and sorts first
    work.write("a.py", f'KEY = "{FAKE_AWS_KEY}"\n')
    work.write("b.txt", f"aws_access_key_id = {FAKE_AWS_KEY}\n")
    result = check_secrets(work.path, work.base)
    assert not result.passed
    assert result.details["files_scanned"] == 2
    lines = result.evidence.splitlines()
    assert lines[0] == "2 added line(s) look like they hold a secret:"
    assert lines[1] == "  a.py:1: AWS Access Key"
    assert lines[2].startswith("  b.txt:1: ")
    assert lines[-1] == "  move secrets to the environment or a secret store; never commit them"
    assert len(lines) == 4
    assert FAKE_AWS_KEY not in result.evidence


def test_secrets_reads_the_given_change_set_and_skips_files_with_nothing_added(work: Any) -> None:
    work.write("config.py", f'KEY = "{FAKE_AWS_KEY}"\n')
    nothing = ChangeSet(base=work.base, target="given", added={"config.py": []})
    result = check_secrets(work.path, work.base, changes=nothing)
    assert result.passed
    assert result.evidence == "no secrets found on added lines (0 file(s) scanned)"
    gone = ChangeSet(base=work.base, target="given", added={"gone.py": [(1, f'K = "{FAKE_AWS_KEY}"')]})
    assert check_secrets(work.path, work.base, changes=gone).details["files_scanned"] == 0
