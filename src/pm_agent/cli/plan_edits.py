"""`pm-agent reconcile`: apply an edited plan to a stopped run, or show what a running one will do with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from pm_agent.cli.app import RepoOption, RunOption, call, err, out, repo_root

if TYPE_CHECKING:
    from pm_agent.engine.plandiff import PlanDiff


def _diff_lines(diff: PlanDiff) -> list[str]:
    lines = [f"  + task-{t.id} added: {t.title}" for t in diff.added]
    lines += [f"  ~ task-{t.id} takes its new contract (still queued)" for t in diff.updated]
    lines += [f"  - task-{t} cancelled (removed from the plan)" for t in diff.cancelled]
    lines += [
        f"  ? task-{c.task_id} {c.kind.value} while {c.state.value}: escalated (continue, restart or re-open)"
        for c in diff.escalated
    ]
    return lines or ["  no task changed"]


def reconcile_cmd(repo: RepoOption = None, run: RunOption = None) -> None:
    """Re-read the run's plan and apply the differences by task id (a plan edited while it runs).

    Added tasks are queued, queued tasks take their new text, queued tasks removed from the plan are
    cancelled, and a change to a task that is running, waiting or completed becomes an escalation
    (`pm-agent answer ID continue|restart|re-open`). A plan that no longer parses is refused as a whole
    (exit 2), and the run keeps its last good version. While a pm-agent process runs the plan, nothing
    is written here: that process sees the edited file at its next loop pass and applies it itself.
    """
    from pm_agent.engine.plansync import reconcile_repo

    root = repo_root(repo)
    found = call(lambda: reconcile_repo(root, run))
    if found.live is not None:
        out.print(
            f"run {found.run_id} is running (pid {found.live.get('pid', '?')}): it applies the edit itself at its "
            "next loop pass. What it will find:",
            highlight=False,
        )
    elif found.diff is not None:
        out.print(f"run {found.run_id}: plan reconciled", highlight=False)
    if found.diff is None:
        err.print(f"plan edit refused: {found.error}; the run keeps its last good version", highlight=False)
        raise typer.Exit(2)
    for line in _diff_lines(found.diff):
        out.print(line, highlight=False)
    for task_id in found.follow_ups:
        out.print(f"  + task-{task_id} queued (answer to a plan-change escalation)", highlight=False)
    if found.diff.escalated:
        out.print("Answer with `pm-agent answer ID continue|restart|re-open` (see `pm-agent escalations`).")
    if found.live is None and (found.diff.added or found.diff.updated or found.follow_ups):
        out.print("`pm-agent resume` runs the queued tasks.")
