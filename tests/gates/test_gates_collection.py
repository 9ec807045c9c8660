"""tests-weakened: the test runner's configuration and conftest hooks, and the number of tests that ran.

Real git repositories in tmp_path; the count tests run real pytest through the gate runner, with a real
baseline run on the base commit (preflight's `run_baseline`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates import AgentReport, GateId, TestCounts, gate_tests_weakened, make_context, run_gates
from pm_agent.gates.collection import Explained, count_problems, explained_drop
from pm_agent.plan.models import EnvironmentContract, ExpectedFiles, Task
from pm_agent.preflight.baseline import run_baseline

from .conftest import PYTEST, MakeWork, Work

TASK = Task(id="1", title="Calc")
CALC = "def add(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n"
)
PYPROJECT = '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
DESELECT_HOOK = (
    "def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if 'zero' not in i.name]\n"
)


@pytest.fixture
def calc(make_work: MakeWork) -> Work:
    return make_work({"calc.py": CALC, "tests/test_calc.py": TESTS, "pyproject.toml": PYPROJECT})


def _gate(work: Work, report: AgentReport | None = None, task: Task = TASK) -> object:
    return gate_tests_weakened(task, work.path, work.base, report or AgentReport())


def _note(*risks: str) -> AgentReport:
    return AgentReport.from_payload({"reviewNote": {"summary": "s", "risks": list(risks), "rollback": "r"}})


# ---------------------------------------------------------------- runner configuration


@pytest.mark.parametrize(
    ("addition", "what"),
    [
        (
            'addopts = "-q --deselect tests/test_calc.py::test_zero"',
            "pytest addopts += --deselect tests/test_calc.py::test_zero",
        ),
        ('addopts = ["-k", "not zero"]', "pytest addopts += -k not zero"),
        ("addopts = \"-m 'not slow'\"", "pytest addopts += -m not slow"),
        ('addopts = "--ignore=tests/test_calc.py"', "pytest addopts += --ignore tests/test_calc.py"),
        ('testpaths = ["docs"]', "pytest testpaths narrowed to docs"),
        ('norecursedirs = ["tests"]', "pytest norecursedirs += tests"),
        ('python_files = ["check_*.py"]', 'pytest python_files = ["check_*.py"]'),
        ('filterwarnings = ["ignore::DeprecationWarning"]', "pytest filterwarnings += ignore::DeprecationWarning"),
    ],
)
def test_pytest_settings_that_leave_tests_out(calc: Work, addition: str, what: str) -> None:
    calc.write("pyproject.toml", PYPROJECT + addition + "\n")
    result = gate_tests_weakened(TASK, calc.path, calc.base, AgentReport())
    assert result.gate == GateId.TESTS_WEAKENED
    assert not result.passed, result.evidence
    assert what in result.evidence


@pytest.mark.parametrize(
    ("path", "before", "after", "what"),
    [
        ("pytest.ini", "[pytest]\n", "[pytest]\naddopts = -k 'not zero'\n", "pytest addopts += -k not zero"),
        ("setup.cfg", "[tool:pytest]\n", "[tool:pytest]\ntestpaths = docs\n", "pytest testpaths narrowed to docs"),
        (
            "tox.ini",
            "[pytest]\nxfail_strict = true\n",
            "[pytest]\nxfail_strict = false\n",
            "pytest xfail_strict = false",
        ),
    ],
)
def test_ini_style_runner_configuration(make_work: MakeWork, path: str, before: str, after: str, what: str) -> None:
    work = make_work({path: before, "calc.py": CALC})
    work.write(path, after)
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert not result.passed
    assert what in result.evidence


def test_conftest_hook_that_deselects_fails_with_its_line(calc: Work) -> None:
    calc.write("tests/conftest.py", "import pytest\n\n\n" + DESELECT_HOOK)
    result = gate_tests_weakened(TASK, calc.path, calc.base, AgentReport())
    assert not result.passed
    assert (
        "UNJUSTIFIED tests/conftest.py:4: pytest_collection_modifyitems added (can deselect or drop collected tests)"
        in result.evidence
    )


@pytest.mark.parametrize(
    "source",
    [
        "def pytest_ignore_collect(collection_path, config):\n    return 'test_calc' in str(collection_path)\n",
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n",
        "collect_ignore = ['test_calc.py']\n",
    ],
)
def test_other_runner_hooks(calc: Work, source: str) -> None:
    calc.write("tests/conftest.py", source)
    result = gate_tests_weakened(TASK, calc.path, calc.base, AgentReport())
    assert not result.passed
    assert "UNJUSTIFIED tests/conftest.py:" in result.evidence


def test_a_changed_hook_counts_an_unchanged_one_does_not(make_work: MakeWork) -> None:
    keep = "def pytest_collection_modifyitems(config, items):\n    items.sort(key=lambda i: i.name)\n"
    work = make_work({"calc.py": CALC, "tests/conftest.py": keep})
    work.write("tests/conftest.py", keep + "\n\ndef helper():\n    return 1\n")
    assert gate_tests_weakened(TASK, work.path, work.base, AgentReport()).passed
    work.write("tests/conftest.py", DESELECT_HOOK)
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert not result.passed
    assert "pytest_collection_modifyitems changed" in result.evidence


def test_honest_conftest_fixture_passes(calc: Work) -> None:
    calc.write("tests/conftest.py", "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n")
    result = gate_tests_weakened(TASK, calc.path, calc.base, AgentReport())
    assert result.passed, result.evidence


def test_justified_runner_change_passes(calc: Work) -> None:
    calc.write("pyproject.toml", PYPROJECT + "addopts = \"-m 'not network'\"\n")
    report = _note("pyproject.toml -m not network: the network tests need credentials CI does not have")
    result = gate_tests_weakened(TASK, calc.path, calc.base, report)
    assert result.passed, result.evidence
    assert "justified   pyproject.toml:7: pytest addopts += -m not network" in result.evidence


# ---------------------------------------------------------------- counts (real pytest runs)


def _run_counts(work: Work, tmp_path: Path, task: Task = TASK, previous: TestCounts | None = None) -> object:
    environment = EnvironmentContract(test_command=PYTEST)
    baseline = run_baseline(work.git, tmp_path / "state", work.base, {"test_command": PYTEST}, timeout_s=120)
    ctx = make_context(
        task,
        work.path,
        work.base,
        None,
        environment=environment,
        timeout_s=120,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"},
        env_baseline=baseline,
        previous_counts=previous,
    )
    tests_run, weakened = run_gates(ctx, [GateId.TESTS_RUN, GateId.TESTS_WEAKENED])
    assert tests_run.passed, tests_run.evidence
    return weakened


def test_fewer_tests_than_the_baseline_fails(calc: Work, tmp_path: Path) -> None:
    calc.write("tests/conftest.py", DESELECT_HOOK)
    weakened = _run_counts(calc, tmp_path)
    assert not weakened.passed
    assert "1 fewer test(s) ran than in the baseline run: 2 -> 1" in weakened.evidence
    assert weakened.details["test_counts"]["passed"] == 1


def test_fewer_tests_than_the_previous_gate_run_fails(calc: Work, tmp_path: Path) -> None:
    calc.write("tests/test_more.py", "from calc import add\n\n\ndef test_one():\n    assert add(1, 0) == 1\n")
    weakened = _run_counts(calc, tmp_path, previous=TestCounts(passed=4))
    assert not weakened.passed
    assert "1 fewer test(s) ran than in the previous gate run: 4 -> 3" in weakened.evidence
    assert "baseline run: 2 ran" in weakened.evidence


def test_a_drop_the_contract_explains_passes(calc: Work, tmp_path: Path) -> None:
    calc.delete("tests/test_calc.py")
    calc.write("tests/test_new.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    task = Task(id="1", title="Calc", expected_files=ExpectedFiles(delete=["tests/test_calc.py"]))
    weakened = _run_counts(calc, tmp_path, task)
    assert weakened.passed, weakened.evidence
    assert "1 fewer, explained: the contract deletes tests/test_calc.py (2 test(s))" in weakened.evidence


def test_more_tests_than_before_passes(calc: Work, tmp_path: Path) -> None:
    calc.write("tests/test_more.py", "from calc import add\n\n\ndef test_one():\n    assert add(1, 0) == 1\n")
    weakened = _run_counts(calc, tmp_path, previous=TestCounts(passed=3))
    assert weakened.passed, weakened.evidence
    assert "test counts: 3 ran now" in weakened.evidence


def test_explained_drop_reads_the_contract(make_work: MakeWork) -> None:
    old = "import pytest\n\n@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_x(x):\n    assert x\n"
    work = make_work({"tests/test_old.py": old})
    deleting = Task(id="1", title="t", expected_files=ExpectedFiles(delete=["tests/test_old.py"]))
    assert explained_drop(deleting, work.path, work.base).tests == 3
    saying = Task(id="1", title="Remove the legacy API and its tests")
    assert explained_drop(saying, work.path, work.base).unlimited
    denying = Task(id="1", title="t", description="Do not remove any tests.")
    assert not explained_drop(denying, work.path, work.base).unlimited


def test_counts_without_a_pytest_summary_are_not_compared() -> None:
    problems, lines = count_problems(None, [("baseline run", TestCounts(passed=3))], Explained())
    assert problems == []
    assert lines == ["test counts: not compared (the test command printed no pytest summary)"]


def test_counts_of_a_failing_run_are_not_compared() -> None:
    failing = TestCounts(passed=1, failed=1)
    problems, lines = count_problems(failing, [("baseline run", TestCounts(passed=9))], Explained())
    assert problems == []
    assert lines == ["test counts: not compared (1 failed, 0 errors: gate 3 reports it)"]
