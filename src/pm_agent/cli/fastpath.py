"""`pm-agent status` and `pm-agent log` without building the Typer app: their plain forms, parsed here.

Importing Typer and having it resolve every parameter of every command through pydantic before it runs one costs
about 150 ms of CPU, more than `status` itself on a 1,000-task run, and these two are the commands people repeat
while a run works. The commands themselves are in `reading.py`, which imports neither Typer nor the store.
Only the plain forms are taken: the options each command declares in `views.py`, as `--opt value` or
`--opt=value`, each at most once. Anything else (`--help`, an unknown or repeated option, a missing or extra
argument) returns None, and the Typer app handles it, with its own help and usage errors.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# command -> (its options that take a value, its flags, how many positional arguments: (least, most))
_COMMANDS: dict[str, tuple[dict[str, str], dict[str, str], tuple[int, int]]] = {
    "status": ({"--repo": "repo", "-C": "repo"}, {"--json": "as_json", "--all": "all_tasks"}, (0, 1)),
    "log": ({"--repo": "repo", "-C": "repo", "--run": "run"}, {}, (1, 1)),
}


def parse(argv: Sequence[str]) -> tuple[str, list[str], dict[str, Any]] | None:
    """(command, positional arguments, keyword arguments) for a plain status/log command line, else None."""
    if not argv or argv[0] not in _COMMANDS:
        return None
    values, flags, (least, most) = _COMMANDS[argv[0]]
    positional: list[str] = []
    options: dict[str, Any] = {}
    rest = list(argv[1:])
    while rest:
        token = rest.pop(0)
        name, eq, attached = token.partition("=")
        if (name in values and name.startswith("--")) or (token in values and not eq):
            if eq:
                value = attached
            elif rest and not rest[0].startswith("-"):
                value = rest.pop(0)
            else:
                return None
            key = values[name]
            if key in options or not value:
                return None
            options[key] = Path(value) if key == "repo" else value
        elif token in flags and flags[token] not in options:
            options[flags[token]] = True
        elif token.startswith("-") or token == "":
            return None
        else:
            positional.append(token)
    if not least <= len(positional) <= most:
        return None
    return argv[0], positional, options


def run(argv: Sequence[str]) -> int | None:
    """Run a plain status/log command line and return its exit code; None when Typer must handle it."""
    parsed = parse(argv)
    if parsed is None:
        return None
    from pm_agent.cli.basics import print_error
    from pm_agent.cli.reading import show_log, show_status
    from pm_agent.errors import PmAgentError

    command, positional, options = parsed
    try:
        if command == "status":
            run_id = positional[0] if positional else None
            show_status(run_id, options.get("repo"), options.get("as_json", False), options.get("all_tasks", False))
        else:
            show_log(positional[0], options.get("run"), options.get("repo"))
    except PmAgentError as exc:
        print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:  # `pm-agent status | head`: quiet, as Typer is
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
        return 1
    return 0
