"""Gates 2-4 word for word: gate 3's claim line, its details, whole commands and paths, and the ratchet.

Written against mutmut's survivors (make mutation) in gates/commands.py. The commands are tiny Python
one-liners or scripts in the task's worktree: real subprocesses, no test runner start-up.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pm_agent.gates import GateId, gate_lint_typecheck, gate_tests_added, gate_tests_run
from pm_agent.gates.environment import KEEP_OUTPUT_BYTES, Baseline, baseline_entry
from pm_agent.gates.ward import run_command
from pm_agent.plan.models import EnvironmentContract, Task

PY = sys.executable
PASS = f'{PY} -c "pass"'
ODD_FAILURE = f"{PY} -c \"print('something odd'); raise SystemExit(1)\""
# prints the lines of findings.txt in the worktree, the way ruff prints its concise findings, and fails on any
LINT = f"{PY} lint.py"
LINT_SCRIPT = "import sys\ntext = open('findings.txt').read()\nprint(text, end='')\nsys.exit(1 if text else 0)\n"


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


def _tests(test_command: str | None = PASS, **fields: Any) -> Task:
    return _task(environment=EnvironmentContract(test_command=test_command), **fields)


def _finding(name: str) -> str:
    return f"pkg/{name}.py:1:8: F401 [*] `os` imported but unused\n"


# ---------------------------------------------------------------- gate 2: tests added


def test_tests_that_cannot_be_run_say_so(work: Any) -> None:
    work.write("tests/test_new.py", "def test_n():\n    assert 1\n")
    result = gate_tests_added(_tests(None, tests_to_add=["tests/test_new.py"]), work.path, work.base)
    assert not result.passed
    assert result.evidence == (
        "tests_to_add: tests/test_new.py\n  CANNOT RUN: no test_command in the environment contract"
    )
    assert result.details == {"files": ["tests/test_new.py"], "missing": [], "not_in_change": [], "commands": []}


def test_tests_added_runs_with_the_env(work: Any) -> None:
    work.write("tests/test_new.py", "def test_n():\n    assert 1\n")
    check = f"{PY} -c \"import os, sys; sys.exit(os.environ.get('FLAG') != '1')\""
    task = _tests(check, tests_to_add=["tests/test_new.py"])
    assert not gate_tests_added(task, work.path, work.base).passed
    result = gate_tests_added(task, work.path, work.base, env={"FLAG": "1"})
    assert result.passed, result.evidence
    assert result.details["commands"][0]["cmd"] == check  # no known runner: its whole suite, not the path added


def test_a_pytest_command_drops_a_directory_of_the_worktree(work: Any) -> None:
    runner = work.write("bin/pytest", f"#!{PY}\nimport sys\nprint(sys.argv[1:])\n")
    runner.chmod(0o755)
    work.write("tests/test_new.py", "def test_n():\n    assert 1\n")
    task = _tests("bin/pytest tests -q", tests_to_add=["tests/test_new.py"])
    result = gate_tests_added(task, work.path, work.base)
    assert result.passed, result.evidence
    assert [c["cmd"] for c in result.details["commands"]] == ["bin/pytest -q tests/test_new.py"]
    run = gate_tests_run(_tests("bin/pytest tests -q", tests_to_run=["tests/test_calc.py"]), work.path, None)
    assert [c["cmd"] for c in run.details["commands"]] == ["bin/pytest tests -q", "bin/pytest -q tests/test_calc.py"]
    assert run.details["cannot_run"] == []


# ---------------------------------------------------------------- gate 3: tests run


def test_nothing_to_run_is_not_configured(work: Any) -> None:
    result = gate_tests_run(_tests(None), work.path, {"testsClaimedPassing": True})
    assert result.model_dump() == {
        "gate": GateId.TESTS_RUN,
        "passed": True,
        "evidence": "not configured: no test_command and no tests_to_run",
        "details": {"configured": False, "agent_claimed_pass": True},
    }


@pytest.mark.parametrize(
    ("claim", "command", "first"),
    [
        (True, PASS, "agent claimed: tests pass; pm-agent ran 1 command(s): all passed"),
        (False, ODD_FAILURE, "agent claimed: tests fail; pm-agent ran 1 command(s): FAILED"),
        (None, PASS, "agent claimed: no claim; pm-agent ran 1 command(s): all passed"),
        (True, ODD_FAILURE, "agent claimed pass but tests failed"),
    ],
)
def test_the_claim_line(work: Any, claim: bool | None, command: str, first: str) -> None:
    result = gate_tests_run(_tests(command), work.path, {"testsClaimedPassing": claim})
    assert result.evidence.splitlines()[0] == first
    assert result.details["agent_claimed_pass"] is claim
    assert result.details["claim_mismatch"] is (claim is True and command == ODD_FAILURE)


def test_gate_3_details_and_the_agent_s_evidence(work: Any) -> None:
    evidence = [f"line {i}" for i in range(1, 8)]
    result = gate_tests_run(_tests(PASS, tests_to_run=[PASS]), work.path, {"testEvidence": evidence})
    assert result.passed
    lines = result.evidence.splitlines()
    assert lines[0] == "agent claimed: no claim; pm-agent ran 2 command(s): all passed"
    assert lines[-1] == "agent's evidence (not trusted): line 1 | line 2 | line 3 | line 4 | line 5"
    assert result.details["configured"] is True
    assert result.details["cannot_run"] == []
    assert [c["cmd"] for c in result.details["commands"]] == [PASS, PASS]
    assert result.details["rules"] == ["clean", "clean"]
    assert (result.details["new_findings"], result.details["preexisting_findings"]) == (0, 0)


def test_test_paths_without_a_test_command_cannot_run(work: Any) -> None:
    task = _tests(None, tests_to_run=["tests/test_calc.py", "tests/test_more.py"])
    result = gate_tests_run(task, work.path, None)
    assert not result.passed
    assert result.evidence.splitlines()[:2] == [
        "agent claimed: no claim; pm-agent ran 0 command(s): FAILED",
        "CANNOT RUN tests_to_run tests/test_calc.py, tests/test_more.py: no test_command in the environment contract",
    ]
    assert result.details["configured"] is True
    assert result.details["cannot_run"] == ["tests/test_calc.py", "tests/test_more.py"]
    assert result.details["commands"] == []


def test_a_test_command_alone_runs_once(work: Any) -> None:
    result = gate_tests_run(_tests(PASS), work.path, None)
    assert [c["cmd"] for c in result.details["commands"]] == [PASS]


def test_gate_3_ratchet_against_a_baseline_that_failed_the_same_way(work: Any) -> None:
    task = _tests(ODD_FAILURE, tests_to_run=[ODD_FAILURE.replace("odd", "odder")])
    before = run_command(ODD_FAILURE, work.path, 30.0, keep_output_bytes=KEEP_OUTPUT_BYTES)
    entry = baseline_entry("test_command", "tests", before, 30.0)
    ratchet = gate_tests_run(task, work.path, None, baseline=Baseline(sha=work.base, commands=(entry,)))
    # the environment's own test command is held to the baseline; the contract's whole command strictly
    assert ratchet.details["rules"] == ["exit-status", "strict"]
    assert f"`{ODD_FAILURE}`: exit 1 (rule: exit-status)" in ratchet.evidence
    assert f"`{ODD_FAILURE}` FAILED" not in ratchet.evidence
    alone = gate_tests_run(_tests(ODD_FAILURE), work.path, None, baseline=Baseline(sha=work.base, commands=(entry,)))
    assert alone.passed, alone.evidence
    strict = Baseline(sha=work.base, mode="strict", commands=(entry,))
    refused = gate_tests_run(_tests(ODD_FAILURE), work.path, None, baseline=strict)
    assert not refused.passed
    assert refused.details["rules"] == ["strict"]
    assert f"`{ODD_FAILURE}`: exit 1 (environment.baseline is strict)" in refused.evidence


# ---------------------------------------------------------------- gate 4: findings counted against the baseline


def test_gate_4_counts_new_and_pre_existing_findings(work: Any) -> None:
    work.write("lint.py", LINT_SCRIPT)
    work.write("findings.txt", _finding("old1") + _finding("old2") + "Found 2 errors.\n")
    before = run_command(LINT, work.path, 30.0, keep_output_bytes=KEEP_OUTPUT_BYTES)
    baseline = Baseline(sha=work.base, commands=(baseline_entry("lint_command", "lint", before, 30.0),))
    work.write("findings.txt", _finding("old1") + _finding("old2") + _finding("new") + "Found 3 errors.\n")
    result = gate_lint_typecheck(
        _task(environment=EnvironmentContract(lint_command=LINT)), work.path, baseline=baseline
    )
    assert not result.passed
    assert result.details["rules"] == ["findings"]
    assert (result.details["new_findings"], result.details["preexisting_findings"]) == (1, 2)
    assert result.details["environment_failure"] is None


def test_evidence_against_a_baseline_names_the_rule_and_shows_no_tail_for_an_accepted_failure(work: Any) -> None:
    before = run_command(ODD_FAILURE, work.path, 30.0, keep_output_bytes=KEEP_OUTPUT_BYTES)
    baseline = Baseline(sha=work.base, commands=(baseline_entry("typecheck_command", "typecheck", before, 30.0),))
    contract = EnvironmentContract(lint_command=PASS, typecheck_command=ODD_FAILURE)
    result = gate_lint_typecheck(_task(environment=contract), work.path, baseline=baseline)
    assert result.passed, result.evidence
    lines = result.evidence.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"`{PASS}` PASSED: exit 0 in ")
    assert lines[1] == f"`{PASS}`: exit 0 (rule: clean)"
    assert lines[2].startswith(f"`{ODD_FAILURE}`: exit 1 (rule: exit-status) rule exit-status")
    worse = EnvironmentContract(lint_command=ODD_FAILURE.replace("odd", "odder"), typecheck_command=ODD_FAILURE)
    failed = gate_lint_typecheck(_task(environment=worse), work.path, baseline=baseline)
    assert not failed.passed
    odder = failed.evidence.splitlines()
    assert len(odder) == 4
    assert odder[0] == f"`{worse.lint_command}`: exit 1 (no baseline run to compare with)"
    assert odder[1].startswith(f"`{worse.lint_command}` FAILED: exit 1 in ")
    assert odder[2:] == ["    something odder", lines[2]]
