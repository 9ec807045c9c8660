"""The whole demo plan played offline: the brain's sessions, real files and commands, pm-agent's real gates.

A tiny stand-in for the engine: tasks in queue order, each in the demo repository; the developer's
signal goes through the six minimum gates and the integrity checks; a failed gate brings the fixer
with the evidence; NORMAL and CRITICAL tasks get the reviewer; accepted work is committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pm_agent.config import load_config
from pm_agent.demo import DEMO_ANSWERS, DemoBrain
from pm_agent.gates import GateResult, gate_review_note, run_integrity_checks, run_minimum_gates
from pm_agent.plan import Task, Tier
from pm_agent.signals import CompleteSignal
from pm_agent.testing.repo import commit_all

from .conftest import Demo, Offline, answer, git, run, run_offline


def _gates(demo: Demo, task: Task, base: str, payload: dict[str, Any]) -> list[GateResult]:
    env = load_config(demo.repo).environment
    ids = [t.id for t in demo.plan.tasks]
    results = run_minimum_gates(task, demo.repo, base, payload, environment=env, known_task_ids=ids)
    return results + run_integrity_checks(task, demo.repo, base, payload=payload)


def _locations_exist(workdir: Path, session: Offline) -> None:
    signal = session.signal
    assert isinstance(signal, CompleteSignal)
    assert signal.criteria_mapping, "a code role maps every criterion"
    for mapping in signal.criteria_mapping:
        file = workdir / mapping.path
        assert file.is_file(), mapping.location
        assert 1 <= mapping.line <= len(file.read_text().splitlines()), mapping.location


def test_the_whole_plan_passes_the_real_gates_with_one_fix_and_one_question(demo: Demo) -> None:
    brain = DemoBrain()
    story: list[tuple[str, ...]] = []
    for task_id in demo.plan.queue:
        task = demo.plan.task(task_id)
        base = git(demo.repo, "rev-parse", "HEAD").strip()
        dev = run_offline(brain, demo, task_id, "developer")
        if dev.signal.signal == "needs-user-input":
            story.append((task.ref, "asked", dev.payload["question"]))
            dev = answer(dev, brain, DEMO_ANSWERS[task.ref])
        assert dev.signal.signal == "complete"
        _locations_exist(demo.repo, dev)
        results = _gates(demo, task, base, dev.payload)
        failed = [r for r in results if not r.passed]
        if failed:
            story.append((task.ref, "failed", *(r.gate for r in failed)))
            evidence = "\n\n".join(f"{r.gate}:\n{r.evidence}" for r in failed)
            fix = run_offline(brain, demo, task_id, "fixer", attempt=2, extra=f"Source: gates\n{evidence}")
            assert fix.signal.signal == "complete"
            assert set(fix.written) == {"src/textstats/counts.py"}
            assert "2-tests-added, 3-tests-run" in fix.payload["summary"]
            _locations_exist(demo.repo, fix)
            results = _gates(demo, task, base, fix.payload)
            failed = [r for r in results if not r.passed]
        assert not failed, "\n".join(f"{r.gate}: {r.evidence}" for r in failed)
        if task.tier is not Tier.LOW:
            review = run_offline(brain, demo, task_id, "reviewer")
            assert review.signal.signal == "complete"
            assert review.written == {}
            assert review.commands == ["git status --short --untracked-files=all"]
            assert gate_review_note(review.payload).passed
            assert review.payload["summary"].startswith(f"Approved {task.ref}")
        commit_all(demo.repo, f"{task.title}\n\nRefs: {task.ref}")

    assert story == [
        ("task-3", "failed", "2-tests-added", "3-tests-run"),
        ("task-6", "asked", "Should `textstats FILE` print JSON or a plain aligned table by default?"),
    ]
    assert git(demo.repo, "status", "--porcelain") == ""
    table = run(demo.repo, f"PYTHONPATH=src {demo.paths.python} -m textstats.cli README.md")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[0] == "words"


def test_the_other_roles_report_valid_signals(demo: Demo) -> None:
    brain = DemoBrain()
    for task_id in ("1", "2"):
        run_offline(brain, demo, task_id, "developer")
    tester = run_offline(brain, demo, "2", "tester")
    assert tester.signal.signal == "complete"
    assert tester.payload["testsClaimedPassing"] is True
    _locations_exist(demo.repo, tester)
    for role in ("analyst", "planner"):
        session = run_offline(brain, demo, "2", role)
        assert session.signal.signal == "complete"
        assert session.written == {}
