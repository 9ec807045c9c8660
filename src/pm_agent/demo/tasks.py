"""The demo plan: each task's plan entry and the work the scripted agents do for it, from data/tasks.yaml.

One source of truth: `project.render_plan` writes the plan markdown from `DEMO_TASKS`, and the brain
(`brain.DemoBrain`) writes these files and maps these criteria, so the two cannot drift apart.

What the run shows:
- Task 1 (input validation, CRITICAL) is ready first and runs alone, with a reviewer.
- Tasks 2 → 3 → 4 → 5 → 6 form a dependency chain (tokenize → counts → readability → API → CLI).
- Task 3's first developer attempt runs only the old tests and claims they pass; its new test fails.
  pm-agent's own test run catches it (gates 2 and 3), the fixer adds the missing rule.
- Task 6's developer first asks whether the CLI should print JSON or a plain table by default
  (needs-user-input), then builds what the answer says (`DEMO_ANSWERS`).
- Tasks 7, 8 and 9 are LOW, independent, each in its own ownership area (docs, config, changelog): they
  share the slots and run in parallel, brought forward by the anti-starvation rule after three
  CRITICAL/NORMAL completions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pm_agent.demo.content import project_file, tasks_document

__all__ = [
    "DEMO_ANSWERS",
    "DEMO_TASKS",
    "Criterion",
    "DemoTask",
    "Question",
    "ReviewText",
    "criteria_mapping",
    "demo_task",
    "json_default",
    "line_of",
]


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion and where the task's files meet it: the first line holding an anchor."""

    text: str
    path: str
    anchors: tuple[str, ...]


@dataclass(frozen=True)
class ReviewText:
    """Gate 6's review note: what changed, the risks, how to roll it back."""

    summary: str
    risks: tuple[str, ...]
    rollback: str


@dataclass(frozen=True)
class Question:
    """A needs-user-input question a developer asks before it starts."""

    question: str
    context: str


@dataclass(frozen=True)
class DemoTask:
    """One plan task and its scripted work.

    `files` are the final contents (created and modified files, then tests) in the order the agent
    writes them; `files_by_format` ("json", "table") replaces them when the content depends on the
    output format the user's answer chooses (`json_default`).
    `first_attempt` overrides files on the developer's first attempt, which then runs only
    `first_attempt_tests` (the deliberate slip a gate must catch).
    """

    number: int
    title: str
    description: str
    ownership: str
    tier: str | None  # the explicit tier written in the plan; None lets pm-agent classify it
    depends_on: tuple[int, ...]
    create: tuple[str, ...]
    modify: tuple[str, ...]
    tests: tuple[str, ...]
    criteria: tuple[Criterion, ...]
    summary: str
    review: ReviewText
    files: Mapping[str, str] = field(default_factory=dict)
    files_by_format: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    first_attempt: Mapping[str, str] = field(default_factory=dict)
    first_attempt_tests: tuple[str, ...] = ()
    first_attempt_summary: str = ""
    fix_summary: str = ""
    question: Question | None = None

    @property
    def ref(self) -> str:
        """`task-<n>`, as pm-agent names the task in contracts and commit trailers."""
        return f"task-{self.number}"

    @property
    def task_id(self) -> str:
        """The plan's task id (`3` for `### Task 3: ...`)."""
        return str(self.number)

    def final_files(self, answer: str | None = None) -> dict[str, str]:
        """Path -> final content, in writing order (for the answer, when the content depends on it)."""
        if self.files_by_format:
            return dict(self.files_by_format["json" if json_default(answer) else "table"])
        return dict(self.files)

    def attempt_files(self, attempt: int, answer: str | None = None) -> dict[str, str]:
        """What the developer writes on `attempt`: the first attempt's slip, then the final files."""
        files = self.final_files(answer)
        if attempt <= 1:
            files.update(self.first_attempt)
        return files

    def fixed_files(self, answer: str | None = None) -> dict[str, str]:
        """What a fixer rewrites: the files the first attempt got wrong (all files for other tasks)."""
        final = self.final_files(answer)
        wrong = {path: final[path] for path in self.first_attempt if path in final}
        return wrong or final

    @property
    def all_paths(self) -> tuple[str, ...]:
        """Every file the task touches: created, modified, tests."""
        return (*self.create, *self.modify, *self.tests)


def json_default(answer: str | None) -> bool:
    """Whether the user's answer makes JSON the CLI's default: the format it names first wins."""
    text = (answer or "").lower()
    json_at = text.find("json")
    table_at = min((i for i in (text.find("table"), text.find("plain")) if i >= 0), default=-1)
    if json_at < 0:
        return False
    return table_at < 0 or json_at < table_at


def line_of(content: str, anchors: Sequence[str]) -> int:
    """The 1-based line of the first anchor found in `content` (anchors tried in order); 1 if none is."""
    lines = content.splitlines()
    for anchor in anchors:
        for number, line in enumerate(lines, start=1):
            if anchor in line:
                return number
    return 1


def criteria_mapping(
    task: DemoTask, files: Mapping[str, str], texts: Sequence[str] | None = None
) -> list[dict[str, str]]:
    """Each acceptance criterion mapped to `path:line` in `files` (the content the agent wrote).

    `texts` are the criteria as the contract words them (used when there are as many as the task's).
    """
    names = list(texts) if texts is not None and len(texts) == len(task.criteria) else None
    mapping = []
    for index, criterion in enumerate(task.criteria):
        content = files.get(criterion.path, "")
        text = names[index] if names is not None else criterion.text
        mapping.append({"criterion": text, "location": f"{criterion.path}:{line_of(content, criterion.anchors)}"})
    return mapping


def _files(names: Mapping[str, str]) -> dict[str, str]:
    """Path in the sample project -> content, from path -> data file name (tasks.yaml's `files:`)."""
    return {path: project_file(name) for path, name in names.items()}


def _task(raw: Mapping[str, Any]) -> DemoTask:
    """One `tasks:` entry of tasks.yaml as a DemoTask."""
    question = raw.get("question")
    review = raw["review"]
    by_format = raw.get("files_by_format") or {}
    return DemoTask(
        number=int(raw["number"]),
        title=raw["title"],
        description=raw["description"],
        ownership=raw["ownership"],
        tier=raw.get("tier"),
        depends_on=tuple(raw.get("depends_on", ())),
        create=tuple(raw.get("create", ())),
        modify=tuple(raw.get("modify", ())),
        tests=tuple(raw.get("tests", ())),
        criteria=tuple(Criterion(c["text"], c["path"], tuple(c["anchors"])) for c in raw["criteria"]),
        summary=raw["summary"],
        review=ReviewText(review["summary"], tuple(review.get("risks", ())), review["rollback"]),
        files=_files(raw.get("files", {})),
        files_by_format={fmt: _files(names) for fmt, names in by_format.items()},
        first_attempt=_files(raw.get("first_attempt", {})),
        first_attempt_tests=tuple(raw.get("first_attempt_tests", ())),
        first_attempt_summary=raw.get("first_attempt_summary", ""),
        fix_summary=raw.get("fix_summary", ""),
        question=Question(question["question"], question["context"]) if question else None,
    )


DEMO_TASKS: Final[tuple[DemoTask, ...]] = tuple(_task(raw) for raw in tasks_document()["tasks"])

DEMO_ANSWERS: Final[dict[str, str]] = dict(tasks_document()["answers"])
"""The scripted human's answers to the needs-user-input questions, by task ref."""


def demo_task(ref: str) -> DemoTask | None:
    """The demo task for `task-3`, `3` or `Task 3`; None when the plan has no such task."""
    match = re.search(r"(\d+)\s*$", ref.strip())
    if match is None:
        return None
    number = int(match.group(1))
    return next((task for task in DEMO_TASKS if task.number == number), None)
