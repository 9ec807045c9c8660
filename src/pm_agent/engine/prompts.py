"""Role prompts: templates shipped in the package, overridable per repository."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template

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
