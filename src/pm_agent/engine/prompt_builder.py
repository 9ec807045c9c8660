"""The prompt of an agent session: seed 001's task contract, the role's template, the evidence.

The role templates are package data in `engine/prompts/*.md` (a repository may override them in
`.pm-agent/prompts/`); this module fills them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import yaml

from pm_agent.agents.header import session_header
from pm_agent.config import PmConfig
from pm_agent.engine.history import TaskHistory
from pm_agent.engine.runctx import RunContext
from pm_agent.lifecycle import IssueState
from pm_agent.plan.models import SharedContext, Task, Tier
from pm_agent.signals import signal_instructions
from pm_agent.store import TaskRecord
from pm_agent.vcs import Git

# ---------------------------------------------------------------- templates

ROLES_WITH_PROMPTS = ("developer", "fixer", "reviewer", "tester", "analyst", "planner")
OVERRIDE_DIR = Path(".pm-agent") / "prompts"


def template_text(role: str, repo: Path | None = None) -> str:
    """The template for a role: `<repo>/.pm-agent/prompts/<role>.md` if present, else the shipped one."""
    if role not in ROLES_WITH_PROMPTS:
        raise ValueError(f"no prompt template for role {role!r}")
    if repo is not None:
        override = repo / OVERRIDE_DIR / f"{role}.md"
        if override.is_file():
            return override.read_text(encoding="utf-8")
    return resources.files("pm_agent.engine").joinpath("prompts", f"{role}.md").read_text(encoding="utf-8")


def render_prompt(role: str, values: dict[str, str], repo: Path | None = None) -> str:
    """Fill a role's template; unknown placeholders are left as written so user templates never crash."""
    return Template(template_text(role, repo)).safe_substitute(values).strip() + "\n"


# ---------------------------------------------------------------- the task contract (seed 001 section 4)

DEFINITION_OF_DONE = [
    "Code implements all acceptance criteria",
    "tests_to_add written and passing",
    "tests_to_run all passing",
    "Docs updated if public API or config changed",
    "Migration + rollback notes if schema/infra changed",
    "No TODO/FIXME without linked follow-up task",
]


def task_contract(task: Task, config: PmConfig, *, shared_context: str, task_delta: str) -> dict[str, Any]:
    """The full task contract of seed 001 section 4, as plain data."""
    env = config.environment
    return {
        "task_id": task.ref,
        "title": task.title,
        "tier": task.tier.value,
        "ownership": task.ownership,
        "acceptance_criteria": list(task.acceptance_criteria),
        "expected_files": {
            "create": list(task.expected_files.create),
            "modify": list(task.expected_files.modify),
            "delete": list(task.expected_files.delete),
            "test": list(task.expected_files.test),
        },
        "non_goals": list(task.non_goals),
        "tests_to_add": list(task.tests_to_add),
        "tests_to_run": list(task.tests_to_run),
        "definition_of_done": list(DEFINITION_OF_DONE),
        "io_contract": task.io_contract.model_dump(),
        "environment": {
            "lint_command": task.environment.lint_command or env.lint_command,
            "typecheck_command": task.environment.typecheck_command or env.typecheck_command,
            "format_command": task.environment.format_command or env.format_command,
            "test_command": task.environment.test_command or env.test_command,
            "build_command": task.environment.build_command or env.build_command,
        },
        "context": {"shared": shared_context, "task_delta": task_delta},
        "retry_budget": config.retry_budget,
        "time_budget_ms": int(config.agent.time_budget_min * 60_000),
        "patch_size_limit": config.patch_size_limit_files,
        "security_flags": task.security_flags.model_dump(),
        "steps": list(task.steps),
    }


# libyaml's emitter when PyYAML has it (its wheels do): the same text (tests compare) at a fifth of the CPU,
# ~1 ms less per prompt.
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render_contract(contract: dict[str, Any], dumper: Any = _DUMPER) -> str:
    """The contract as YAML for a prompt."""
    return yaml.dump({"task_contract": contract}, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)


# ---------------------------------------------------------------- a session's prompt

ROLE_LINES = {
    "developer": "You implement one task of a plan, inside your own git worktree, and never commit.",
    "fixer": "You fix only the problems pm-agent's gates or reviewer found, and never commit.",
    "reviewer": "You review one task's change against its contract and the design; you do not edit files.",
    "tester": "You test one task's change for edge cases; you do not commit.",
    "analyst": "You make one task's requirements concrete, or ask one precise question.",
    "planner": "You split one task that is too large into smaller ordered slices.",
}


def current_task(rec: TaskRecord) -> Task:
    """The task's contract with the tier as it stands now (auto-escalation may have raised it)."""
    return rec.task().model_copy(update={"tier": rec.tier})


def system_prompt(rc: RunContext, rec: TaskRecord, role: str, attempt: int) -> str:
    """Appended to the agent's system prompt; the first line names the session (scripted models route on it)."""
    header = session_header(role, f"task-{rec.task_id}", attempt, rc.worktree_path(rec.task_id))
    return f"{header}\n{ROLE_LINES.get(role, '')} Report back only through the signal_back tool."


def task_delta(rc: RunContext, rec: TaskRecord) -> str:
    """What changed that this task should know: its dependencies' commits and files, recent decisions."""
    task = rec.task()
    lines: list[str] = []
    for dep in task.dependency_ids():
        dep_rec = rc.store.get_task(rc.run_id, dep)
        files = ", ".join(dep_rec.artifacts) or "no files recorded"
        lines.append(f"task-{dep} ({dep_rec.title}) is {dep_rec.status.value} at {dep_rec.commit_sha or '-'}: {files}")
    if rec.decision_log:
        lines.append("PM decisions so far: " + "; ".join(rec.decision_log[-5:]))
    return "\n".join(lines) or "First task on this area: no earlier changes to read."


# States a developer is sent back from with a fix request (the tester's failing tests, a followup).
SENT_BACK_FROM = (IssueState.RUNNING_TESTS, IssueState.VALIDATING_SOLUTION, IssueState.FIXING_ISSUES)


def sent_back(rc: RunContext, rec: TaskRecord) -> bool:
    """The developer works on the task again after the gates, the tester or the fixer sent it back."""
    previous = rc.context_of(rec).previous_states
    return bool(previous) and previous[-1] in SENT_BACK_FROM


def tester_context(rc: RunContext, rec: TaskRecord, task: Task) -> str:
    """What the tester reads besides the contract: the change, where its tests go, how they are run."""
    base = rc.task_base(rec)
    stat = Git(rc.worktree_path(rec.task_id)).diff_stat(base) or "(no change found)"
    files = task.expected_files
    tests = list(files.test) or [p for p in [*files.create, *files.modify] if "test" in p.lower()]
    where = ", ".join(tests) if tests else "the test files the change already touches"
    command = task.environment.test_command or rc.config.environment.test_command or "(none configured)"
    return (
        f"The change is uncommitted in your worktree; `git diff {base[:12]}` shows it.\n{stat}\n\n"
        f"Add your tests to: {where}\nThe gates run the tests with: {command}"
    )


def build_prompt(rc: RunContext, rec: TaskRecord, role: str, history: TaskHistory) -> str:
    """The whole prompt for a new session of `role` on this task."""
    task = current_task(rec)
    shared = SharedContext.model_validate(rc.run.shared_context).render() if rc.run.shared_context else ""
    contract = task_contract(task, rc.config, shared_context=shared, task_delta=task_delta(rc, rec))
    extra = ""
    if role == "fixer":
        extra = history.fix_evidence()
    elif role == "tester":
        extra = tester_context(rc, rec, task)
    elif role == "reviewer":
        base = rc.task_base(rec)
        stat = Git(rc.worktree_path(rec.task_id)).diff_stat(base) or "(no change found)"
        design = rc.design_text[:4000]
        extra = (
            f"The change is uncommitted in your worktree; `git diff {base[:12]}` shows it.\n{stat}\n\n"
            f"Design doc (excerpt):\n{design}"
        )
        observed = history.events("gate.observations")  # written by steps.run_gates_step after each gate pass
        suspicious = [str(line) for line in observed[-1].get("suspicious", [])] if observed else []
        if suspicious:
            extra += (
                "\n\npm-agent could not tell whether these tests can fail. Read each one: if it checks almost "
                "nothing, send it to the fixer (needs-role-followup) naming the line:\n"
                + "\n".join(f"- {line}" for line in suspicious)
            )
    elif role in ("developer", "analyst", "planner"):
        extra = "The task as the plan writes it:\n\n" + (task.body or task.description or task.title)
        analysed = history.latest_report(("analyst",))
        if analysed is not None and role != "analyst":
            extra += "\n\nRequirements as the analyst made them concrete:\n" + analysed.summary
        slices = history.events("task.sliced")
        if slices and role == "developer" and not history.events("task.narrowed"):
            extra += "\n\nThe planner sliced this task; work through the slices in order:\n"
            extra += str(slices[-1].get("slices", ""))
        if role == "developer" and sent_back(rc, rec):
            extra += "\n\nYour change came back with this evidence; fix the code, not the tests:\n"
            extra += history.fix_evidence()
    values = {
        "contract": render_contract(contract),
        "extra": extra,
        "signal_instructions": signal_instructions(role, task.ref, criteria=task.acceptance_criteria),
        "attempt": str(rec.retry_count),
        "retry_budget": str(rc.config.retry_budget),
        "review_depth": "full (CRITICAL)" if task.tier is Tier.CRITICAL else "targeted (NORMAL)",
        "patch_size_limit": str(rc.config.patch_size_limit_files),
    }
    return render_prompt(role, values, rc.repo)
