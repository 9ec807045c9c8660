"""Reconciling an edited plan against a real store (SQLite file) and a real git repository, no agents."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pm_agent.engine.planfiles import content_sha
from pm_agent.engine.plansync import SETTLE_S, PlanSync
from pm_agent.engine.reconcile import (
    RECONCILED,
    REFUSED,
    OfflineHost,
    apply_answers,
    plan_exempt,
    reconcile,
)
from pm_agent.errors import StoreError
from pm_agent.lifecycle import IssueState, WorkflowContext, default_workflow
from pm_agent.plan import load_plan
from pm_agent.plan.models import Task
from pm_agent.reports.progress import render_progress
from pm_agent.reports.progress_data import file_progress_data, progress_text
from pm_agent.reports.state_reader import read_state
from pm_agent.store import Cancel, EscalationStatus, SqliteStore, default_store_path, open_store
from pm_agent.vcs.checkout_guard import CheckoutGuard

V1 = """\
# Plan: calc

### Task 1: Addition
Add add().

### Task 2: Subtraction
**Depends on:** Task 1
Add sub().

### Task 3: Multiplication
**Depends on:** Task 1
Add mul().
"""

V2 = (
    V1.replace("Add add().", "Add add() for floats too.")
    .replace("Add sub().", "Add sub() with a docstring.")
    .split("### Task 3")[0]
    + "### Task 4: Division\n**Depends on:** Task 2\nAdd div().\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "calc"
    (repo / "docs" / "plans").mkdir(parents=True)
    (repo / "docs" / "plans" / "calc.md").write_text(V1, encoding="utf-8")
    (repo / "README.md").write_text("# calc\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "add", "-A")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def host(repo: Path) -> OfflineHost:
    plan = load_plan(repo / "docs" / "plans" / "calc.md", None, repo)
    store = open_store(default_store_path(repo))
    run = store.create_run(plan, baseline_sha="0" * 40, working_branch="pm/calc/work", shared_context={}, config={})
    return OfflineHost(repo, store, run, default_workflow())


def complete(store: SqliteStore, run_id: str, task_id: str) -> None:
    ctx = WorkflowContext(task_id=task_id).bind(default_workflow())
    ctx.transition_to(IssueState.COMPLETED, "done in this test")
    store.transition(
        run_id,
        task_id,
        from_state="received",
        to_state="completed",
        reason="done in this test",
        iteration=ctx.iteration_count,
        workflow_context=ctx.model_dump(mode="json"),
    )


def edit(repo: Path, text: str) -> None:
    (repo / "docs" / "plans" / "calc.md").write_text(text, encoding="utf-8")


def settle(repo: Path) -> None:
    """Date the plan back past the loop's settle time, as if the editor had saved a while ago."""
    plan = repo / "docs" / "plans" / "calc.md"
    old = time.time() - 2 * SETTLE_S
    os.utime(plan, (old, old))


def test_edit_adds_updates_cancels_and_escalates(repo: Path, host: OfflineHost) -> None:
    store, run_id = host.store, host.run.id
    complete(store, run_id, "1")
    edit(repo, V2)
    out = reconcile(host)
    assert out.diff is not None
    assert out.diff.counts() == {"added": 1, "updated": 1, "cancelled": 1, "escalated": 1, "unchanged": 0}
    tasks = {t.task_id: t for t in store.list_tasks(run_id)}
    assert sorted(tasks) == ["1", "2", "3", "4"]
    assert (tasks["4"].state, tasks["4"].task().dependency_ids()) == ("received", ["2"])
    assert (
        tasks["4"].task().decision_log[-1]
        == load_plan(repo / "docs/plans/calc.md", None, repo).task("4").decision_log[-1]
    )
    assert "no repository" not in tasks["4"].task().decision_log[-1]  # triaged against the repository
    assert "with a docstring" in tasks["2"].task().body
    assert tasks["3"].state == "failed"
    assert [t.reason for t in store.transitions(run_id, "3")] == ["removed from the plan"]
    assert tasks["1"].task().body.endswith("Add add().")  # completed work keeps its contract
    assert tasks["1"].state == "completed"
    [esc] = store.list_escalations(run_id)
    assert (esc.source, esc.status, esc.task_id) == ("plan-change:task-1", EscalationStatus.OPEN, None)
    assert "task-1 changed in the plan while it is completed" in esc.problem
    [event] = store.events_of_kind(run_id, [RECONCILED])
    assert event.payload["added"] == ["4"]
    assert event.payload["cancelled"] == ["3"]
    assert event.payload["escalated"] == {"1": esc.id}
    assert "plan edited (calc.md): 1 added (task-4); 1 updated (task-2); 1 cancelled (task-3)" in host.lines[-1][1]

    again = reconcile(host)  # the same version once more: asked already, nothing to do
    assert again.diff is not None
    assert again.diff.empty
    assert len(store.list_escalations(run_id)) == 1

    store.answer_escalation(esc.id, "re-open")
    assert apply_answers(host) == ["1-r1"]
    follow = store.get_task(run_id, "1-r1").task()
    assert follow.dependency_ids() == ["1"]
    assert "Add add() for floats too." in follow.body
    assert "escalation #" in follow.body
    assert store.get_escalation(esc.id).status is EscalationStatus.APPLIED
    assert reconcile(host).diff is not None  # the follow-up is pm-agent's, not the plan's: never cancelled
    assert store.get_task(run_id, "1-r1").state == "received"


def test_continue_leaves_everything(repo: Path, host: OfflineHost) -> None:
    complete(host.store, host.run.id, "1")
    edit(repo, V1.replace("Add add().", "Add add() twice."))
    [esc_id] = reconcile(host).escalations.values()
    host.store.answer_escalation(esc_id, "continue")
    assert apply_answers(host) == []
    assert len(host.store.list_tasks(host.run.id)) == 3
    assert host.store.get_escalation(esc_id).status is EscalationStatus.APPLIED


def test_broken_edit_is_refused_whole(repo: Path, host: OfflineHost) -> None:
    store, run_id = host.store, host.run.id
    before = [(t.task_id, t.state, t.contract) for t in store.list_tasks(run_id)]
    broken = V2.replace("**Depends on:** Task 2\nAdd div().", "**Depends on:** Task 9\nAdd div().")
    edit(repo, broken)
    out = reconcile(host)
    assert out.diff is None
    plan = repo / "docs" / "plans" / "calc.md"
    line = broken.splitlines().index("### Task 4: Division") + 1
    assert out.error == f"{plan}:{line}: Task 4 depends on Task 9, which is not in the plan"
    assert [(t.task_id, t.state, t.contract) for t in store.list_tasks(run_id)] == before
    [event] = store.events_of_kind(run_id, [REFUSED])
    assert event.payload["error"] == out.error
    assert host.lines[-1] == (REFUSED, f"plan edit refused: {out.error}; the run goes on with the last good version")
    cycle = V1.replace("### Task 1: Addition\n", "### Task 1: Addition\n**Depends on:** Task 3\n")
    edit(repo, cycle)
    assert "dependency cycle: Task 1 -> Task 3 -> Task 1" in reconcile(host).error


def test_plan_edit_is_one_transaction(host: OfflineHost) -> None:
    store, run_id = host.store, host.run.id
    new = Task(id="9", title="Nine", body="### Task 9: Nine")
    wrong = Cancel("3", "implementing", "failed", "removed from the plan", 1, {})
    with pytest.raises(StoreError, match="is in state 'received', not 'implementing'"):
        store.apply_plan_edit(
            run_id, added=[new], updated=[], cancelled=[wrong], reason="r", event=RECONCILED, payload={}
        )
    assert [t.task_id for t in store.list_tasks(run_id)] == ["1", "2", "3"]
    assert store.events_of_kind(run_id, [RECONCILED, "run.tasks_added"]) == []


def test_plan_sync_hashes_only_on_change(repo: Path, host: OfflineHost) -> None:
    sync = PlanSync(host)
    assert sync.seen is not None  # the file is the version the run started from
    assert sync.poll() is False
    assert host.store.events_of_kind(host.run.id, [RECONCILED, REFUSED]) == []
    edit(repo, V1 + "\n### Task 5: Docs\nWrite docs.\n")
    settle(repo)
    assert sync.poll() is True
    assert host.store.get_task(host.run.id, "5").state == "received"
    assert sync.poll() is False
    assert len(host.store.events_of_kind(host.run.id, [RECONCILED])) == 1
    # A new PlanSync (a resumed loop) starts from the last version looked at.
    assert PlanSync(host).poll() is False


def test_checkout_guard_leaves_the_plan_alone(repo: Path, host: OfflineHost) -> None:
    assert plan_exempt(repo, host.run) == ("docs/plans/calc.md",)
    guard = CheckoutGuard(repo, repo / ".pm-agent" / "quarantine", exempt=plan_exempt(repo, host.run))
    ticket = guard.begin()
    edit(repo, V2)
    assert guard.check(ticket, "s1").changes == []
    assert (repo / "docs" / "plans" / "calc.md").read_text(encoding="utf-8") == V2
    (repo / "README.md").write_text("changed\n", encoding="utf-8")
    assert guard.check(ticket, "s2").changes == [f"README.md changed in the main checkout {guard.checkout}"]


def pm(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pm-agent", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run([exe, *args, "-C", str(repo)], capture_output=True, text=True, timeout=120, check=False)


def test_cli_applies_to_a_stopped_run(repo: Path, host: OfflineHost) -> None:
    complete(host.store, host.run.id, "1")
    host.store.close()  # the CLI is another process
    edit(repo, V2)
    result = pm(repo, "reconcile")
    assert result.returncode == 0, result.stderr
    assert f"run {host.run.id}: plan reconciled" in result.stdout
    for line in (
        "+ task-4 added: Division",
        "~ task-2 takes its new contract (still queued)",
        "- task-3 cancelled (removed from the plan)",
        "? task-1 changed while completed: escalated (continue, restart or re-open)",
    ):
        assert line in result.stdout
    store = open_store(default_store_path(repo))
    try:
        assert [(t.task_id, t.state) for t in store.list_tasks(host.run.id)] == [
            ("1", "completed"),
            ("2", "received"),
            ("3", "failed"),
            ("4", "received"),
        ]
        [esc] = store.list_escalations(host.run.id)
        store.answer_escalation(esc.id, "restart")
    finally:
        store.close()
    again = pm(repo, "reconcile")  # the same plan: nothing new; the answer is acted on
    assert again.returncode == 0, again.stderr
    assert "no task changed" in again.stdout
    assert "+ task-1-r1 queued (answer to a plan-change escalation)" in again.stdout
    store = open_store(default_store_path(repo))
    try:
        assert store.get_task(host.run.id, "1-r1").task().dependency_ids() == []  # restart: not after task-1
    finally:
        store.close()


def test_cli_refuses_a_broken_plan(repo: Path, host: OfflineHost) -> None:
    host.store.close()
    edit(repo, V1 + "\n### Task 2: Twice\nSame id.\n")
    result = pm(repo, "reconcile")
    assert result.returncode == 2
    assert "plan edit refused: " in result.stderr
    assert "calc.md:" in result.stderr
    assert "duplicate" in result.stderr.lower()


def test_cli_only_shows_while_a_run_holds_the_lock(repo: Path, host: OfflineHost) -> None:
    host.store.close()
    script = (
        "import sys, time\nfrom pathlib import Path\nfrom pm_agent.engine.runlock import run_lock\n"
        "with run_lock(Path(sys.argv[1]), 'run'):\n    print('locked', flush=True)\n    time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", script, str(repo)], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "locked"
            edit(repo, V2)
            result = pm(repo, "reconcile")
        finally:
            holder.kill()
    assert result.returncode == 0, result.stderr
    assert f"is running (pid {holder.pid}): it applies the edit itself at its next loop pass" in result.stdout
    assert "+ task-4 added: Division" in result.stdout
    store = open_store(default_store_path(repo))
    try:
        assert [t.task_id for t in store.list_tasks(host.run.id)] == ["1", "2", "3"]  # nothing written
        assert store.events_of_kind(host.run.id, [RECONCILED, REFUSED]) == []
    finally:
        store.close()


def test_progress_report_shows_plan_edits(repo: Path, host: OfflineHost) -> None:
    run_id, db = host.run.id, default_store_path(repo)
    assert "Plan edits" not in progress_text(db, run_id, "calc")
    edit(repo, V2)
    reconcile(host)
    edit(repo, V1 + "\n### Task 1: Again\nDuplicate.\n")
    reconcile(host)
    text = progress_text(db, run_id, "calc")
    line = next(x for x in text.splitlines() if x.startswith("Plan edits"))
    assert line.startswith("Plan edits: 1 applied, 1 refused (last refused: ")
    assert "calc.md:" in line
    # `pm-agent status` reads the state file without the store: the same line.
    from_file = read_state(default_store_path(repo), lambda con: file_progress_data(con, run_id, "calc"))
    assert render_progress(from_file).splitlines() == text.splitlines()
    edit(repo, V2)
    reconcile(host)
    line = next(x for x in progress_text(db, run_id, "calc").splitlines() if x.startswith("Plan edits"))
    assert line == "Plan edits: 2 applied, 1 refused (last no task changed)"


def test_a_plan_changing_while_it_is_read_is_not_applied(repo: Path, host: OfflineHost) -> None:
    # The loop hashed the file, then the editor's write landed before the parse: the sha it holds is not
    # the text it would parse. Nothing is applied or recorded, and the next look applies the settled text.
    store, run_id = host.store, host.run.id
    hashed = content_sha(repo / "docs" / "plans" / "calc.md")
    edit(repo, V1 + "\n### Task 5: Docs\nWrite docs.\n")
    out = reconcile(host, sha=hashed)
    assert (out.unsettled, out.diff) == (True, None)
    assert store.events_of_kind(run_id, [RECONCILED, REFUSED]) == []
    assert [t.task_id for t in store.list_tasks(run_id)] == ["1", "2", "3"]
    settled = reconcile(host)
    assert not settled.unsettled
    [event] = store.events_of_kind(run_id, [RECONCILED])
    assert (event.payload["added"], event.payload["sha"]) == (["5"], content_sha(repo / "docs" / "plans" / "calc.md"))


def test_a_broken_looking_half_written_plan_is_not_refused(repo: Path, host: OfflineHost) -> None:
    hashed = content_sha(repo / "docs" / "plans" / "calc.md")
    edit(repo, "")  # truncated, not yet written: would not parse
    out = reconcile(host, sha=hashed)
    assert (out.unsettled, out.error) == (True, "")
    assert host.store.events_of_kind(host.run.id, [RECONCILED, REFUSED]) == []


def test_the_loop_waits_for_a_young_plan_to_settle(repo: Path, host: OfflineHost) -> None:
    # Read between an editor's truncate and its write, the plan is empty: the loop must not refuse it (CI at
    # 7e94174), nor apply a half-written text that parses. It waits until the file is SETTLE_S old.
    sync = PlanSync(host)
    edit(repo, "")
    assert sync.poll() is False
    edit(repo, V1 + "\n### Task 5: Docs\nWrite docs.\n")
    assert sync.poll() is False
    assert host.store.events_of_kind(host.run.id, [RECONCILED, REFUSED]) == []
    settle(repo)
    assert sync.poll() is True
    [event] = host.store.events_of_kind(host.run.id, [RECONCILED, REFUSED])
    assert (event.kind, event.payload["added"]) == (RECONCILED, ["5"])
