"""The approval escalation without agents: a real store, the intake run, a scripted human who answers
(and, for `edit`, edits the plan file before saying `done`); pm-agent re-parses what the human saved."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pm_agent.agents.factory import runner_from_config
from pm_agent.agents.session import AgentHost
from pm_agent.config import PmConfig
from pm_agent.engine.events import RecordingListener
from pm_agent.human.channels import EscalationChannel, PrintOnlyChannel, ScriptedChannel
from pm_agent.intake import Phase, requirements_hash
from pm_agent.intake.approval import APPROVED, approval
from pm_agent.intake.context import PLAN, IntakeCtx, IntakeInfo
from pm_agent.intake.flow import CHANGED, LOCKED, recheck_plan
from pm_agent.intake.start import intake_plan
from pm_agent.store import EscalationRecord, Store, open_store

from .conftest import PATHS, PLAN_BAD, PLAN_GOOD, REQUIREMENTS


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "state.db")
    yield opened
    opened.close()


def intake(tmp_path: Path, store: Store, channel: EscalationChannel, plan_text: str = PLAN_GOOD) -> IntakeCtx:
    """An intake run whose analyst and planner are done: requirements locked, plan written."""
    worktree = tmp_path / "wt"
    info = IntakeInfo("Print rows as a table", PATHS.design_rel, PATHS.plan_rel, "pm/x/work", str(worktree))
    info.design_file.parent.mkdir(parents=True)
    info.design_file.write_text(REQUIREMENTS, encoding="utf-8")
    info.plan_file.write_text(plan_text, encoding="utf-8")
    run = store.create_run(
        intake_plan(PATHS, info.plan_file, info.design_file),
        baseline_sha="0" * 40,
        working_branch="pm/x/work",
        shared_context={},
        config={},
    )
    store.append_event(run.id, LOCKED, {"sha256": requirements_hash(REQUIREMENTS)}, task_id="requirements")
    config = PmConfig()
    host = AgentHost(store, tmp_path / "state.db", runner_from_config(config.agent, None))
    return IntakeCtx(tmp_path, store, config, host, run, info, RecordingListener(), channel)


def decide(ic: IntakeCtx) -> Phase:
    return asyncio.run(approval(ic, lambda: recheck_plan(ic, "approval")))


def human(answers: list[str], on_edit: Callable[[], None] | None = None) -> ScriptedChannel:
    """Answers in order; before answering `done`, does the edit."""

    def answer(esc: EscalationRecord) -> str | None:
        text = answers.pop(0) if answers else None
        if text == "done" and on_edit is not None:
            on_edit()
        return text

    return ScriptedChannel(answer)


def test_approve_records_the_approval(tmp_path: Path, store: Store) -> None:
    ic = intake(tmp_path, store, human(["approve"]))
    assert decide(ic) is Phase.DONE
    assert [e.payload["tasks"] for e in ic.events(APPROVED, PLAN)] == [1]
    assert decide(ic) is Phase.DONE  # once approved, never asked again
    assert len(store.list_escalations(ic.run_id)) == 1


def test_edit_waits_then_reparses_the_file_the_human_saved(tmp_path: Path, store: Store) -> None:
    ic = intake(tmp_path, store, PrintOnlyChannel(), PLAN_BAD)

    def fix() -> None:
        ic.info.plan_file.write_text(PLAN_GOOD, encoding="utf-8")
        ic.info.design_file.write_text(REQUIREMENTS.replace("Column alignment.", "Colours."), encoding="utf-8")

    ic.channel = human(["edit", "done", "approve"], fix)
    assert decide(ic) is Phase.DONE
    escalations = store.list_escalations(ic.run_id)
    assert [(e.source, e.answer) for e in escalations] == [
        ("intake-approval", "edit"),
        ("intake-edit", "done"),
        ("intake-approval", "approve"),
    ]
    assert "depends on Task 7, which is not in the plan" in escalations[0].problem  # the first ask showed the error
    assert "after your edit" in escalations[2].problem
    assert "not in the plan" not in escalations[2].problem
    changed = ic.events(CHANGED)
    assert [e.payload["to"] for e in changed] == [requirements_hash(ic.info.design_file.read_text(encoding="utf-8"))]


def test_approving_a_plan_that_fails_the_check_asks_again(tmp_path: Path, store: Store) -> None:
    ic = intake(tmp_path, store, human(["approve", "abort"]), PLAN_BAD)
    assert decide(ic) is Phase.FAILED
    escalations = store.list_escalations(ic.run_id)
    assert "no longer passes" in escalations[1].problem
    assert store.get_task(ic.run_id, PLAN).state == "failed"
    assert not ic.events(APPROVED, PLAN)


def test_nobody_there_waits_and_a_later_answer_counts(tmp_path: Path, store: Store) -> None:
    ic = intake(tmp_path, store, PrintOnlyChannel())
    assert decide(ic) is Phase.WAITING
    (esc,) = store.list_escalations(ic.run_id)
    store.answer_escalation(esc.id, "Approve.")  # as `pm-agent answer` does, from another shell
    assert decide(ic) is Phase.DONE
    assert len(store.list_escalations(ic.run_id)) == 1


def test_yes_skips_the_escalation(tmp_path: Path, store: Store) -> None:
    ic = intake(tmp_path, store, PrintOnlyChannel())
    ic.info = dataclasses.replace(ic.info, yes=True)
    assert decide(ic) is Phase.DONE
    assert store.list_escalations(ic.run_id) == []
    assert [e.payload["by"] for e in ic.events(APPROVED, PLAN)] == ["--yes"]
