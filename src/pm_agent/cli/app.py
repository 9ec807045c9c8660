"""The Typer app, the two consoles, the shared options and the error handling every command uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from pm_agent.cli.basics import err, out, print_error, print_json, repo_root
from pm_agent.errors import PmAgentError

__all__ = [
    "DesignOption", "JsonOption", "PlanArgument", "RepoOption", "RunOption",
    "app", "call", "err", "errors", "fail", "out", "print_json", "repo_root",
]  # fmt: skip

app = typer.Typer(
    help=(
        "pm-agent: an autonomous project manager for AI coding agents.\n\n"
        "It reads a plan (and a design doc), turns it into a dependency-aware queue of tasks, "
        "drives coding agents (Claude Code) through a per-task state machine in parallel slots, "
        "checks every result with gates it runs itself, commits each accepted task, and escalates "
        "to a human only when it must. State lives in <repo>/.pm-agent/state.db."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

T = TypeVar("T")

RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", "-C", help="Target repository (default: the git repository of the current folder)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]
PlanArgument = Annotated[
    Path,
    typer.Argument(
        help="The plan document (Markdown), a folder whose Markdown files are one plan, an OpenSpec change's "
        "folder (openspec/changes/ID), Task Master's .taskmaster folder or tasks.json, or "
        "github:owner/name?label=LABEL (the open issues with that label)."
    ),
]
DesignOption = Annotated[
    Path | None,
    typer.Option(
        "--design",
        "-d",
        help="The design document (default: the one a spec-driven tool keeps beside the tasks: an OpenSpec "
        "change's design.md, a Kiro spec's design.md, a Spec Kit feature's plan.md, Task Master's PRD).",
    ),
]
RunOption = Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")]


@contextmanager
def errors() -> Iterator[None]:
    """Turn pm-agent errors into one clear line and the error's exit code."""
    try:
        yield
    except PmAgentError as exc:
        print_error(exc)
        raise typer.Exit(exc.exit_code) from None


def call(fn: Callable[[], T]) -> T:
    """`fn()`, with pm-agent errors turned into one line and an exit code."""
    with errors():
        return fn()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` on stderr; the exit to raise (bad usage is exit code 2)."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)
