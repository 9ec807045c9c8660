"""The task graph: explicit dependencies resolved, inferred ones added (infer.py), cycle checks, the queue."""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import fastpath
from pm_agent.plan.draft import Blocked
from pm_agent.plan.fields import canonical_id
from pm_agent.plan.infer import infer_edges
from pm_agent.plan.models import Dependency, Task, Tier

TIER_PRIORITY: dict[Tier, int] = {Tier.CRITICAL: 0, Tier.NORMAL: 1, Tier.LOW: 2}


# `1-3`, and ranges of dotted ids sharing their prefix: `1.2.2-1.2.9` (or `1.2.2-9`).
_RANGE_REF = re.compile(r"^(?P<prefix>(?:\d+\.)*)(?P<low>\d+)\s*[-–—]\s*(?:(?P=prefix))?(?P<high>\d+)$")


def range_ids(ref: str) -> list[str] | None:
    """The ids a range reference spans (`1-3`: 1, 2, 3; `1.2-4`: 1.2, 1.3, 1.4), or None for any other reference."""
    match = _RANGE_REF.match(ref)
    if match is None:
        return None
    prefix, low, high = match.group("prefix"), int(match.group("low")), int(match.group("high"))
    return [f"{prefix}{n}" for n in range(low, high + 1)] if 0 < high - low <= 500 else None


def _targets(ref: str, by_key: Mapping[str, str]) -> list[str] | None:
    """Task ids a reference names: one, several for a range (`Tasks 1-3`) when no task has that id, or None."""
    target = by_key.get(canonical_id(ref))
    if target is not None:
        return [target]
    ids = [by_key.get(canonical_id(i)) for i in range_ids(ref) or []]
    return [i for i in ids if i is not None] if ids and all(ids) else None


def _explicit(task: Task, by_key: Mapping[str, str], path: Path | str | None) -> dict[str, Dependency]:
    deps: dict[str, Dependency] = {}
    where = task.source or path
    for dep in task.depends_on:
        targets = _targets(dep.task_id, by_key)
        if targets is None:
            raise _unknown(task, dep.task_id, where)
        for target in targets:
            if target == task.id:
                raise PlanError(f"Task {task.id} depends on itself", path=where, line=task.line)
            if target not in deps:  # most references name the id as it is: no copy for those
                deps[target] = dep if dep.task_id == target else dep.model_copy(update={"task_id": target})
    return deps


def _unknown(task: Task, ref: str, where: Path | str | None) -> PlanError:
    """The error of a dependency on a task the plan does not have, at the task's line."""
    said = f"Task {task.id} depends on Task {ref}, which is not in the plan{_beside(where, ref)}"
    return PlanError(said, path=where, line=task.line)


def _beside(where: Path | str | None, ref: str) -> str:
    """A hint when the plan is one file of a folder of task files and the task named is in one beside it."""
    plan = Path(where) if where is not None else None
    if plan is None or not plan.is_file():
        return ""
    wanted = canonical_id(ref)
    for sibling in sorted(plan.parent.glob("*.md")):
        named = _FILE_ID.match(sibling.stem)
        if sibling != plan and named is not None and canonical_id(named.group(1)) == wanted:
            return f" ({sibling.name} is beside it: to read the folder's files as one plan, give pm-agent the folder)"
    return ""


def add_blocked(tasks: list[Task], blocked: Sequence[Blocked], path: Path | str | None = None) -> list[Task]:
    """The tasks with each `**Blocks:** Task 5` of Task 4 added to Task 5's dependencies (noted as from that line).

    The reference resolves as a `Depends on` one does (ranges too); PlanError for a task the plan does not have.
    """
    if not blocked:
        return tasks
    by_key = {canonical_id(t.id): t.id for t in tasks}
    extra: dict[str, list[Dependency]] = {}
    for block in blocked:
        where = block.source or path
        targets = _targets(block.ref.task_id, by_key)
        if targets is None:
            said = f"Task {block.task_id} blocks Task {block.ref.task_id}, which is not in the plan"
            raise PlanError(said + _beside(where, block.ref.task_id), path=where, line=block.line)
        for target in targets:
            if target == block.task_id:
                raise PlanError(f"Task {target} blocks itself", path=where, line=block.line)
            note = f"from Task {block.task_id}'s Blocks line" + (f": {block.ref.note}" if block.ref.note else "")
            extra.setdefault(target, []).append(Dependency(task_id=block.task_id, note=note))
    updated: list[Task] = []
    for task in tasks:
        named = {canonical_id(dep.task_id) for dep in task.depends_on}
        new = [dep for dep in extra.get(task.id, []) if canonical_id(dep.task_id) not in named]
        updated.append(task.model_copy(update={"depends_on": [*task.depends_on, *new]}) if new else task)
    return updated


_FILE_ID = re.compile(r"^(?:task[-_ ]?)?(\d+[a-z]?)(?=$|[-_. ])", re.IGNORECASE)  # `task-06-title`, `06_title`


def resolve(tasks: Sequence[Task], path: Path | str | None = None) -> tuple[list[Task], list[str]]:
    """Copies of the tasks with references resolved to task ids and ordering edges inferred, plus warnings.

    Warnings (`file:line: ...`) record inferred edges skipped because they would close a cycle. Raises
    PlanError for a self-dependency, an unknown reference (line of the referring task) or a cycle of
    explicit edges (message names it, line of its first task in plan order).
    """
    edges, logs, warnings = resolve_edges(tasks, path)
    resolved = [
        task.model_copy(update={"depends_on": deps, "decision_log": [*task.decision_log, *log]})
        for task, deps, log in zip(tasks, edges, logs, strict=True)
    ]
    check_cycles(resolved, path)
    return resolved, warnings


def resolve_edges(
    tasks: Sequence[Task], path: Path | str | None = None
) -> tuple[list[list[Dependency]], list[list[str]], list[str]]:
    """Per task its resolved dependencies and the lines they add to its log, and the plan's warnings.

    `resolve` without the copies and without the cycle check (run `check_cycles` on the tasks once
    they carry these dependencies).
    """
    by_key = {canonical_id(t.id): t.id for t in tasks}
    explicit = [_explicit(task, by_key, path) for task in tasks]
    inferred = infer_edges(tasks, explicit)
    edges: list[list[Dependency]] = []
    logs: list[list[str]] = []
    warnings: list[str] = []
    for task, deps, found, skipped in zip(tasks, explicit, inferred.edges, inferred.skipped, strict=True):
        by_reason: dict[str, list[str]] = {}
        for dep in found:
            by_reason.setdefault(dep.reason, []).append(f"Task {dep.task_id}")
        log = [f"depends on {', '.join(ids)} (inferred: {reason})" for reason, ids in by_reason.items()]
        log.extend(skipped)
        warnings.extend(f"{task.source or path}:{task.line}: {note}" for note in skipped)
        edges.append([*deps.values(), *found])
        logs.append(log)
    return edges, logs, warnings


def resolve_dependencies(tasks: Sequence[Task], path: Path | str | None = None) -> list[Task]:
    """Copies of the tasks with references resolved to task ids and inferred edges added (see `resolve`)."""
    return resolve(tasks, path)[0]


def _sorter(tasks: Sequence[Task], path: Path | str | None) -> TopologicalSorter[str]:
    known = {t.id for t in tasks}
    sorter: TopologicalSorter[str] = TopologicalSorter()
    for task in tasks:
        for dep in task.depends_on:
            if dep.task_id not in known:
                raise _unknown(task, dep.task_id, task.source or path)
        sorter.add(task.id, *task.dependency_ids())
    return sorter


def check_cycles(tasks: Sequence[Task], path: Path | str | None = None) -> None:
    """PlanError naming the cycle, e.g. `dependency cycle: Task 2 -> Task 4 -> Task 2`."""
    _prepared(tasks, path)


def _prepared(tasks: Sequence[Task], path: Path | str | None) -> TopologicalSorter[str]:
    """The tasks' sorter, prepared; PlanError naming the cycle when there is one."""
    sorter = _sorter(tasks, path)
    try:
        sorter.prepare()
    except CycleError as exc:
        raise _cycle_error(exc, tasks, path) from None
    return sorter


def _cycle_error(exc: CycleError, tasks: Sequence[Task], path: Path | str | None) -> PlanError:
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
    first = by_id[cycle[0]]
    return PlanError(message, path=first.source or path, line=first.line)


def execution_queue(tasks: Sequence[Task], path: Path | str | None = None) -> list[str]:
    """Task ids in topological order; among ready tasks CRITICAL > NORMAL > LOW, then plan order.

    PlanError for a cycle, as `check_cycles` says it.
    """
    if fastpath.ENABLED:
        plain = _plain_queue(tasks)
        if plain is not None:
            return plain
    sorter = _prepared(tasks, path)
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


def _plain_queue(tasks: Sequence[Task]) -> list[str] | None:
    """`execution_queue` over task positions instead of graphlib's nodes (a third of the time); None when an
    id repeats, a dependency is no task of the plan or the dependencies close a cycle: the sorter says which.

    A task is ready once every dependency edge into it is done, each edge counted as often as it is
    written, as the sorter counts them; the heap orders the ready tasks as the sorter's queue does.
    """
    position = {task.id: i for i, task in enumerate(tasks)}
    if len(position) != len(tasks):
        return None
    waiting = [0] * len(tasks)  # dependency edges not done yet
    dependents: list[list[int]] = [[] for _ in tasks]
    for i, task in enumerate(tasks):
        for dep in task.depends_on:
            j = position.get(dep.task_id)
            if j is None:
                return None
            dependents[j].append(i)
        waiting[i] = len(task.depends_on)
    ready = [(TIER_PRIORITY[task.tier], i) for i, task in enumerate(tasks) if not waiting[i]]
    heapq.heapify(ready)
    queue: list[str] = []
    while ready:
        i = heapq.heappop(ready)[1]
        queue.append(tasks[i].id)
        for k in dependents[i]:
            waiting[k] -= 1
            if not waiting[k]:
                heapq.heappush(ready, (TIER_PRIORITY[tasks[k].tier], k))
    return queue if len(queue) == len(tasks) else None
