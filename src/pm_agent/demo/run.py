"""`pm-agent demo`: the whole loop on the textstats sample, offline, with the real Claude Code CLI.

The model is the scripted `DemoBrain` behind a local Messages-API server on 127.0.0.1; the human is
a scripted user who answers escalations (and says so). Everything else is the real thing: git
worktrees, agent processes, gates, commits, tags, reports, the release manifest.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pm_agent.agents.claude import bundled_claude
from pm_agent.config import load_config
from pm_agent.demo.brain import DemoBrain
from pm_agent.demo.project import DemoRepo, build_demo_repo
from pm_agent.demo.tasks import DEMO_ANSWERS
from pm_agent.engine.api import RunResult, run_plan
from pm_agent.engine.events import Listener
from pm_agent.errors import InputError
from pm_agent.human.channels import ScriptedChannel
from pm_agent.store import EscalationRecord
from pm_agent.testing.model_server import ModelServer

ENV_KEYS = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# The sample project's gates run these with pm-agent's own interpreter (see demo/project.py).
GATE_TOOLS = ("pytest", "ruff", "mypy")


@dataclass(frozen=True)
class DemoResult:
    """Where the demo left its repository, and how the run ended."""

    demo: DemoRepo
    run: RunResult


def scripted_answer(esc: EscalationRecord) -> str | None:
    """The demo user's answer: the scripted one for agents' questions; accept reviewed risks."""
    if esc.task_id is not None and f"task-{esc.task_id}" in DEMO_ANSWERS:
        return DEMO_ANSWERS[f"task-{esc.task_id}"]
    if esc.source == "risk-audit":
        return "accept: the review notes give a rollback for each"
    return None


@contextmanager
def _model_env(url: str) -> Iterator[None]:
    """Point agent processes at the local model server for the demo's duration only."""
    saved = {key: os.environ.get(key) for key in ENV_KEYS}
    os.environ["ANTHROPIC_BASE_URL"] = url
    os.environ["ANTHROPIC_API_KEY"] = "demo-offline-key"
    os.environ.pop("ANTHROPIC_AUTH_TOKEN", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def missing_prerequisites(python: str = sys.executable) -> str | None:
    """One line saying what the demo lacks and how to install it, or None when it has everything.

    `pip install pm-agent` brings the Claude Code CLI (in claude-agent-sdk) but not the sample
    project's gate tools, which are development tools and belong to the `dev` extra.
    """
    if shutil.which("git") is None:
        return "pm-agent demo needs git on PATH: install git (e.g. `apt-get install git`), then run it again"
    missing = [name for name in GATE_TOOLS if importlib.util.find_spec(name) is None]
    if missing:
        names = " ".join(missing)
        return (
            f"pm-agent demo needs {', '.join(missing)} in {python} (the sample project's gates run them): "
            f"install with `{shlex.quote(python)} -m pip install {names}`, then run it again"
        )
    if shutil.which("claude") is None and bundled_claude() is None:
        return (
            "pm-agent demo needs the Claude Code CLI: "
            f"`{shlex.quote(python)} -m pip install claude-agent-sdk` (it bundles one), then run it again"
        )
    return None


def run_demo(
    dest: Path | None, *, listener: Listener, slots: int | None = None, built: Callable[[Path], object] | None = None
) -> DemoResult:
    """Build the sample project and drive its plan to the release manifest.

    InputError (before anything is built) when a prerequisite is missing; see `missing_prerequisites`.
    `built(repo)` is called once the sample repository exists, before the run (`demo --web` starts the dashboard).
    """
    problem = missing_prerequisites()
    if problem is not None:
        raise InputError(problem)
    if dest is None:
        dest = Path(tempfile.mkdtemp(prefix="pm-agent-demo-")) / "textstats"
    demo = build_demo_repo(dest)
    listener.emit("run.demo", f"demo repository: {demo.repo} (model: scripted, offline; human: scripted)")
    if built is not None:
        built(demo.repo)
    with ModelServer(fallback=DemoBrain()) as server, _model_env(server.url):
        result = run_plan(
            demo.repo,
            demo.plan,
            demo.design,
            listener=listener,
            channel=ScriptedChannel(scripted_answer),
            config=load_config(demo.repo),
            slots=slots,
        )
    return DemoResult(demo, result)


def closing_lines(result: DemoResult) -> list[str]:
    """What `pm-agent demo` prints at the end; the last line says how the run ended and its exit code.

    Only a released run points at the release: a stopped or failed one says why there is none.
    """
    repo, run = result.demo.repo, result.run
    branch, final = run.working_branch, run.final
    lines = [f"The demo repository is at {repo}"]
    if final is not None and final.passed and final.manifest_file:
        return [
            *lines,
            "Inspect the release:",
            f"  git -C {repo} log --oneline --graph {branch}",
            f"  git -C {repo} tag --list 'pm/*'",
            f"  git -C {repo} show {branch}:{final.manifest_file}",
            f"  git -C {repo} show {branch}:docs/reviews/task-3-review.md",
            f"  pm-agent status -C {repo}        pm-agent log 3 -C {repo}",
            f"demo finished: released, manifest {final.manifest_file} on {branch} (exit {run.exit_code})",
        ]
    return [
        *lines,
        f"See what happened: pm-agent status -C {repo}        git -C {repo} log --oneline {branch}",
        f"demo ended without a release: {_how_it_ended(run)} (exit {run.exit_code})",
    ]


def _how_it_ended(run: RunResult) -> str:
    """Why a run produced no release, in a few words."""
    outcome = run.outcome
    if run.stopped_by is not None:
        return f"stopped by {run.stopped_by.name}"
    if outcome.waiting or (run.final is not None and run.final.waiting):
        return "waiting for a human answer"
    counts = ((outcome.failed, "failed"), (outcome.blocked, "blocked"), (outcome.errors, "errors"))
    parts = [f"{len(items)} {what}" for items, what in counts if items]
    if run.final is not None and run.final.problems:
        parts.append("final release gate: " + "; ".join(run.final.problems))
    return ", ".join(parts) or "the release gate did not pass"
