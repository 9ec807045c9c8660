"""The task graph: explicit and inferred dependencies, cycle checks, and the execution queue."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan.fields import canonical_id
from pm_agent.plan.models import Dependency, Task, Tier

TIER_PRIORITY: dict[Tier, int] = {Tier.CRITICAL: 0, Tier.NORMAL: 1, Tier.LOW: 2}


def _creators(tasks: Sequence[Task]) -> dict[str, int]:
    """Path -> index of the first task that creates it."""
    created: dict[str, int] = {}
    for index, task in enumerate(tasks):
        for path in task.expected_files.create:
            created.setdefault(path, index)
    return created


def _inferred(tasks: Sequence[Task], index: int, created: dict[str, int]) -> list[Dependency]:
    """Edges from file overlap: this task modifies, deletes or tests a file an earlier task creates."""
    task = tasks[index]
    found: dict[str, Dependency] = {}
    files = task.expected_files
    for verb, paths in (("modifies", files.modify), ("deletes", files.delete), ("tests", files.test)):
        for path in paths:
            creator = created.get(path)
            if creator is None or creator >= index:
                continue
            dep_id = tasks[creator].id
            if dep_id not in found:
                reason = f"{verb} {path} created by Task {dep_id}"
                found[dep_id] = Dependency(task_id=dep_id, inferred=True, reason=reason)
    return list(found.values())


def resolve_dependencies(tasks: Sequence[Task], path: Path | str | None = None) -> list[Task]:
    """Copies of the tasks with references resolved to task ids and inferred edges added.

    Raises PlanError for a self-dependency, an unknown reference (line of the referring task) or a
    cycle (message names it, line of its first task in plan order).
    """
    by_key = {canonical_id(t.id): t.id for t in tasks}
    created = _creators(tasks)
    resolved: list[Task] = []
    for index, task in enumerate(tasks):
        deps: dict[str, Dependency] = {}
        for dep in task.depends_on:
            target = by_key.get(canonical_id(dep.task_id))
            if target is None:
                raise PlanError(
                    f"Task {task.id} depends on Task {dep.task_id}, which is not in the plan",
                    path=path,
                    line=task.line,
                )
            if target == task.id:
                raise PlanError(f"Task {task.id} depends on itself", path=path, line=task.line)
            deps.setdefault(target, dep.model_copy(update={"task_id": target}))
        log = list(task.decision_log)
        for dep in _inferred(tasks, index, created):
            if dep.task_id not in deps:
                deps[dep.task_id] = dep
                log.append(f"depends on Task {dep.task_id} (inferred: {dep.reason})")
        resolved.append(task.model_copy(update={"depends_on": list(deps.values()), "decision_log": log}))
    check_cycles(resolved, path)
    return resolved


def _sorter(tasks: Sequence[Task], path: Path | str | None) -> TopologicalSorter[str]:
    known = {t.id for t in tasks}
    sorter: TopologicalSorter[str] = TopologicalSorter()
    for task in tasks:
        for dep in task.depends_on:
            if dep.task_id not in known:
                raise PlanError(
                    f"Task {task.id} depends on Task {dep.task_id}, which is not in the plan",
                    path=path,
                    line=task.line,
                )
        sorter.add(task.id, *task.dependency_ids())
    return sorter


def check_cycles(tasks: Sequence[Task], path: Path | str | None = None) -> None:
    """PlanError naming the cycle, e.g. `dependency cycle: Task 2 -> Task 4 -> Task 2`."""
    try:
        _sorter(tasks, path).prepare()
    except CycleError as exc:
        # graphlib lists each node before its dependent; read it backwards: "X -> Y" = X depends on Y.
        nodes: list[str] = list(reversed(exc.args[1][:-1]))
        order = {t.id: i for i, t in enumerate(tasks)}
        start = min(range(len(nodes)), key=lambda i: order[nodes[i]])
        cycle = [*nodes[start:], *nodes[:start], nodes[start]]
        by_id = {t.id: t for t in tasks}
        inferred = [
            f"Task {a} -> Task {b} inferred: {dep.reason}"
            for a, b in pairwise(cycle)
            for dep in by_id[a].depends_on
            if dep.task_id == b and dep.inferred
        ]
        message = "dependency cycle: " + " -> ".join(f"Task {n}" for n in cycle)
        if inferred:
            message += f" ({'; '.join(inferred)})"
        raise PlanError(message, path=path, line=by_id[cycle[0]].line) from None


def execution_queue(tasks: Sequence[Task], path: Path | str | None = None) -> list[str]:
    """Task ids in topological order; among ready tasks CRITICAL > NORMAL > LOW, then plan order."""
    check_cycles(tasks, path)
    sorter = _sorter(tasks, path)
    sorter.prepare()
    rank = {t.id: (TIER_PRIORITY[t.tier], i) for i, t in enumerate(tasks)}
    ready: list[tuple[int, int, str]] = []
    queue: list[str] = []
    while sorter.is_active():
        for task_id in sorter.get_ready():
            heapq.heappush(ready, (*rank[task_id], task_id))
        _, _, task_id = heapq.heappop(ready)
        queue.append(task_id)
        sorter.done(task_id)
    return queue
