"""After the hand-off, a change to the locked requirements (the run's copy or the working branch's) is a
`requirements.changed` event of the plan's run, recorded once per new text."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pm_agent.engine.events import RecordingListener
from pm_agent.intake import requirements_hash
from pm_agent.intake.context import REQUIREMENTS as REQUIREMENTS_TASK
from pm_agent.intake.context import STARTED, IntakeInfo
from pm_agent.intake.drift import CHANGED, note_drift
from pm_agent.intake.start import intake_plan
from pm_agent.plan.models import Plan, Task
from pm_agent.store import open_store
from pm_agent.testing.repo import init_repo

from .conftest import PATHS, REQUIREMENTS


def test_changes_after_the_handoff_are_recorded_once(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", files={"README.md": "# r\n"})
    branch = "pm/table/work"
    subprocess.run(["git", "checkout", "-q", "-b", branch], cwd=repo, check=True)
    (repo / PATHS.design_rel).parent.mkdir(parents=True)
    (repo / PATHS.design_rel).write_text(REQUIREMENTS, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "Requirements"], cwd=repo, check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    copies = tmp_path / "copies"
    copies.mkdir()
    design, plan = copies / "design.md", copies / "plan.md"
    design.write_text(REQUIREMENTS, encoding="utf-8")
    plan.write_text("# p\n", encoding="utf-8")

    store = open_store(tmp_path / "state.db")
    try:
        intake = store.create_run(
            intake_plan(PATHS, plan, design),
            baseline_sha="0" * 40,
            working_branch=branch,
            shared_context={},
            config={},
        )
        info = IntakeInfo("Print rows", PATHS.design_rel, PATHS.plan_rel, branch, str(tmp_path / "gone"))
        store.append_event(intake.id, STARTED, info.payload())
        locked = requirements_hash(REQUIREMENTS)
        store.append_event(intake.id, "requirements.locked", {"sha256": locked}, task_id=REQUIREMENTS_TASK)
        store.append_event(intake.id, "intake.handoff", {"plan": str(plan), "design": str(design)})
        tasks = [Task(id="1", title="Output format")]
        run = store.create_run(
            Plan(plan_id="table", path=str(plan), design_path=str(design), tasks=tasks),
            baseline_sha="0" * 40,
            working_branch=branch,
            shared_context={},
            config={},
        )
        listener = RecordingListener()
        assert note_drift(repo, store, run, listener) == []  # nothing changed yet

        edited = REQUIREMENTS.replace("Column alignment.", "Colours.")
        design.write_text(edited, encoding="utf-8")
        first = note_drift(repo, store, run, listener)
        assert first == [{"from": locked, "to": requirements_hash(edited), "where": str(design), "request": intake.id}]
        assert note_drift(repo, store, run, listener) == []  # the same change is not recorded twice
        assert [e.payload["to"] for e in store.events(run.id) if e.kind == CHANGED] == [requirements_hash(edited)]
        assert listener.kinds() == [CHANGED]

        subprocess.run(["git", "checkout", "-q", branch], cwd=repo, check=True)  # a commit on the working branch
        (repo / PATHS.design_rel).write_text(edited + "\nMore.\n", encoding="utf-8")
        subprocess.run(["git", "commit", "-q", "-am", "drift"], cwd=repo, check=True)
        subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
        (second,) = note_drift(repo, store, run, listener)
        assert second["where"] == f"{branch}:{PATHS.design_rel}"
        assert second["to"] == requirements_hash(edited + "\nMore.\n")
        assert note_drift(repo, store, intake, listener) == []  # the intake run itself is no plan run
    finally:
        store.close()
