"""Ordering edges the plan implies without saying: plans written for one-at-a-time execution.

A later task sees the earlier tasks' changes, so:

- a task that modifies, tests or deletes a file an earlier task writes (creates, modifies, tests or
  deletes) depends on the latest such task: *read/write after write*;
- a task with no files whose title or steps say it verifies, re-runs, checks or evaluates the whole
  (final verification, probes, full test runs) depends on every earlier task.

Edges only point from a later task to an earlier one. When an explicit edge already makes the earlier
task wait for the later one, the inferred edge would close a cycle: it is skipped and the skip recorded.
`**Depends on:** none` turns inference off for that task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pm_agent.plan.models import Dependency, Task

# A title that says the task checks the work: `Final verification`, `Re-run security probes`,
# `Manual smoke test`, `Validate from the new location`, `Live evals`, `Consistency sweep and full gates`.
_VERIFY_TITLE = re.compile(
    r"\b(?:verif(?:y|ies|ied|ying|ication)|validat(?:e|es|ed|ing|ion)|re-?runs?|re-?running|checks?|checking"
    r"|evaluat(?:e|es|ed|ing|ion)|evals?|probes?|smoke[- ]?tests?|full[- ](?:test|suite|run|gate|check)\w*"
    r"|test[- ]suite|all (?:the )?tests|regression|sweep|final|end[- ]to[- ]end|e2e)\b"
    # Chinese titles (`验证文件结构`, `最终检查`): no spaces between words, so no \b either.
    r"|验证|校验|回归测试|冒烟测试|全面测试|端到端|最终",
    re.IGNORECASE,
)
# ... unless it builds something: `Add compile-time validation`, `Create the test suite`.
_BUILD_VERB = re.compile(
    r"^(?:add|adopt|align|allow|build|configure|convert|create|define|delete|design|document|enable|expose"
    r"|extract|fix|generate|implement|improve|install|integrate|introduce|lift|make|migrate|move|optimi[sz]e"
    r"|port|refactor|remove|rename|replace|restructure|rewrite|set ?up|simplify|split|support|update|upgrade"
    r"|wire|write)\b"
    r"|^(?:添加|创建|新建|实现|编写|构建|新增|修复|重构|更新|迁移|提取|集成|安装|配置|移除|删除|替换|支持|重写)"
    # Chinese titles also put the verb last: `数据验证逻辑实现` (the data validation logic, implemented).
    r"|(?:实现|开发|编写|构建|创建|添加|新增|集成|重构|修复|支持)\W*$",
    re.IGNORECASE,
)
# ... though a title that names the final check is one whatever its first verb: `Remove stubs and final
# verification` (a public plan's last task, run fourth of sixteen before this).
# The phrase ends the title (`Add the final review notes template` builds something).
_FINAL_CHECK = re.compile(
    r"\bfinal\s+(?:verification|validation|checks?|review|tests?|sweep|pass)\W*$|最终(?:验证|检查|校验)\W*$",
    re.IGNORECASE,
)
# A step whose scope is the whole: `Run the full test suite`, `Re-run all probes`, `Final review`.
_VERIFY_STEP = re.compile(
    r"\b(?:full|entire|whole|complete)\s+(?:test|suite|verification|check|gate|run|regression)"
    r"|\ball\s+(?:the\s+)?(?:tests|checks|gates|suites|probes)\b|\bre-?run\b.*\b(?:all|suite|probes|checks|tests)\b"
    r"|\bregression\s+(?:tests?|suite|gates?|runs?|checks?)\b|\bprobes\b|\bfinal\s+(?:verification|check|review|test)",
    re.IGNORECASE,
)
_WRITER_VERB = {"create": "creates", "modify": "modifies", "test": "changes", "delete": "deletes"}


@dataclass
class Inferred:
    """Per task, in plan order: the inferred edges, and the edges skipped because they would close a cycle."""

    edges: list[list[Dependency]] = field(default_factory=list)
    skipped: list[list[str]] = field(default_factory=list)


def verification_reason(task: Task) -> str | None:
    """Why a task counts as a whole-plan verification (no files; title or a step says so), else None."""
    files = task.expected_files
    if files.create or files.modify or files.delete or files.test:  # all_paths() without making it
        return None
    title = task.title.strip()
    if _VERIFY_TITLE.search(title) and (not _BUILD_VERB.search(title) or _FINAL_CHECK.search(title)):
        return f"verification task ({title!r}) runs after every earlier task"
    for step in task.steps:
        if _VERIFY_STEP.search(step):
            return f"verification step ({step!r}) runs after every earlier task"
    return None


def _file_edges(task: Task, writers: Mapping[str, tuple[int, str]], tasks: Sequence[Task]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    files = task.expected_files
    for verb, paths in (("modifies", files.modify), ("deletes", files.delete), ("tests", files.test)):
        for path in paths:
            writer = writers.get(path)
            if writer is None:
                continue
            index, kind = writer
            if kind == "create":
                reason = f"{verb} {path} created by Task {tasks[index].id}"
            else:
                reason = f"{verb} {path}, which Task {tasks[index].id} {_WRITER_VERB[kind]} earlier in the plan"
            found.append((index, reason))
    return found


def _reaches(graph: Sequence[Sequence[int]], start: int, goal: int) -> bool:
    """True when task `start` (transitively) depends on task `goal`."""
    seen = {start}
    stack = [start]
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def infer_edges(tasks: Sequence[Task], explicit: Sequence[Mapping[str, Dependency]]) -> Inferred:
    """The ordering edges of every task, given each task's explicit (resolved) dependencies by id."""
    position = {t.id: i for i, t in enumerate(tasks)}
    graph: list[list[int]] = [[position[d] for d in deps if d in position] for deps in explicit]
    # Only an explicit edge from an earlier task to a later one can make an inferred edge close a cycle.
    backward = any(dep > i for i, deps in enumerate(graph) for dep in deps)
    writers: dict[str, tuple[int, str]] = {}
    result = Inferred()
    for index, task in enumerate(tasks):
        edges: dict[str, Dependency] = {}
        skipped: list[str] = []
        if not task.declared_independent:
            candidates = _file_edges(task, writers, tasks)
            why = verification_reason(task)
            if why is not None:
                candidates.extend((earlier, why) for earlier in range(index))
            for earlier, reason in candidates:
                dep_id = tasks[earlier].id
                if dep_id in edges or dep_id in explicit[index] or earlier == index:
                    continue
                if backward and _reaches(graph, earlier, index):
                    skipped.append(
                        f"Task {task.id} -> Task {dep_id} not inferred ({reason}): Task {dep_id} already "
                        f"depends on Task {task.id}, so the edge would close a cycle"
                    )
                    continue
                edges[dep_id] = Dependency(task_id=dep_id, inferred=True, reason=reason)
                graph[index].append(earlier)
        files = task.expected_files
        for kind, paths in (("create", files.create), ("modify", files.modify), ("test", files.test)):
            for path in paths:
                writers[path] = (index, kind)
        for path in files.delete:
            writers[path] = (index, "delete")
        result.edges.append(list(edges.values()))
        result.skipped.append(skipped)
    return result
