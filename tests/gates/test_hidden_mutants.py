"""Findings hidden by a configuration change, where a one-token change would go unnoticed: how two runs are
compared, the evidence lines, and the scratch worktree with the base's configuration.

Written against mutmut's survivors (make mutation). Real git repositories in tmp_path; the commands are small
shell commands printing ruff-shaped lines, so no linter needs to run.
"""

from __future__ import annotations

from pathlib import Path

from pm_agent.gates.findings import Finding
from pm_agent.gates.hidden import TOOL_DIRS, Hidden, base_config_copy, compare_runs, hidden_findings
from pm_agent.gates.ward import CommandResult

from .conftest import MakeWork

F401 = "calc.py:1:8: F401 [*] `os` imported but unused\n"
E501 = "calc.py:9:101: E501 [*] Line too long (120 > 100)\n"


def _result(output: str, exit_code: int, *, timed_out: bool = False, cwd: str = "/w/repo") -> CommandResult:
    return CommandResult(
        cmd="lint", cwd=cwd, exit_code=exit_code, duration_ms=1, output_tail=output, output=output, timed_out=timed_out
    )


def test_findings_only_the_base_configuration_reports_are_hidden() -> None:
    hidden = Hidden()
    compare_runs("ruff check .", _result("", 0), _result("/w/repo/" + F401 + "Found 1 error.\n", 1), 60, hidden)
    assert hidden.commands == ["ruff check ."]
    assert hidden.findings == {
        "ruff check .": [Finding(tool="ruff", path="calc.py", line=1, code="F401", message="`os` imported but unused")]
    }
    assert hidden.unparsed == {}
    assert hidden.any
    assert hidden.lines() == [
        "  `ruff check .` with the base configuration reports 1 finding(s) it now hides:",
        "    calc.py:1: F401 `os` imported but unused",
    ]


def test_findings_both_configurations_report_are_not_hidden() -> None:
    hidden = Hidden()
    compare_runs("ruff check .", _result(F401, 1), _result(F401, 1), 60, hidden)
    assert hidden.commands == ["ruff check ."]
    assert not hidden.any
    assert hidden.lines() == []


def test_output_no_parser_reads_is_judged_by_exit_status() -> None:
    hidden = Hidden()
    compare_runs("mylint", _result("all good", 0), _result("something broke", 2), 60, hidden)
    assert hidden.unparsed == {
        "mylint": "exit 0 with the task's configuration, exit 2 with the base configuration (output not parsed): "
        "the configuration change hides what makes it fail"
    }
    assert hidden.any
    assert hidden.lines() == [f"  `mylint`: {hidden.unparsed['mylint']}"]
    same = Hidden()
    compare_runs("mylint", _result("broke", 2), _result("broke", 2), 60, same)
    assert not same.any


def test_a_run_that_cannot_run_is_noted_not_compared() -> None:
    hidden = Hidden()
    compare_runs("mylint", _result("", 0, timed_out=True), _result("broke", 2), 60, hidden)
    assert hidden.notes == ["`mylint` cannot run with the task's configuration (timed out after 60s): not compared"]
    base_missing = Hidden()
    compare_runs("mylint", _result("", 0), _result("sh: 1: mylint: not found", 127), 60, base_missing)
    assert base_missing.notes == [
        "`mylint` cannot run with the base configuration (exit 127: sh: 1: mylint: not found): not compared"
    ]
    assert base_missing.commands == ["mylint"]
    assert not base_missing.any
    assert base_missing.lines() == [f"  ({base_missing.notes[0]})"]


def test_evidence_lines_list_at_most_twenty_findings_per_command() -> None:
    many = [Finding(tool="ruff", path="a.py", line=n, code="E501", message="long") for n in range(1, 26)]
    hidden = Hidden(commands=["a", "b"], findings={"a": many, "b": []}, notes=["n"])
    assert hidden.any
    lines = hidden.lines()
    assert lines[0] == "  `a` with the base configuration reports 25 finding(s) it now hides:"
    assert lines[1] == "    a.py:1: E501 long"
    assert len(lines) == 1 + 21 + 1, "twenty findings, a line saying how many more, the note"
    assert lines[-1] == "  (n)"
    assert not Hidden(findings={"a": []}).any


def test_the_scratch_copy_has_the_tasks_files_and_the_base_configuration(make_work: MakeWork, tmp_path: Path) -> None:
    work = make_work({"ruff.toml": "base\n", "calc.py": "old\n", ".gitignore": ".venv/\nnode_modules/\n"})
    work.write("ruff.toml", "task\n")
    work.write("mypy.ini", "new\n")
    work.write("calc.py", "new\n")
    work.write("extra.py", "untracked\n")
    (work.path / ".venv").mkdir()
    (work.path / ".venv" / "tool").write_text("installed\n")
    with base_config_copy(work.path, work.base, ["ruff.toml", "mypy.ini"]) as scratch:
        assert scratch.name == work.path.name
        assert scratch.parent != work.path.parent
        assert (scratch / "ruff.toml").read_text() == "base\n"
        assert not (scratch / "mypy.ini").exists(), "the task created it: absent with the base's configuration"
        assert (scratch / "calc.py").read_text() == "new\n"
        assert (scratch / "extra.py").read_text() == "untracked\n"
        assert (scratch / ".venv").is_symlink()
        assert (scratch / ".venv" / "tool").read_text() == "installed\n"
        assert not (scratch / "node_modules").exists(), "only tool directories the worktree has are linked"
        assert len(work.git.worktree_list()) == 2
    assert not scratch.exists()
    assert not scratch.parent.exists()
    assert (work.path / ".venv" / "tool").read_text() == "installed\n"
    assert [w.path for w in work.git.worktree_list()] == [str(work.path)]
    assert work.git.run("status", "--porcelain").splitlines() == [
        " M calc.py",
        " M ruff.toml",
        "?? extra.py",
        "?? mypy.ini",
    ]
    assert TOOL_DIRS == (".venv", "venv", "node_modules")


def test_a_tracked_tool_directory_is_not_replaced_by_a_link(make_work: MakeWork) -> None:
    work = make_work({"venv/README": "tracked\n", "ruff.toml": "base\n"})
    work.write("ruff.toml", "task\n")
    with base_config_copy(work.path, work.base, ["ruff.toml"]) as scratch:
        assert not (scratch / "venv").is_symlink()
        assert (scratch / "venv" / "README").read_text() == "tracked\n"
    assert (work.path / "venv" / "README").read_text() == "tracked\n"


LINT = 'cat ruff.toml; [ -n "$LINT_ENV" ] || exit 0; exit 1'


def test_hidden_findings_runs_each_command_with_both_configurations(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": E501 + F401, "calc.py": "import os\n"})
    work.write("ruff.toml", E501)
    hidden = hidden_findings(work.path, work.base, ["ruff.toml"], [LINT], timeout_s=30, env={"LINT_ENV": "1"})
    assert hidden.commands == [LINT]
    assert [f.key for f in hidden.findings[LINT]] == ["ruff|calc.py|F401|`os` imported but unused"]
    without_env = hidden_findings(work.path, work.base, ["ruff.toml"], [LINT], timeout_s=30)
    assert not without_env.any, "exit 0 both ways without the variable: the environment is passed to both runs"
    assert [w.path for w in work.git.worktree_list()] == [str(work.path)]


def test_nothing_runs_without_configurations_or_commands(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": F401})
    work.write("ruff.toml", "")
    assert hidden_findings(work.path, work.base, [], [LINT], timeout_s=30).commands == []
    assert hidden_findings(work.path, work.base, ["ruff.toml"], [], timeout_s=30).commands == []


def test_a_hidden_finding_far_above_the_last_lines_of_output(make_work: MakeWork) -> None:
    shared = "".join(f"calc.py:{n}:1: E501 [*] Line too long\n" for n in range(10, 110))
    work = make_work({"ruff.toml": F401 + shared})
    work.write("ruff.toml", shared)
    hidden = hidden_findings(work.path, work.base, ["ruff.toml"], ["cat ruff.toml; exit 1"], timeout_s=30)
    assert [f.key for f in hidden.findings["cat ruff.toml; exit 1"]] == ["ruff|calc.py|F401|`os` imported but unused"]


def test_a_command_that_times_out_is_noted_with_the_timeout(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": F401})
    work.write("ruff.toml", "")
    hidden = hidden_findings(work.path, work.base, ["ruff.toml"], ["sleep 5"], timeout_s=0.5)
    assert hidden.notes == ["`sleep 5` cannot run with the task's configuration (timed out after 0.5s): not compared"]
    assert not hidden.any
