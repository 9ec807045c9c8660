"""What every command prints with, without Typer: the two consoles, the error line, the repository, JSON.

`app.py` re-exports these for the commands; `fastpath.py` uses them directly, so plain `status` and `log` never
import Typer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def print_error(message: object) -> None:
    """`error: message` on stderr, the one form every failure takes."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)


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
