"""Gate 1, plan alignment: every acceptance criterion is mapped to a real line of the change, and every
file the contract says to create exists.

A mapping counts when its `path:line` (or `path:start-end`) names a file the change adds or modifies
and the line exists in that file. A mapping's `criterion` may repeat the criterion's text (case and
punctuation ignored; a distinctive part is enough) or give its 1-based number ("2", "AC2", "#2").
An expected file (`Create:`) counts as created when it exists in the worktree; a directory entry
(`src/pkg/`) or a glob (`docs/*.md`) when something in the change is under it or matches it.
"""

from __future__ import annotations

import re
from pathlib import Path

from pm_agent.gates.common import changes_for, norm_path
from pm_agent.gates.integrity import in_scope
from pm_agent.gates.models import AgentReport, CriterionMapping, GateId, GateResult, Payload
from pm_agent.plan.models import Task
from pm_agent.vcs import ChangeSet

_RANGE_SUFFIX = re.compile(r":\d+(?:-\d+)?$")
_INDEX = re.compile(r"^(?:ac|criterion|criteria|#)?\s*[-#]?\s*(\d+)$")
_MIN_PARTIAL = 12


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def matches_criterion(mapping_text: str, index: int, criterion: str) -> bool:
    """Whether a mapping's `criterion` field designates criterion number `index` (0-based) `criterion`."""
    number = _INDEX.match(mapping_text.strip().lower())
    if number is not None:
        return int(number[1]) == index + 1
    mine, theirs = _norm(criterion), _norm(mapping_text)
    if not theirs:
        return False
    if mine == theirs:
        return True
    return (len(theirs) >= _MIN_PARTIAL and theirs in mine) or (len(mine) >= _MIN_PARTIAL and mine in theirs)


def check_location(worktree: Path, mapping: CriterionMapping, changed: set[str]) -> str | None:
    """Why `mapping.location` is not a line of the change, or None when it is."""
    parsed = mapping.parsed()
    if parsed is None:
        return f"{mapping.location!r} is not 'path:line'"
    raw, first, last = parsed
    path = norm_path(worktree, raw)
    if path not in changed:
        return f"{path} is not added or modified by this change"
    file = worktree / path
    if not file.is_file():
        return f"{path} does not exist in the worktree"
    length = len(file.read_bytes().splitlines())
    if first < 1 or last > length:
        return f"{path}:{last if last > length else first} is beyond the end of the file ({length} lines)"
    return None


def missing_created_files(task: Task, worktree: Path, changed: list[str]) -> list[str]:
    """The contract's `Create:` entries that the change did not create."""
    missing: list[str] = []
    for raw in task.expected_files.create:
        entry = _RANGE_SUFFIX.sub("", norm_path(worktree, raw))
        if not entry:
            continue
        if entry.endswith("/") or any(c in entry for c in "*?["):
            created = any(in_scope(path, [entry], worktree) for path in changed)
        else:
            created = (worktree / entry).exists()
        if not created:
            missing.append(entry)
    return missing


def gate_plan_alignment(
    task: Task,
    worktree: Path | str,
    base: str,
    report: Payload,
    *,
    changes: ChangeSet | None = None,
) -> GateResult:
    """Gate 1: each acceptance criterion has a mapping to an existing line of a changed file."""
    root = Path(worktree)
    agent = AgentReport.from_payload(report)
    criteria = task.acceptance_criteria
    present = changes_for(root, base, changes).present()
    missing = missing_created_files(task, root, present)
    missing_lines = [f"  EXPECTED FILE NOT CREATED: {m} (the contract says to create it)" for m in missing]
    if not criteria:
        return GateResult(
            gate=GateId.PLAN_ALIGNMENT,
            passed=not missing,
            evidence="\n".join(["the task lists no acceptance criteria", *missing_lines]),
            details={"criteria": 0, "missing_files": missing},
        )
    changed = set(present)
    mapped: list[dict[str, str]] = []
    unmapped: list[str] = []
    bad: list[dict[str, str]] = []
    used: set[int] = set()
    for index, criterion in enumerate(criteria):
        candidates = [
            (i, m) for i, m in enumerate(agent.criteria_mapping) if matches_criterion(m.criterion, index, criterion)
        ]
        used.update(i for i, _ in candidates)
        good = None
        for _, mapping in candidates:
            problem = check_location(root, mapping, changed)
            if problem is None:
                good = mapping
                break
            bad.append({"criterion": criterion, "location": mapping.location, "problem": problem})
        if good is not None:
            mapped.append({"criterion": criterion, "location": good.location})
        elif not candidates:
            unmapped.append(criterion)
    failing = [c for c in criteria if c not in {m["criterion"] for m in mapped}]
    lines = [f"{len(mapped)}/{len(criteria)} acceptance criteria mapped to lines of the change"]
    lines += [f"  ok: {m['criterion']} -> {m['location']}" for m in mapped]
    lines += [f"  UNMAPPED: {c}" for c in unmapped]
    lines += [f"  BAD: {b['criterion']} -> {b['location']}: {b['problem']}" for b in bad if b["criterion"] in failing]
    extra = [m.location for i, m in enumerate(agent.criteria_mapping) if i not in used]
    if extra:
        lines.append(f"  (mappings matching no criterion: {', '.join(extra)})")
    lines += [f"  payload problem: {p}" for p in agent.problems if p.startswith("criteria")]
    lines += missing_lines
    return GateResult(
        gate=GateId.PLAN_ALIGNMENT,
        passed=not failing and not missing,
        evidence="\n".join(lines),
        details={
            "mapped": mapped,
            "unmapped": unmapped,
            "bad": bad,
            "failing": failing,
            "unmatched": extra,
            "missing_files": missing,
        },
    )


__all__ = ["check_location", "gate_plan_alignment", "matches_criterion", "missing_created_files"]
