"""A request-born run notices its locked requirements change while it runs: the loop's PlanSync stats the
approved copy each pass and records `requirements.changed` once per new text, with a line for the console.
A run whose design doc is not a request's approved copy is not watched."""

from __future__ import annotations

from pathlib import Path

from pm_agent.engine.plansync import PlanSync
from pm_agent.engine.reconcile import OfflineHost
from pm_agent.intake import requirements_hash
from pm_agent.intake.context import REQUIREMENTS as REQUIREMENTS_TASK
from pm_agent.intake.context import STARTED, IntakeInfo
from pm_agent.intake.drift import CHANGED
from pm_agent.intake.start import handoff_dir, intake_plan
from pm_agent.lifecycle import default_workflow
from pm_agent.plan import load_plan
from pm_agent.store import SqliteStore, default_store_path, open_store
from pm_agent.testing.repo import git, init_repo

from .conftest import PATHS, PLAN_GOOD, REQUIREMENTS

BRANCH = "pm/table/work"


def plan_run(repo: Path, store: SqliteStore, design: Path, plan: Path) -> OfflineHost:
    """The plan's run, as `_after` starts it from the hand-off's copies."""
    run = store.create_run(
        load_plan(plan, design), baseline_sha="0" * 40, working_branch=BRANCH, shared_context={}, config={}
    )
    return OfflineHost(repo, store, run, default_workflow())


def test_a_live_run_records_each_new_requirements_text_once(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", files={"README.md": "# r\n"})
    git(repo, "checkout", "-q", "-b", BRANCH)  # the working branch holds the committed requirements
    (repo / PATHS.design_rel).parent.mkdir(parents=True)
    (repo / PATHS.design_rel).write_text(REQUIREMENTS, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Requirements")
    git(repo, "checkout", "-q", "main")
    store = open_store(default_store_path(repo))
    try:
        intake = store.create_run(
            intake_plan(PATHS, repo / PATHS.plan_rel, repo / PATHS.design_rel),
            baseline_sha="0" * 40, working_branch=BRANCH, shared_context={}, config={},
        )  # fmt: skip
        copies = handoff_dir(repo, intake.id)
        copies.mkdir(parents=True)
        design, plan = copies / "design.md", copies / "plan.md"
        design.write_text(REQUIREMENTS, encoding="utf-8")
        plan.write_text(PLAN_GOOD, encoding="utf-8")
        info = IntakeInfo("Print rows", PATHS.design_rel, PATHS.plan_rel, BRANCH, str(tmp_path / "gone"))
        store.append_event(intake.id, STARTED, info.payload())
        locked = requirements_hash(REQUIREMENTS)
        store.append_event(intake.id, "requirements.locked", {"sha256": locked}, task_id=REQUIREMENTS_TASK)
        store.append_event(intake.id, "intake.handoff", {"plan": str(plan), "design": str(design)})
        host = plan_run(repo, store, design, plan)

        sync = PlanSync(host)
        sync.poll()
        assert [e for e in store.events(host.run.id) if e.kind == CHANGED] == []

        edited = REQUIREMENTS.replace("Column alignment.", "Colours.")
        design.write_text(edited, encoding="utf-8")
        sync.poll()
        sync.poll()  # the same text: not recorded again
        changed = [e.payload for e in store.events(host.run.id) if e.kind == CHANGED]
        assert [(p["from"], p["to"], p["where"]) for p in changed] == [(locked, requirements_hash(edited), str(design))]
        assert [kind for kind, _ in host.lines] == [CHANGED]
        assert "changed since they were locked" in host.lines[0][1]

        design.write_text(REQUIREMENTS, encoding="utf-8")  # back to the locked text: nothing new
        sync.poll()
        assert len([e for e in store.events(host.run.id) if e.kind == CHANGED]) == 1
    finally:
        store.close()


def test_a_run_from_a_written_plan_is_not_watched(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", files={"README.md": "# r\n", "docs/design.md": REQUIREMENTS})
    (repo / "docs" / "plan.md").write_text(PLAN_GOOD, encoding="utf-8")
    store = open_store(default_store_path(repo))
    try:
        host = plan_run(repo, store, repo / "docs" / "design.md", repo / "docs" / "plan.md")
        sync = PlanSync(host)
        assert sync.requirements is None
        (repo / "docs" / "design.md").write_text("# other\n", encoding="utf-8")
        sync.poll()
        assert [e for e in store.events(host.run.id) if e.kind == CHANGED] == []
    finally:
        store.close()
