"""Gates 2 and 4 with their results pinned and each input shown to matter: mutmut's survivors (make mutation).

The commands are tiny Python one-liners: real subprocesses, no test runner start-up.
"""

from __future__ import annotations

import sys
from typing import Any

from pm_agent.gates import GateId, gate_lint_typecheck, gate_tests_added
from pm_agent.gates.environment import KEEP_OUTPUT_BYTES, Baseline, baseline_entry
from pm_agent.gates.ward import run_command
from pm_agent.plan.models import EnvironmentContract, Task
from pm_agent.vcs import ChangeSet, FileChange

PY = sys.executable
ECHO_FILES = f'{PY} -c "import sys; print(sys.argv[1:])" {{files}}'
FAILS = f"{PY} -c \"print('lint: something is off'); raise SystemExit(1)\""


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


def _env_check(variable: str) -> str:
    return f"{PY} -c \"import os, sys; sys.exit(os.environ.get('{variable}') != '1')\""


# ---------------------------------------------------------------- gate 2: tests added


def test_no_tests_to_add_passes_and_says_so(work: Any) -> None:
    result = gate_tests_added(_task(), work.path, work.base)
    assert result.model_dump() == {
        "gate": GateId.TESTS_ADDED,
        "passed": True,
        "evidence": "the contract lists no tests_to_add",
        "details": {},
    }


def test_a_test_node_id_is_found_by_its_file(work: Any) -> None:
    work.write("tests/test_calc.py", "class TestC:\n    def test_x(self):\n        assert 1\n")
    work.write("tests/test_more.py", "def test_y():\n    assert 1\n")
    task = _task(
        tests_to_add=["tests/test_calc.py::TestC::test_x", "tests/test_more.py"],
        environment=EnvironmentContract(test_command=ECHO_FILES),
    )
    result = gate_tests_added(task, work.path, work.base)
    assert result.passed, result.evidence
    assert result.details["missing"] == []
    assert result.details["not_in_change"] == []
    assert result.evidence.splitlines()[0] == "tests_to_add: tests/test_calc.py::TestC::test_x, tests/test_more.py"


def test_tests_added_reads_the_given_change_set(work: Any) -> None:
    task = _task(tests_to_add=["tests/test_calc.py"], environment=EnvironmentContract(test_command=ECHO_FILES))
    assert gate_tests_added(task, work.path, work.base).details["not_in_change"] == ["tests/test_calc.py"]
    given = ChangeSet(base=work.base, target="given", files=[FileChange(path="tests/test_calc.py", status="M")])
    result = gate_tests_added(task, work.path, work.base, changes=given)
    assert result.passed, result.evidence


# ---------------------------------------------------------------- gate 4: lint and typecheck


def test_nothing_configured_passes_with_that_said(work: Any) -> None:
    result = gate_lint_typecheck(_task(), work.path)
    assert result.model_dump() == {
        "gate": GateId.LINT_TYPECHECK,
        "passed": True,
        "evidence": "not configured: no lint or typecheck command",
        "details": {"configured": False},
    }


def test_one_command_configured_is_run_and_described(work: Any) -> None:
    lint = f'{PY} -c "pass"'
    result = gate_lint_typecheck(_task(environment=EnvironmentContract(lint_command=lint)), work.path)
    assert result.passed
    assert result.evidence.splitlines()[0] == "typecheck: not configured"
    assert result.evidence.splitlines()[1].startswith(f"`{lint}` PASSED: exit 0")
    assert result.details["configured"] is True
    assert result.details["kinds"] == ["lint"]
    assert [c["cmd"] for c in result.details["commands"]] == [lint]
    assert result.details["rules"] == ["clean"]


def test_lint_receives_env_and_timeout(work: Any) -> None:
    task = _task(environment=EnvironmentContract(lint_command=_env_check("LINT_FLAG")))
    assert not gate_lint_typecheck(task, work.path).passed
    assert gate_lint_typecheck(task, work.path, env={"LINT_FLAG": "1"}).passed
    slow = _task(environment=EnvironmentContract(typecheck_command=f'{PY} -c "import time; time.sleep(3)"'))
    late = gate_lint_typecheck(slow, work.path, timeout_s=0.5)
    assert not late.passed
    assert late.details["environment_failure"] == "timed out after 0.5s"


def test_a_baseline_that_failed_the_same_way_lets_lint_pass(work: Any) -> None:
    task = _task(environment=EnvironmentContract(lint_command=FAILS))
    strict = gate_lint_typecheck(task, work.path)
    assert not strict.passed
    assert strict.details["rules"] == ["strict"]
    before = run_command(FAILS, work.path, 30.0, keep_output_bytes=KEEP_OUTPUT_BYTES)
    baseline = Baseline(sha=work.base, commands=(baseline_entry("lint_command", "lint", before, 30.0),))
    result = gate_lint_typecheck(task, work.path, baseline=baseline)
    assert result.passed, result.evidence
    assert result.details["rules"] == ["exit-status"]
    assert result.evidence.startswith(
        f"typecheck: not configured\n`{FAILS}`: exit 1 (rule: exit-status) rule exit-status (current output not parsed"
    )
