"""checks-weakened and tests-weakened where a one-token change would go unnoticed: which files are read, the
evidence lines in their order, the verdict and the details.

Written against mutmut's survivors (make mutation). Real git repositories in tmp_path; the lint command is a
small shell command printing ruff-shaped lines kept in the configuration's comments, so no linter needs to run.
"""

from __future__ import annotations

from pm_agent.gates import AgentReport, GateId
from pm_agent.gates.justify import JUSTIFY_HINT
from pm_agent.gates.ward import TestCounts
from pm_agent.gates.weakened import (
    gate_checks_weakened,
    gate_tests_weakened,
    lint_config_weakenings,
    lint_settings_differ,
    vacuous_tests,
)
from pm_agent.plan.models import Task
from pm_agent.vcs import ChangeSet

from .conftest import MakeWork, Work

TASK = Task(id="1", title="Calc")
F401 = "calc.py:1:8: F401 [*] `os` imported but unused"
E501 = "calc.py:9:101: E501 [*] Line too long (120 > 100)"
# prints the findings written in ruff.toml's comments: what "ruff" reports under that configuration
LINT = 'sed -n "s/^# //p" ruff.toml; exit 1'
BASE_RUFF = f"line-length = 100\n# {F401}\n# {E501}\n"
TEST = "from calc import f\n\n\ndef test_f():\n    assert f() == 1\n"


def _note(*risks: str) -> AgentReport:
    return AgentReport.from_payload({"reviewNote": {"summary": "s", "risks": list(risks), "rollback": "r"}})


def test_lint_config_weakenings_reads_only_lint_configuration(make_work: MakeWork) -> None:
    work = make_work(
        {"pytest.ini": "[pytest]\n", "pyproject.toml": '[project]\nname = "a"\n', "docs/reviews/ruff.toml": ""}
    )
    work.write("pytest.ini", "[pytest]\naddopts = -k fast\n")  # the test runner's: not read here
    work.write("pyproject.toml", '[project]\nname = "b"\n')  # no lint setting changed
    work.write("docs/reviews/ruff.toml", 'ignore = ["E1"]\n')  # pm-agent's own artefacts
    work.write("ruff.toml", 'ignore = ["E2"]\n')
    work.write("sub/setup.cfg", "[flake8\n")
    work.write("eslint.config.js", "export default [];\n")
    found, changed, notes = lint_config_weakenings(work.path, work.base, work.git.changes(work.base))
    assert [w.quote() for w in found] == ['ruff.toml:1: ruff ignore += E2: ignore = ["E2"]']
    assert sorted(changed) == ["eslint.config.js", "ruff.toml", "sub/setup.cfg"], "unreadable files count as changed"
    assert len(notes) == 1
    assert notes[0].startswith("sub/setup.cfg: cannot read as ini")


def test_nothing_weakened(make_work: MakeWork) -> None:
    work = make_work({"calc.py": "x = 1\n"})
    work.write("calc.py", "x = 2\n")
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport())
    assert result.gate == GateId.CHECKS_WEAKENED
    assert result.passed
    assert result.evidence == "no suppression or lint/type-check ignore entry added"
    assert result.details == {"unjustified": [], "justified": [], "configs": [], "hidden": {}, "hidden_unparsed": {}}


def _ruff_work(make_work: MakeWork, task_ruff: str) -> Work:
    work = make_work({"ruff.toml": BASE_RUFF, "calc.py": "import os\n"})
    work.write("ruff.toml", task_ruff)
    return work


def test_a_configuration_change_without_commands_to_re_run(make_work: MakeWork) -> None:
    work = _ruff_work(make_work, f"line-length = 200\n# {E501}\n")
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport())
    assert result.passed
    assert result.evidence == "configuration changed (ruff.toml); no lint or typecheck command to re-run"
    assert result.details["configs"] == ["ruff.toml"]


def test_a_configuration_change_that_hides_nothing(make_work: MakeWork) -> None:
    work = _ruff_work(make_work, f"line-length = 200\n# {F401}\n# {E501}\n")
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=(LINT,), timeout_s=30)
    assert result.passed
    assert result.evidence == (
        "lint and typecheck re-run with the base commit's configuration (ruff.toml):\n"
        "  nothing hidden: the same findings either way"
    )


def test_findings_hidden_by_a_change_no_rule_names(make_work: MakeWork) -> None:
    work = _ruff_work(make_work, f"line-length = 200\n# {E501}\n")
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=(LINT,), timeout_s=30)
    assert not result.passed
    assert result.evidence.splitlines() == [
        "suppressions and lint/type-check ignore entries: 1 added, 1 unjustified",
        "  UNJUSTIFIED ruff.toml: configuration change hides findings: (configuration change)",
        "lint and typecheck re-run with the base commit's configuration (ruff.toml):",
        f"  `{LINT}` with the base configuration reports 1 finding(s) it now hides:",
        "    calc.py:1: F401 `os` imported but unused",
        JUSTIFY_HINT,
    ]
    assert result.details == {
        "unjustified": ["ruff.toml: configuration change hides findings: (configuration change)"],
        "justified": [],
        "configs": ["ruff.toml"],
        "hidden": {LINT: ["ruff|calc.py|F401|`os` imported but unused"]},
        "hidden_unparsed": {},
    }
    justified = _note("ruff.toml: the team agreed on longer lines for this code")
    passed = gate_checks_weakened(TASK, work.path, work.base, justified, commands=(LINT,), timeout_s=30)
    assert passed.passed, passed.evidence
    assert passed.details["unjustified"] == []
    assert passed.details["justified"] == ["ruff.toml: configuration change hides findings: (configuration change)"]
    assert JUSTIFY_HINT not in passed.evidence
    assert "calc.py:1: F401" in passed.evidence
    # the file is the change's code: an entry naming a line of it (the change has no line) still names it
    by_line = _note("ruff.toml:1: the team agreed on longer lines for this code")
    assert gate_checks_weakened(TASK, work.path, work.base, by_line, commands=(LINT,), timeout_s=30).passed


def test_a_named_weakening_is_not_listed_again_as_a_configuration_change(make_work: MakeWork) -> None:
    work = _ruff_work(make_work, f'line-length = 100\nignore = ["F401"]\n# {E501}\n')
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=(LINT,), timeout_s=30)
    assert result.details["unjustified"] == ['ruff.toml:2: ruff ignore += F401: ignore = ["F401"]']
    assert result.evidence.splitlines()[0] == "suppressions and lint/type-check ignore entries: 1 added, 1 unjustified"


def test_an_unparsed_failure_only_the_base_configuration_has(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": "line-length = 100\n# broken\n"})
    work.write("ruff.toml", "line-length = 200\n")
    command = "grep -q broken ruff.toml && exit 2; exit 0"
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=(command,), timeout_s=30)
    assert not result.passed
    assert result.details["hidden_unparsed"] == {
        command: "exit 0 with the task's configuration, exit 2 with the base configuration (output not parsed): "
        "the configuration change hides what makes it fail"
    }
    assert result.details["unjustified"] == ["ruff.toml: configuration change hides findings: (configuration change)"]


def test_an_unreadable_configuration_is_noted(make_work: MakeWork) -> None:
    work = make_work({"calc.py": "x = 1\n"})
    work.write("calc.py", "import os  # noqa: F401\n")
    work.write("ruff.toml", "[lint\n")
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport())
    lines = result.evidence.splitlines()
    assert lines[0] == "suppressions and lint/type-check ignore entries: 1 added, 1 unjustified"
    assert lines[1] == "  UNJUSTIFIED calc.py:1: inline suppression `# noqa` of F401: import os  # noqa: F401"
    assert lines[2] == "configuration changed (ruff.toml); no lint or typecheck command to re-run"
    assert lines[3].startswith("  (not read: ruff.toml: cannot read as ruff")
    assert lines[-1] == JUSTIFY_HINT


# ---------------------------------------------------------------- tests-weakened


def test_tests_weakened_on_a_clean_change(make_work: MakeWork) -> None:
    work = make_work({"tests/test_f.py": TEST})
    work.write("tests/test_f.py", TEST + "\n\ndef test_g():\n    assert f() + 1 == 2\n")
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport())
    assert result.gate == GateId.TESTS_WEAKENED
    assert result.passed
    assert result.evidence == "no test deleted, skipped or stripped of assertions; 1 changed test(s) can fail"
    assert result.details == {
        "deleted": [],
        "markers": [],
        "removed_asserts": {},
        "vacuous": [],
        "suspicious": [],
        "tests_checked": ["tests/test_f.py::test_g"],
        "runner_unjustified": [],
        "runner_justified": [],
        "count_problems": [],
        "test_counts": None,
    }


def test_tests_weakened_evidence_in_order(make_work: MakeWork) -> None:
    work = make_work({"tests/test_f.py": TEST, "tests/test_gone.py": TEST})
    work.delete("tests/test_gone.py")
    work.write("tests/test_f.py", TEST + "\n\ndef test_g():\n    assert f()\n\n\ndef test_h():\n    f()\n")
    work.write("tests/conftest.py", "collect_ignore = ['test_x.py']\n")
    work.write("tests/test_bad.py", "def test_x(:\n")
    counts = TestCounts(passed=2, skipped=1)
    references = [("baseline run", TestCounts(passed=4))]
    result = gate_tests_weakened(TASK, work.path, work.base, AgentReport(), counts=counts, references=references)
    assert not result.passed
    assert result.evidence.splitlines() == [
        "test file deleted: tests/test_gone.py",
        "vacuous test: tests/test_f.py: test_h has no assertion: it passes whatever the code does, unless it raises",
        "2 fewer test(s) ran than in the baseline run: 4 -> 2",
        "test runner configuration and conftest hooks: 1 added, 1 unjustified",
        "  UNJUSTIFIED tests/conftest.py:1: collect_ignore added (leaves files out of collection): "
        "collect_ignore = ['test_x.py']",
        JUSTIFY_HINT,
        "pm-agent cannot tell whether these tests can fail (a reviewer will look):",
        "  only truthiness/type checked: tests/test_f.py:9: `assert f()` (test_g)",
        "test counts: 2 ran now (1 skipped, 0 deselected)",
        "  baseline run: 4 ran (0 skipped, 0 deselected)",
        "(not read: tests/test_bad.py (not valid Python))",
    ]
    assert result.details["deleted"] == ["tests/test_gone.py"]
    assert result.details["vacuous"] == [
        "tests/test_f.py: test_h has no assertion: it passes whatever the code does, unless it raises"
    ]
    assert result.details["count_problems"] == ["2 fewer test(s) ran than in the baseline run: 4 -> 2"]
    assert result.details["runner_unjustified"] == [
        "tests/conftest.py:1: collect_ignore added (leaves files out of collection): collect_ignore = ['test_x.py']"
    ]
    assert result.details["test_counts"] == counts.model_dump()
    assert result.details["tests_checked"] == ["tests/test_f.py::test_g", "tests/test_f.py::test_h"]


def test_each_problem_alone_fails_the_gate(make_work: MakeWork) -> None:
    work = make_work({"tests/test_f.py": TEST})
    work.write("tests/test_f.py", TEST + "\n\ndef test_h():\n    f()\n")
    assert not gate_tests_weakened(TASK, work.path, work.base, AgentReport()).passed, "a vacuous test"
    work.write("tests/test_f.py", TEST)
    fewer = gate_tests_weakened(
        TASK, work.path, work.base, AgentReport(), counts=TestCounts(passed=1), references=[("b", TestCounts(passed=2))]
    )
    assert not fewer.passed, "fewer tests ran"
    assert fewer.details["count_problems"] == ["1 fewer test(s) ran than in the b: 2 -> 1"]
    work.write("tests/conftest.py", "collect_ignore = ['x.py']\n")
    assert not gate_tests_weakened(TASK, work.path, work.base, AgentReport()).passed, "an unjustified hook"


def test_a_justified_hook_passes_without_the_summary_line(make_work: MakeWork) -> None:
    work = make_work({"tests/test_f.py": TEST})
    work.write("tests/conftest.py", "collect_ignore = ['test_x.py']\n")
    report = _note("tests/conftest.py collect_ignore: test_x.py needs hardware we do not have")
    result = gate_tests_weakened(TASK, work.path, work.base, report)
    assert result.passed, result.evidence
    assert result.evidence.splitlines() == [
        "test runner configuration and conftest hooks: 1 added, 0 unjustified",
        "  justified   tests/conftest.py:1: collect_ignore added (leaves files out of collection): "
        "collect_ignore = ['test_x.py']",
        "      by: tests/conftest.py collect_ignore: test_x.py needs hardware we do not have",
    ]
    assert result.details["runner_justified"] == [
        "tests/conftest.py:1: collect_ignore added (leaves files out of collection): collect_ignore = ['test_x.py']"
    ]


def test_vacuous_tests_reads_python_test_files_with_added_lines(make_work: MakeWork) -> None:
    work = make_work(
        {"tests/test_old.py": TEST + "\n\ndef test_x():\n    assert f() == 2\n", "tests/test_gone.py": TEST}
    )
    work.write("tests/test_old.py", TEST)  # only lines removed: nothing to judge
    work.delete("tests/test_gone.py")
    work.write("tests/conftest.py", "def test_in_conftest():\n    pass\n")
    work.write("src/helpers.py", "def test_like():\n    pass\n")
    work.write("docs/reviews/tests/test_r.py", "def test_r():\n    pass\n")
    work.write("tests/test_new.py", "def test_n():\n    pass\n")
    report = vacuous_tests(work.path, work.base, work.git.changes(work.base))
    assert report.checked == ["tests/test_new.py::test_n"]
    assert report.failing == [
        "tests/test_new.py: test_n has no assertion: it passes whatever the code does, unless it raises"
    ]


def test_vacuous_tests_compares_with_the_base_version(make_work: MakeWork) -> None:
    work = make_work({"tests/test_f.py": TEST})
    work.write("tests/test_f.py", TEST.replace("== 1", "is not None") + "\n")
    report = vacuous_tests(work.path, work.base, work.git.changes(work.base))
    assert report.failing == ["checks almost nothing: tests/test_f.py:5: `assert f() is not None` (test_f)"]
    work.write("tests/test_f.py", TEST.replace("f() == 1", "f()"))
    weaker = vacuous_tests(work.path, work.base, work.git.changes(work.base))
    assert weaker.failing == ["assertion replaced by a weaker one in test_f: tests/test_f.py:5: `assert f()`"]


def test_only_lint_settings_count_as_a_lint_configuration_change() -> None:
    old = '[tool.ruff]\nline-length = 100\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    assert not lint_settings_differ("pyproject.toml", old, old.replace('"-q"', '"-q -x"'))
    assert lint_settings_differ("pyproject.toml", old, old.replace("100", "120"))
    assert lint_settings_differ("eslint.config.js", "x", "x"), "a flat eslint config cannot be read: always counts"


def test_the_changes_given_are_the_ones_judged(make_work: MakeWork) -> None:
    work = make_work({"calc.py": "x = 1\n"})
    work.write("calc.py", "import os  # noqa: F401\n")
    nothing = ChangeSet(base=work.base, target=work.base)
    assert gate_checks_weakened(TASK, work.path, work.base, AgentReport(), changes=nothing).passed
    assert gate_tests_weakened(TASK, work.path, work.base, AgentReport(), changes=nothing).passed
    assert not gate_checks_weakened(TASK, work.path, work.base, AgentReport()).passed


def test_the_environment_reaches_both_lint_runs(make_work: MakeWork) -> None:
    work = _ruff_work(make_work, f"line-length = 200\n# {E501}\n")
    command = 'sed -n "s/^# //p" ruff.toml; [ -n "$LINT_ENV" ] || exit 0; exit 1'
    with_env = gate_checks_weakened(
        TASK, work.path, work.base, AgentReport(), commands=(command,), timeout_s=30, env={"LINT_ENV": "1"}
    )
    assert with_env.details["hidden"] == {command: ["ruff|calc.py|F401|`os` imported but unused"]}
    without = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=(command,), timeout_s=30)
    assert without.details["hidden"] == {}


def test_several_lint_configurations_in_one_change(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": "line-length = 100\n", "mypy.ini": "[mypy]\nstrict = True\n"})
    work.write("ruff.toml", 'line-length = 100\nignore = ["E1"]\n')
    work.write("mypy.ini", "[mypy]\nstrict = False\n")
    found, changed, _ = lint_config_weakenings(work.path, work.base, work.git.changes(work.base))
    assert sorted(w.what for w in found) == ["mypy strict = False", "ruff ignore += E1"]
    assert sorted(changed) == ["mypy.ini", "ruff.toml"]
    result = gate_checks_weakened(TASK, work.path, work.base, AgentReport())
    assert "configuration changed (mypy.ini, ruff.toml); no lint or typecheck command to re-run" in result.evidence
    rerun = gate_checks_weakened(TASK, work.path, work.base, AgentReport(), commands=("true",), timeout_s=30)
    assert "lint and typecheck re-run with the base commit's configuration (mypy.ini, ruff.toml):" in rerun.evidence
