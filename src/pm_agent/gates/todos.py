"""Gate 5, no orphan TODOs: every TODO/FIXME/HACK/XXX the change adds names its follow-up.

Only added lines count (old TODOs are not this task's). A follow-up is a plan task (`TODO(task-12)`,
`TODO: task-12`), an issue (`#123`) or a URL. With `known_task_ids`, a `task-<id>` that is
not in the plan does not count.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from pm_agent.gates.common import changes_for, is_ignored_path
from pm_agent.gates.models import GateId, GateResult
from pm_agent.vcs import ChangeSet

MARKER = re.compile(r"\b(TODO|FIXME|HACK|XXX)\b")
_TASK_REF = re.compile(r"\btask-([A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*)", re.IGNORECASE)
# Issue numbers and URLs. Tracker keys like PROJ-12 are not accepted: UTF-8 or SHA-256 would pass too.
_OTHER_REF = re.compile(r"(?<![\w&])#\d+\b|https?://\S+")


def follow_up(line: str, known_task_ids: Collection[str] | None = None) -> str | None:
    """The follow-up reference on a line (task, issue or URL), None when it has none (or an unknown task)."""
    other = _OTHER_REF.search(line)
    if other is not None:
        return other.group(0)
    for match in _TASK_REF.finditer(line):
        task_id = match.group(1)
        if known_task_ids is None or task_id in known_task_ids or task_id.lstrip("0") in known_task_ids:
            return match.group(0)
    return None


def gate_no_orphan_todos(
    worktree: Path | str,
    base: str,
    *,
    changes: ChangeSet | None = None,
    known_task_ids: Collection[str] | None = None,
) -> GateResult:
    """Gate 5: list `file:line` of added TODO/FIXME/HACK/XXX lines without a follow-up reference."""
    added = changes_for(worktree, base, changes).added
    linked: list[str] = []
    orphans: list[dict[str, str | int]] = []
    for path in sorted(added):
        if is_ignored_path(path):
            continue
        for number, text in added[path]:
            marker = MARKER.search(text)
            if marker is None:
                continue
            ref = follow_up(text, known_task_ids)
            if ref is None:
                orphans.append({"path": path, "line": number, "marker": marker.group(1), "text": text.strip()[:200]})
            else:
                linked.append(f"{path}:{number} -> {ref}")
    if not orphans:
        evidence = "no added TODO/FIXME/HACK/XXX without a follow-up"
        if linked:
            evidence += f"; linked: {', '.join(linked)}"
    else:
        lines = [f"{len(orphans)} added TODO/FIXME/HACK/XXX without a follow-up task, issue or URL:"]
        lines += [f"  {o['path']}:{o['line']}: {o['text']}" for o in orphans]
        hint = "task ids in the plan" if known_task_ids is not None else "task-<id>, #<issue> or a URL"
        lines.append(f"  reference one of: {hint}")
        evidence = "\n".join(lines)
    return GateResult(
        gate=GateId.NO_ORPHAN_TODOS,
        passed=not orphans,
        evidence=evidence,
        details={"orphans": orphans, "linked": linked},
    )


__all__ = ["MARKER", "follow_up", "gate_no_orphan_todos"]
