from __future__ import annotations

from pm_agent.engine.slicing import parse_slices, slice_task
from pm_agent.plan.models import Dependency, ExpectedFiles, Task


def test_parse_slices_needs_a_list_of_two_or_more_valid_slices() -> None:
    assert parse_slices("- title: a\n  files: [x.py]\n- title: b\n  files: [y.py]\n") is not None
    assert parse_slices("- title: a\n  files: [x.py]\n") is None  # one slice is no slicing
    assert parse_slices("just prose") is None
    assert parse_slices("- title: a\n- title: b\n") is None  # slices need files
    assert parse_slices("- [unclosed") is None


def test_slices_chain_and_the_task_keeps_the_last() -> None:
    task = Task(
        id="4",
        title="Big",
        expected_files=ExpectedFiles(create=["a.py", "b.py"], modify=["c.py"], test=["tests/test_a.py"]),
        tests_to_add=["tests/test_a.py"],
        depends_on=[Dependency(task_id="2")],
    )
    pieces = parse_slices(
        "- title: A\n  files: [a.py, tests/test_a.py]\n  acceptance_criteria: [a works]\n"
        "- title: B\n  files: [b.py]\n"
        "- title: C\n  files: [c.py]\n  acceptance_criteria: [c works]\n"
    )
    assert pieces is not None
    subs, narrowed = slice_task(task, pieces)
    assert [s.id for s in subs] == ["4.1", "4.2"]
    assert subs[0].dependency_ids() == ["2"]
    assert subs[1].dependency_ids() == ["4.1"]
    assert subs[0].expected_files.create == ["a.py"]
    assert subs[0].expected_files.test == ["tests/test_a.py"]
    assert subs[0].tests_to_add == ["tests/test_a.py"]
    assert subs[1].acceptance_criteria == ["B is done"]
    assert narrowed.id == "4"
    assert narrowed.expected_files.modify == ["c.py"]
    assert narrowed.expected_files.create == []
    assert narrowed.acceptance_criteria == ["c works"]
    assert narrowed.dependency_ids() == ["2", "4.2"]
