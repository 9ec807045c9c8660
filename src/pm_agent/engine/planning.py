"""PLANNING_APPROACH: the PM plans the approach; a task too large for one session is sliced by the planner."""

from __future__ import annotations

from pm_agent.engine.history import TaskHistory
from pm_agent.engine.routing import Decision, NextSession
from pm_agent.engine.runctx import RunContext
from pm_agent.engine.slicing import parse_slices, slice_task
from pm_agent.lifecycle import IssueState
from pm_agent.signals import CompleteSignal
from pm_agent.store import TaskRecord

S = IssueState
SLICED = "task.sliced"


async def planning_step(rc: RunContext, rec: TaskRecord, history: TaskHistory) -> Decision:
    """A vague task goes to the analyst, a large one to the planner (once), any other to one developer."""
    task = rec.task()
    vague = not task.acceptance_criteria and not task.steps and not task.expected_files.all_paths()
    if vague and history.latest_report(("analyst",)) is None:
        return Decision(S.ANALYZING_REQUIREMENTS, "no criteria, steps or files: requirements need analysis")
    files = task.expected_files.all_paths()
    if len(files) > rc.config.patch_size_limit_files and not history.events(SLICED):
        return Decision(None, then=NextSession("planner", slices=True))
    return Decision(S.IMPLEMENTING, f"approach: one developer session for {len(files)} expected files")


def apply_slices(rc: RunContext, rec: TaskRecord, signal: CompleteSignal) -> Decision:
    """The planner's slices become subtasks that run first (the task keeps the last slice), or one developer
    works through them in order when they do not parse as slices."""
    task = rec.task()
    files = task.expected_files.all_paths()
    limit = rc.config.patch_size_limit_files
    rc.store.append_event(rc.run_id, SLICED, {"slices": signal.summary, "files": len(files)}, task_id=rec.task_id)
    pieces = parse_slices(signal.summary)
    if pieces is None:
        return Decision(S.IMPLEMENTING, f"{len(files)} files > {limit}: slices given to one developer", consume=True)
    subtasks, narrowed = slice_task(task, pieces)
    rc.store.add_tasks(rc.run_id, subtasks, reason=f"{task.ref} sliced by the planner")
    rc.store.update_task(
        rc.run_id,
        rec.task_id,
        event="task.narrowed",
        contract=narrowed.model_dump(mode="json"),
        decision_log=narrowed.decision_log,
    )
    message = (
        f"task-{rec.task_id}: {len(files)} files > {limit}; subtasks "
        + ", ".join(t.ref for t in subtasks)
        + " first, then this task keeps the last slice"
    )
    # The task waits in planning_approach for its subtasks (TaskFlow.drive checks its dependencies).
    return Decision(None, consume=True, note=(SLICED, message))
