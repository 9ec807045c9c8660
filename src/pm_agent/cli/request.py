"""`pm-agent new "REQUEST"`: from a request to requirements, a plan, its approval, and the run of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pm_agent.cli.app import DesignOption, RepoOption, call, fail, repo_root
from pm_agent.cli.console import ConsoleListener
from pm_agent.cli.runs import (
    AgentOption,
    AllowDirty,
    NoInput,
    SlotsOption,
    _channel,
    _interrupted,
    check_agent,
    finish_request,
    read_text_file,
)


def new_cmd(
    request: Annotated[str | None, typer.Argument(help="What you want built, in your words.")] = None,
    from_file: Annotated[Path | None, typer.Option("--from", help="Read the request from a file.")] = None,
    design: DesignOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve the plan without asking.")] = False,
    slug: Annotated[str | None, typer.Option("--slug", help="File-name slug (default: from the request).")] = None,
    slots: SlotsOption = None,
    agent: AgentOption = None,
    repo: RepoOption = None,
    no_input: NoInput = False,
    allow_dirty: AllowDirty = False,
) -> None:
    """Start from a request: an analyst writes the requirements, a planner the plan; once approved, it runs.

    The analyst may ask you questions (answered here or with `pm-agent answer`). The requirements
    (docs/plans/<date>-<slug>-design.md) are locked by their hash; the plan (docs/plans/<date>-<slug>.md)
    is parsed by pm-agent, and errors go back to the planner. Approve, edit or abort through an
    escalation (`--yes` skips it). Both are committed on the working branch. Same exit codes as
    `pm-agent run`; `pm-agent resume` continues a request that stopped.
    """
    from pm_agent.intake import new_request

    if (request is None) == (from_file is None):
        raise fail("give the request as REQUEST or with --from FILE, not both")
    check_agent(agent)
    text = request if request is not None else call(lambda: read_text_file(from_file, "request"))
    root = repo_root(repo)
    try:
        result = call(
            lambda: new_request(
                root,
                text,
                listener=ConsoleListener(),
                channel=_channel(no_input),
                design=design.resolve() if design else None,
                yes=yes,
                slots=slots,
                agent=agent,
                allow_dirty=allow_dirty,
                slug=slug,
            )
        )
    except KeyboardInterrupt:
        _interrupted(root)
    finish_request(result, root)
