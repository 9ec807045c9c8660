"""The two documents of a request: their names, the requirements' scenarios and hash, the plan's check.

    paths = IntakePaths.of("Add a word count", date(2026, 11, 26))
    paths.design_rel  # docs/plans/2026-11-26-add-a-word-count-design.md
    problems = requirements_problems(text)                    # [] when the analyst's doc is usable
    check = check_plan(plan_file, design_file, repo, scenario_ids(text))

Scenarios are headings `### S1: <name>` (or `### Scenario S1: <name>`) followed by Given/When/Then
lines; a plan task traces one by naming its id (`S1`) in an acceptance criterion. Pure functions
over text and files: the intake flow (flow.py) decides what to do with what they find.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pm_agent.errors import PlanError
from pm_agent.plan import Plan, Tier, load_plan, plan_id_from_path

__all__ = [
    "IntakePaths",
    "PlanCheck",
    "check_plan",
    "requirements_hash",
    "requirements_problems",
    "scenario_ids",
    "slug_of",
]

_SCENARIO = re.compile(r"^#{2,4}\s*(?:scenario\s+)?(S\d+)\b\s*[:.\-—]?\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#{1,4}\s", re.MULTILINE)
_STEP = {"given": re.compile(r"^\W*given\b", re.I), "when": re.compile(r"^\W*when\b", re.I)}
_THEN = re.compile(r"^\W*then\b", re.I)
SECTIONS = ("contexts", "observables", "non-goals", "open questions")
MAX_SLUG = 48


def slug_of(request: str) -> str:
    """A short file-name slug of the request's first line: `Add a --json flag!` -> `add-a-json-flag`."""
    first = (request.strip().splitlines() or [""])[0].lower()
    words = re.sub(r"[^a-z0-9]+", " ", first).split()
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > MAX_SLUG:
            break
        slug = f"{slug}-{word}" if slug else word
    return slug or "request"


@dataclass(frozen=True)
class IntakePaths:
    """Where a request's requirements and plan live, relative to the repository (and its worktrees)."""

    day: str
    slug: str

    @classmethod
    def of(cls, request: str, day: date, slug: str | None = None) -> IntakePaths:
        """The paths for a request made on `day`; `slug` overrides the one made from the request."""
        return cls(day.isoformat(), slug or slug_of(request))

    @property
    def design_rel(self) -> str:
        """`docs/plans/<date>-<slug>-design.md`: the requirements (the run's design doc)."""
        return f"docs/plans/{self.day}-{self.slug}-design.md"

    @property
    def plan_rel(self) -> str:
        """`docs/plans/<date>-<slug>.md`: the plan `pm-agent run` reads."""
        return f"docs/plans/{self.day}-{self.slug}.md"

    @property
    def plan_id(self) -> str:
        """The plan id `pm-agent run` gives the plan file (its working branch is named after it)."""
        return plan_id_from_path(Path(self.plan_rel).stem)


def scenario_ids(text: str) -> list[str]:
    """The scenario ids of a requirements doc, in order, without repeats (`S1`, `S2`, ...)."""
    seen: dict[str, None] = {}
    for match in _SCENARIO.finditer(text):
        seen.setdefault(match.group(1).upper(), None)
    return list(seen)


def _scenario_bodies(text: str) -> dict[str, str]:
    """Each scenario's text, from its heading to the next heading."""
    bodies: dict[str, str] = {}
    for match in _SCENARIO.finditer(text):
        rest = text[match.end() :]
        nxt = _HEADING.search(rest)
        bodies.setdefault(match.group(1).upper(), rest[: nxt.start()] if nxt else rest)
    return bodies


def requirements_problems(text: str) -> list[str]:
    """What makes a requirements doc unusable for planning; [] when it is usable."""
    if not text.strip():
        return ["the requirements doc is empty or missing"]
    problems: list[str] = []
    bodies = _scenario_bodies(text)
    if not bodies:
        problems.append("no BDD scenario found: write each as a heading `### S1: <name>` with Given/When/Then lines")
    for sid, body in bodies.items():
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        missing = [word for word, rx in _STEP.items() if not any(rx.match(line) for line in lines)]
        if not any(_THEN.match(line) for line in lines):
            missing.append("then")
        if missing:
            problems.append(f"scenario {sid} has no {'/'.join(m.capitalize() for m in missing)} line")
    lowered = text.lower()
    absent = [name for name in SECTIONS if not re.search(rf"^#{{1,4}}\s*{re.escape(name)}\b", lowered, re.M)]
    if absent:
        problems.append("missing section(s): " + ", ".join(f"`## {name.capitalize()}`" for name in absent))
    return problems


def requirements_hash(text: str) -> str:
    """The sha256 of the requirements as locked (line endings normalised, so a checkout's CRLF is no change)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


@dataclass
class PlanCheck:
    """What pm-agent's own reading of the plan found: the plan, or the problems to send back."""

    plan: Plan | None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The plan parsed, has no cycle, and traces every scenario."""
        return self.plan is not None and not self.problems

    def message(self) -> str:
        """The problems, one a line, as the planner (or the human) reads them."""
        return "\n".join(f"- {p}" for p in self.problems)


def _mentions(text: str, sid: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(sid)}(?![0-9])", text, re.IGNORECASE) is not None


def check_plan(plan_file: Path, design_file: Path | None, repo: Path, scenarios: list[str]) -> PlanCheck:
    """Parse the plan with pm-agent's parser (a parse error or a cycle is a PlanError, kept verbatim),
    then check that every task traces a scenario and names a test, and every scenario has a task."""
    if not plan_file.is_file():
        return PlanCheck(None, [f"{plan_file}: the plan file does not exist; write it there"])
    try:
        plan = load_plan(plan_file, design_file, repo)
    except PlanError as exc:
        return PlanCheck(None, [str(exc)])
    problems: list[str] = []
    for task in plan.tasks:
        where = f"{plan_file}:{task.line}: task {task.id} ({task.title})"
        criteria = " ".join(task.acceptance_criteria)
        if not task.acceptance_criteria:
            problems.append(f"{where} has no acceptance criteria")
        elif not any(_mentions(criteria, sid) for sid in scenarios):
            problems.append(f"{where}: no acceptance criterion names a scenario ({', '.join(scenarios)})")
        if not (task.tests_to_add or task.expected_files.test) and task.tier is not Tier.LOW:
            # A LOW task (docs, config) gets pm-agent's diff check instead of test gates: it may add no test.
            problems.append(f"{where} names no test to add (`**Tests to add:**` or a `Test:` file; only LOW may not)")
        if not task.expected_files.all_paths():
            problems.append(f"{where} lists no files (`**Files:**`)")
    for sid in scenarios:
        if not any(_mentions(" ".join(t.acceptance_criteria), sid) for t in plan.tasks):
            problems.append(f"scenario {sid} is covered by no task: name it in a task's acceptance criteria")
    return PlanCheck(plan, problems)
