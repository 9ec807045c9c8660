"""The demo repository: a small Python package "textstats" with a design doc, a plan and pm-agent.yaml.

    demo = build_demo_repo(tmp / "textstats")
    plan = load_plan(demo.plan, demo.design, demo.repo)

The skeleton's own test passes and ruff is clean, so the baseline run is green. The gate commands
in pm-agent.yaml use the interpreter that runs pm-agent (`sys.executable` unless told otherwise),
which has pytest, ruff and mypy installed; the project's pyproject puts `src` on pytest's path, so
nothing needs installing.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from string import Template

from pm_agent.config import CONFIG_FILE
from pm_agent.demo.content import demo_text, project_file
from pm_agent.demo.tasks import DEMO_TASKS, DemoTask
from pm_agent.errors import InputError
from pm_agent.testing.repo import init_repo

__all__ = [
    "DEFAULT_DATE",
    "DemoRepo",
    "apply_files",
    "build_demo_repo",
    "environment_commands",
    "render_config",
    "render_design",
    "render_plan",
    "render_task",
    "skeleton_files",
]

DEFAULT_DATE = "2026-01-05"


@dataclass(frozen=True)
class DemoRepo:
    """Where `build_demo_repo` put things."""

    repo: Path
    plan: Path
    design: Path
    config: Path
    python: str

    @property
    def plan_relpath(self) -> str:
        """The plan's path inside the repository."""
        return self.plan.relative_to(self.repo).as_posix()


def environment_commands(python: str, *, typecheck: bool = True) -> dict[str, str]:
    """The gate commands, run with `python` (the interpreter that has pytest, ruff and mypy)."""
    py = shlex.quote(python)
    commands = {
        "test_command": f"{py} -m pytest -q",
        "lint_command": f"{py} -m ruff check src tests",
        "format_command": f"{py} -m ruff format --check src tests",
    }
    if typecheck:
        commands["typecheck_command"] = f"{py} -m mypy src"
    return commands


def render_config(python: str, *, typecheck: bool = True) -> str:
    """pm-agent.yaml for the demo: three slots, short agent limits, the gate commands."""
    commands = environment_commands(python, typecheck=typecheck)
    env = "\n".join(f"  {key}: {json.dumps(value)}" for key, value in commands.items())
    return f"""\
# pm-agent configuration for the textstats demo (see `pm-agent init` for every key).
max_parallel_agents: 3
retry_budget: 2
anti_starvation_interval: 3
progress_report_task_interval: 3
parallel_tiers: [low]
environment:
{env}
  gate_timeout_s: 180
agent:
  isolated_home: true
  max_turns: 20
  stuck_after_s: 90
  time_budget_min: 10
"""


def render_design() -> str:
    """The design doc the plan refers to."""
    return demo_text("design.md.txt")


def _files_block(task: DemoTask) -> list[str]:
    lines = ["**Files:**"]
    lines += [f"- Create: `{path}`" for path in task.create]
    lines += [f"- Modify: `{path}`" for path in task.modify]
    lines += [f"- Test: `{path}`" for path in task.tests]
    return lines


def render_task(task: DemoTask) -> str:
    """One task section of the plan."""
    fields = []
    if task.depends_on:
        fields.append("**Depends on:** " + ", ".join(f"Task {n}" for n in task.depends_on))
    if task.tier is not None:
        fields.append(f"**Tier:** {task.tier}")
    fields.append(f"**Ownership:** {task.ownership}")
    lines = [f"### Task {task.number}: {task.title}", "", task.description, "", *fields, ""]
    lines += ["**Acceptance criteria:**", *(f"- {c.text}" for c in task.criteria), ""]
    lines += [*_files_block(task), ""]
    return "\n".join(lines)


def render_plan(tasks: Sequence[DemoTask] = DEMO_TASKS, design_name: str | None = None) -> str:
    """The plan markdown: header, then one `### Task N: Title` section per task."""
    design = f"See `{design_name}`." if design_name else "See the design doc."
    header = Template(demo_text("plan-header.md.txt")).substitute(design=design)
    return header + "\n" + "\n".join(render_task(task) for task in tasks)


def skeleton_files() -> dict[str, str]:
    """The package skeleton of the first commit (without docs/plans and pm-agent.yaml)."""
    return {
        "README.md": project_file("README-stub.md"),
        ".gitignore": project_file("gitignore"),
        "pyproject.toml": project_file("pyproject.toml"),
        "src/textstats/__init__.py": project_file("init-skeleton.py"),
        "tests/test_version.py": project_file("test_version.py"),
    }


def build_demo_repo(
    dest: Path,
    *,
    python: str | None = None,
    date: str | None = DEFAULT_DATE,
    typecheck: bool = True,
) -> DemoRepo:
    """Create the demo repository at `dest` (a new or empty folder): files, `git init -b main`, one commit.

    `python` runs the gate commands (default: this interpreter); `date` prefixes the plan file names
    (None: today). Raises InputError when `dest` exists and is not an empty folder.
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("the demo needs a new or empty folder", path=dest)
    python = python or sys.executable
    day = date or datetime.now(UTC).date().isoformat()
    design_rel = f"docs/plans/{day}-textstats-design.md"
    plan_rel = f"docs/plans/{day}-textstats.md"
    files = {
        **skeleton_files(),
        design_rel: render_design(),
        plan_rel: render_plan(design_name=Path(design_rel).name),
        CONFIG_FILE: render_config(python, typecheck=typecheck),
    }
    repo = init_repo(dest, files=files, message="textstats: skeleton, design and plan")
    return DemoRepo(
        repo=repo,
        plan=repo / plan_rel,
        design=repo / design_rel,
        config=repo / CONFIG_FILE,
        python=python,
    )


def apply_files(repo: Path, files: Mapping[str, str]) -> list[Path]:
    """Write `files` (repo-relative path -> content) into `repo`, as an agent's Write calls would."""
    written = []
    for relative, content in files.items():
        target = Path(repo) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        written.append(target)
    return written
