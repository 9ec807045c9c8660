"""The Typer app, the two consoles, the shared options and the error handling every command uses."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from pm_agent.errors import PmAgentError

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

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", "-C", help="Target repository (default: the git repository of the current folder)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]
PlanArgument = Annotated[
    Path, typer.Argument(help="The plan document (Markdown), or a folder whose Markdown files are one plan.")
]
DesignOption = Annotated[Path | None, typer.Option("--design", "-d", help="The design document.")]
RunOption = Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")]


@contextmanager
def errors() -> Iterator[None]:
    """Turn pm-agent errors into one clear line and the error's exit code."""
    try:
        yield
    except PmAgentError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


def call(fn: Callable[[], T]) -> T:
    """`fn()`, with pm-agent errors turned into one line and an exit code."""
    with errors():
        return fn()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` on stderr; the exit to raise (bad usage is exit code 2)."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)


def repo_root(repo: Path | None) -> Path:
    """The top of the git repository holding `repo` (default: the current folder), else that folder."""
    where = repo.resolve() if repo is not None else Path.cwd()
    try:
        top = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
        return Path(top)
    except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
        return where


def print_json(data: Any) -> None:
    """Write `data` as indented JSON on stdout (no Rich markup or wrapping)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
