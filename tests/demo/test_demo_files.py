"""The files the scripted agents write: real code that passes the real commands and gates."""

from __future__ import annotations

import pytest

from pm_agent.config import load_config
from pm_agent.demo import DEMO_ANSWERS, DEMO_TASKS, apply_files, demo_task
from pm_agent.demo.brain import criteria_mapping, line_of
from pm_agent.demo.tasks import json_default
from pm_agent.gates import (
    GateId,
    check_scope,
    check_tests_weakened,
    gate_no_orphan_todos,
    gate_plan_alignment,
    gate_tests_added,
    gate_tests_run,
)
from pm_agent.testing.repo import commit_all

from .conftest import Demo, git, run


def _answer(ref: str) -> str | None:
    return DEMO_ANSWERS.get(ref)


def _checks(demo: Demo) -> list[str]:
    env = load_config(demo.repo).environment
    return [c for c in (env.test_command, env.lint_command, env.typecheck_command, env.format_command) if c]


@pytest.mark.parametrize("cli_answer", [None, "JSON by default please; --table for people."])
def test_every_task_applied_in_queue_order_keeps_the_suite_green(demo: Demo, cli_answer: str | None) -> None:
    for task_id in demo.plan.queue:
        data = demo_task(task_id)
        assert data is not None
        answer = cli_answer if (cli_answer and data.question) else _answer(data.ref)
        apply_files(demo.repo, data.final_files(answer))
        commit_all(demo.repo, f"{data.title}\n\nRefs: {data.ref}")
    for command in _checks(demo):
        done = run(demo.repo, command)
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    summary = run(demo.repo, _checks(demo)[0]).stdout
    assert "failed" not in summary
    assert "26 passed" in summary
    cli = (demo.repo / "src/textstats/cli.py").read_text()
    expected = "json" if cli_answer else "table"
    assert f'DEFAULT_FORMAT = "{expected}"' in cli
    assert git(demo.repo, "status", "--porcelain") == ""  # caches are ignored


def test_each_task_alone_on_its_dependencies_passes_its_own_tests(demo: Demo) -> None:
    """Each task's tests pass as soon as its dependencies are in: what gate 2 checks per task."""
    env = load_config(demo.repo).environment
    assert env.test_command is not None
    for task_id in demo.plan.queue:
        data = demo_task(task_id)
        assert data is not None
        apply_files(demo.repo, data.final_files(_answer(data.ref)))
        if data.tests:
            done = run(demo.repo, f"{env.test_command} {' '.join(data.tests)}")
            assert done.returncode == 0, done.stdout


def test_every_criterion_anchor_is_a_real_line_of_the_final_files() -> None:
    for data in DEMO_TASKS:
        files = data.final_files(_answer(data.ref))
        for criterion in data.criteria:
            assert criterion.path in files, (data.ref, criterion.path)
            content = files[criterion.path]
            line = line_of(content, criterion.anchors)
            assert criterion.anchors[0] in content.splitlines()[line - 1], (data.ref, criterion.text)
        for mapping in criteria_mapping(data, files):
            path, line = mapping["location"].rsplit(":", 1)
            assert 1 <= int(line) <= len(files[path].splitlines())


def test_the_cli_files_follow_the_answer() -> None:
    cli = demo_task("task-6")
    assert cli is not None
    table = cli.final_files("A plain aligned table by default; add a --json flag.")
    as_json = cli.final_files("JSON by default, with --table for humans.")
    assert '"--json"' in table["src/textstats/cli.py"]
    assert '"--table"' in as_json["src/textstats/cli.py"]
    assert table["pyproject.toml"] == as_json["pyproject.toml"]
    assert 'textstats = "textstats.cli:main"' in table["pyproject.toml"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (None, False),
        ("", False),
        (DEMO_ANSWERS["task-6"], False),
        ("JSON", True),
        ("json by default; a --table flag for people", True),
        ("Use a plain table; JSON only behind a flag", False),
        ("Default to JSON.", True),
        ("table", False),
    ],
)
def test_json_default_reads_the_format_named_first(answer: str | None, expected: bool) -> None:
    assert json_default(answer) is expected


def _apply_dependencies(demo: Demo, upto: str) -> str:
    """Commit every task before `upto` in queue order; the new base commit."""
    for task_id in demo.plan.queue:
        if task_id == upto:
            break
        data = demo_task(task_id)
        assert data is not None
        apply_files(demo.repo, data.final_files(_answer(data.ref)))
        commit_all(demo.repo, f"{data.title}\n\nRefs: {data.ref}")
    return git(demo.repo, "rev-parse", "HEAD").strip()


def test_the_first_attempt_of_task_3_fails_the_test_gates_and_the_fix_passes_them(demo: Demo) -> None:
    base = _apply_dependencies(demo, "3")
    task = demo.plan.task("3")
    env = load_config(demo.repo).environment
    data = demo_task("3")
    assert data is not None
    first = data.attempt_files(1)
    assert first["src/textstats/counts.py"] != data.final_files()["src/textstats/counts.py"]
    apply_files(demo.repo, first)
    claim = {"testsClaimedPassing": True, "testEvidence": ["4 passed in 0.02s"]}
    # What the sloppy developer ran passes; what pm-agent runs does not.
    sloppy = run(demo.repo, f"{env.test_command} {' '.join(data.first_attempt_tests)}")
    assert sloppy.returncode == 0
    added = gate_tests_added(task, demo.repo, base, environment=env)
    ran = gate_tests_run(task, demo.repo, claim, environment=env)
    assert (added.gate, added.passed) == (GateId.TESTS_ADDED, False)
    assert (ran.gate, ran.passed) == (GateId.TESTS_RUN, False)
    assert ran.details["claim_mismatch"] is True
    assert "test_silent_final_e_is_not_a_syllable" in ran.evidence
    # Everything else about the first attempt is fine: only the test gates catch it.
    mapping = {"criteriaMapping": criteria_mapping(data, {**data.final_files(), **first})}
    assert gate_plan_alignment(task, demo.repo, base, mapping).passed
    assert gate_no_orphan_todos(demo.repo, base).passed
    assert check_scope(task, demo.repo, base).passed

    apply_files(demo.repo, data.fixed_files())
    assert set(data.fixed_files()) == {"src/textstats/counts.py"}
    assert gate_tests_added(task, demo.repo, base, environment=env).passed
    assert gate_tests_run(task, demo.repo, claim, environment=env).passed
    assert check_tests_weakened(task, demo.repo, base).passed


def test_the_other_tasks_write_the_same_files_on_every_attempt() -> None:
    for data in DEMO_TASKS:
        if data.first_attempt:
            continue
        answer = _answer(data.ref)
        assert data.attempt_files(1, answer) == data.final_files(answer) == data.attempt_files(2, answer)
        assert list(data.final_files(answer)) == list(data.all_paths)
