"""The runner's configuration and the test counts where a one-token change would go unnoticed: which hooks and
assignments count, how deleted tests are counted, what the contract's text explains, the count evidence.

Written against mutmut's survivors (make mutation). Real git repositories in tmp_path.
"""

from __future__ import annotations

import pytest

from pm_agent.gates.collection import Explained, count_problems, explained_drop, hook_weakenings, ran, runner_weakenings
from pm_agent.gates.config_rules import RUNNER
from pm_agent.gates.justify import Weakening
from pm_agent.gates.ward import TestCounts
from pm_agent.plan.models import ExpectedFiles, Task

from .conftest import MakeWork

CONFTEST = "tests/conftest.py"


def test_hook_functions_and_assignments_of_every_form() -> None:
    source = (
        'collect_ignore: list[str] = ["a"]\n'
        'collect_ignore_glob += ["b"]\n'
        "async def pytest_runtest_call(item):\n"
        "    pass\n"
        "def other():\n"
        "    pass\n"
        "class pytest_collection:\n"
        "    pass\n"
        "settings.collect_ignore = []\n"
        "other = collect_ignore_glob = []\n"
    )
    assert hook_weakenings(CONFTEST, None, source) == [
        Weakening(
            RUNNER,
            CONFTEST,
            1,
            'collect_ignore: list[str] = ["a"]',
            "collect_ignore added (leaves files out of collection)",
            ("collect_ignore",),
        ),
        Weakening(
            RUNNER,
            CONFTEST,
            10,
            "other = collect_ignore_glob = []",
            "collect_ignore_glob added (leaves files out of collection)",
            ("collect_ignore_glob",),
        ),
        Weakening(
            RUNNER,
            CONFTEST,
            3,
            "async def pytest_runtest_call(item):",
            "pytest_runtest_call added (can skip or replace a test's call)",
            ("pytest_runtest_call",),
        ),
    ]


def test_a_hook_compared_with_an_unreadable_or_identical_old_version() -> None:
    hook = "def pytest_collection_modifyitems(items):\n    items.reverse()\n"
    [added] = hook_weakenings(CONFTEST, "x = (", hook)
    assert added.what == "pytest_collection_modifyitems added (can deselect or drop collected tests)"
    assert hook_weakenings(CONFTEST, hook, "\n\n" + hook) == [], "moved, not changed"
    assert hook_weakenings(CONFTEST, hook, "def f(:\n") == [], "a file that does not parse defines nothing"


def test_runner_weakenings_reads_configs_and_test_side_python(make_work: MakeWork) -> None:
    hook = "def pytest_ignore_collect(collection_path):\n    return True\n"
    work = make_work({"pytest.ini": "[pytest]\n", "src/conftest.py": "", "tox.ini": "[pytest]\n"})
    work.write("pytest.ini", "[pytest]\naddopts = -k fast\n")
    work.write("tests/conftest.py", hook)
    work.write("src/conftest.py", hook)  # conftest.py anywhere is test-side
    work.write("src/plugin.py", hook)  # not a test path: not read
    work.write("docs/reviews/tests/conftest.py", hook)  # pm-agent's own artefacts: not read
    work.write("tests/data/setup.cfg", "[tool:pytest\nbroken")
    work.delete("tox.ini")
    found, notes = runner_weakenings(work.path, work.base, work.git.changes(work.base))
    assert sorted(w.quote() for w in found) == [
        "pytest.ini:2: pytest addopts += -k fast: addopts = -k fast",
        "src/conftest.py:1: pytest_ignore_collect added (can leave test files out of collection): "
        "def pytest_ignore_collect(collection_path):",
        "tests/conftest.py:1: pytest_ignore_collect added (can leave test files out of collection): "
        "def pytest_ignore_collect(collection_path):",
    ]
    assert len(notes) == 1
    assert notes[0].startswith("tests/data/setup.cfg: cannot read as ini")


def test_a_deleted_runner_configuration_is_a_weakening(make_work: MakeWork) -> None:
    work = make_work({"pytest.ini": "[pytest]\naddopts = --strict-markers\n", "calc.py": ""})
    work.delete("pytest.ini")
    found, notes = runner_weakenings(work.path, work.base, work.git.changes(work.base))
    assert [w.quote() for w in found] == ["pytest.ini: configuration file deleted (test runner): (file deleted)"]
    assert notes == []


DELETED = """\
import pytest


@pytest.mark.parametrize("x", [1, 2, 3])
@pytest.mark.parametrize("y", (1, 2))
def test_grid(x, y):
    assert x * y


@pytest.mark.parametrize("x", VALUES)
def test_named(x):
    assert x


@pytest.mark.parametrize("x", [])
def test_empty(x):
    assert x


@parametrize("x", [1, 2])
def test_bare(x):
    assert x


@pytest.mark.parametrize("x")
def test_no_values(x):
    assert x


class TestThing:
    async def test_method(self):
        assert 1 == 1


def helper():
    return 1
"""


def test_deleted_test_files_count_their_tests(make_work: MakeWork) -> None:
    work = make_work({"tests/test_grid.py": DELETED, "tests/test_broken.py": "def test_x(:\n", "src/a.py": ""})
    task = Task(
        id="1",
        title="t",
        expected_files=ExpectedFiles(
            delete=["./tests/test_grid.py", "tests/test_broken.py", "src/a.py", "tests/test_gone.py"]
        ),
    )
    explained = explained_drop(task, work.path, work.base)
    # 3 x 2 grid, then one each: named values, empty list, a bare parametrize, no values, the method
    assert explained.tests == 6 + 5
    assert explained.reasons == [
        "the contract deletes tests/test_grid.py (11 test(s))",
        "the contract deletes tests/test_broken.py (0 test(s))",
        "the contract deletes tests/test_gone.py (0 test(s))",
    ]
    assert not explained.unlimited


@pytest.mark.parametrize(
    ("field", "text", "said"),
    [
        ("title", "Remove the legacy API and its tests", "Remove the legacy API and its tests"),
        ("description", "Retire tests", "Retire tests"),
        ("steps", "Deletes the flaky test", "Deletes the flaky test"),
        ("criteria", "dropped: the old smoke tests", "dropped: the old smoke tests"),
        ("body", "We REMOVE obsolete test", "REMOVE obsolete test"),
        ("body", "Do not delete tests. Later, remove the old test", "remove the old test"),
        ("body", "Never drop tests; all of them stay", None),
        ("body", "Without removing tests", None),
        ("body", "We don't remove tests", None),
        ("body", "remove one two three four five six tests", None),  # too far apart
        ("body", "removal of tests", "removal of tests"),
        ("body", "Deleting the old tests", "Deleting the old tests"),
        ("steps", "Removing tests we no longer need", "Removing tests"),
        ("body", "remove the testing helpers", None),
    ],
)
def test_what_the_contract_says_about_removing_tests(field: str, text: str, said: str | None) -> None:
    fields: dict[str, object] = {"title": "t"}
    if field == "steps":
        fields["steps"] = ["first", text]
    elif field == "criteria":
        fields["acceptance_criteria"] = [text]
    else:
        fields[field] = text
    task = Task.model_validate({"id": "1", **fields})
    explained = explained_drop(task, ".", "HEAD")
    assert explained.unlimited is (said is not None)
    assert explained.reasons == ([f"the contract says {said!r}"] if said else [])


def test_ran_counts_every_outcome_that_ran() -> None:
    counts = TestCounts(passed=1, failed=2, errors=4, xfailed=8, xpassed=16, skipped=32, deselected=64, warnings=128)
    assert ran(counts) == 31


def test_count_evidence_and_problems() -> None:
    now = TestCounts(passed=5, xfailed=1, skipped=2, deselected=3)
    references = [
        ("baseline run", TestCounts(passed=9, skipped=1, deselected=0)),
        ("previous gate run", None),
        ("earlier run", TestCounts(passed=6)),
        ("smaller run", TestCounts(passed=4)),
    ]
    problems, lines = count_problems(
        now, references, Explained(tests=1, reasons=["the contract deletes a (1 test(s))"])
    )
    assert problems == [
        "3 fewer test(s) ran than in the baseline run: 9 -> 6 (the contract explains 1: "
        "the contract deletes a (1 test(s)))"
    ]
    assert lines == [
        "test counts: 6 ran now (2 skipped, 3 deselected)",
        "  baseline run: 9 ran (1 skipped, 0 deselected)",
        "  previous gate run: no counts to compare with",
        "  earlier run: 6 ran (0 skipped, 0 deselected)",
        "  smaller run: 4 ran (0 skipped, 0 deselected)",
    ]


def test_a_drop_up_to_the_explained_tests_passes() -> None:
    explained = Explained(tests=2, reasons=["the contract deletes t (2 test(s))"])
    problems, lines = count_problems(TestCounts(passed=3), [("baseline run", TestCounts(passed=5))], explained)
    assert problems == []
    assert lines[-1] == "    2 fewer, explained: the contract deletes t (2 test(s))"
    problems, _ = count_problems(TestCounts(passed=2), [("baseline run", TestCounts(passed=5))], explained)
    assert problems == [
        "3 fewer test(s) ran than in the baseline run: 5 -> 2 "
        "(the contract explains 2: the contract deletes t (2 test(s)))"
    ]
    problems, _ = count_problems(TestCounts(passed=2), [("baseline run", TestCounts(passed=5))], Explained())
    assert problems == ["3 fewer test(s) ran than in the baseline run: 5 -> 2"]
    unlimited = Explained(unlimited=True, reasons=["a", "b"])
    problems, lines = count_problems(TestCounts(passed=0), [("baseline run", TestCounts(passed=5))], unlimited)
    assert problems == []
    assert lines[-1] == "    5 fewer, explained: a; b"


def test_a_run_with_errors_is_not_compared() -> None:
    problems, lines = count_problems(
        TestCounts(passed=1, errors=2), [("baseline run", TestCounts(passed=9))], Explained()
    )
    assert problems == []
    assert lines == ["test counts: not compared (0 failed, 2 errors: gate 3 reports it)"]
