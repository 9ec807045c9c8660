"""The commands that drive runs and talk to the human: run, resume, escalations, answer, demo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from pm_agent.cli.app import (
    DesignOption,
    JsonOption,
    PlanArgument,
    RepoOption,
    call,
    err,
    fail,
    out,
    print_json,
    repo_root,
)
from pm_agent.cli.console import ConsoleListener
from pm_agent.cli.web import WebFlag, dashboard, keep_serving, start_dashboard

if TYPE_CHECKING:
    from pm_agent.engine.api import RunResult
    from pm_agent.human.channels import EscalationChannel
    from pm_agent.intake import RequestResult
    from pm_agent.web.server import Background


def _channel(no_input: bool) -> EscalationChannel:
    """Ask in this terminal when it is one (and prompting is allowed); else only say how to answer."""
    from pm_agent.human.channels import PrintOnlyChannel, TerminalChannel

    return TerminalChannel() if sys.stdin.isatty() and not no_input else PrintOnlyChannel()


def _finish(result: RunResult, repo: Path) -> NoReturn:
    """Print how the run ended and what to do next; exit with the run's exit code."""
    outcome = result.outcome
    if result.stopped_by is not None:
        out.print(
            f"\nrun {result.run_id} stopped by {result.stopped_by.name}: {len(outcome.completed)} task(s) completed "
            f"so far, all of it kept. Continue with `pm-agent resume -C {repo}`."
        )
        raise typer.Exit(result.exit_code)
    out.print(
        f"\nrun {result.run_id}: {len(outcome.completed)} completed, {len(outcome.waiting)} waiting for an answer, "
        f"{len(outcome.failed)} failed, {len(outcome.blocked)} blocked, {len(outcome.errors)} errors"
        + (f", {len(outcome.held)} left for resume (the run stopped dispatching)" if outcome.held else "")
    )
    if outcome.waiting or (result.final is not None and result.final.waiting):
        out.print(
            "Answer the open escalations (`pm-agent escalations`, `pm-agent answer ID TEXT`), then `pm-agent resume`."
        )
    if result.final is not None and not result.final.passed and result.final.problems:
        out.print("Final release gate: " + "; ".join(result.final.problems))
    raise typer.Exit(result.exit_code)


def finish_request(result: RequestResult, repo: Path) -> NoReturn:
    """Say how far the request got; once its plan ran, exactly what `pm-agent run` says."""
    if result.run is not None:
        _finish(result.run, repo)
    if result.stopped_by is not None:
        out.print(
            f"\nrequest {result.intake_run} stopped by {result.stopped_by.name}; "
            f"continue with `pm-agent resume -C {repo}`."
        )
    elif result.exit_code == 3:
        out.print(
            f"\nrequest {result.intake_run} waits for an answer: `pm-agent escalations`, `pm-agent answer ID TEXT`, "
            "then `pm-agent resume`."
        )
    else:
        out.print(f"\nrequest {result.intake_run} aborted: nothing was committed.")
    raise typer.Exit(result.exit_code)


def _interrupted(repo: Path) -> NoReturn:
    """Ctrl-C before the loop took over the signals (while checking, scanning the baseline)."""
    err.print(
        f"interrupted before the run got going; if it was recorded, `pm-agent resume -C {repo}` continues it",
        highlight=False,
    )
    raise typer.Exit(130)


# The options `run`, `new` and `demo` share, declared once (`cli/request.py` imports them).
NoInput = Annotated[
    bool, typer.Option("--no-input", help="Never prompt in the terminal; escalations wait for `pm-agent answer`.")
]
AllowDirty = Annotated[
    bool,
    typer.Option(
        "--allow-dirty",
        help="Run although the tree has uncommitted changes (agents work from HEAD and will not see them).",
    ),
]
SLOTS_HELP = "Agent slots: agents at work at once (a task pm-agent checks holds none)."
SlotsOption = Annotated[int | None, typer.Option("--slots", min=1, max=16, help=SLOTS_HELP)]
AgentOption = Annotated[
    str | None, typer.Option("--agent", help="Agent runner: claude (default) or command (from pm-agent.yaml).")
]
AGENTS = ("claude", "command")


def check_agent(agent: str | None) -> None:
    """Refuse an --agent value other than the two runners (exit 2)."""
    if agent is not None and agent not in AGENTS:
        raise fail(f"--agent must be claude or command, not {agent!r}")


def read_text_file(path: Path | None, what: str) -> str:
    """The text of a file given on the command line; InputError (exit 2) when it cannot be read as UTF-8."""
    from pm_agent.errors import InputError

    assert path is not None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what}: {exc}", path=path) from exc


def run_cmd(
    plan: PlanArgument,
    design: DesignOption = None,
    slots: SlotsOption = None,
    agent: AgentOption = None,
    repo: RepoOption = None,
    no_input: NoInput = False,
    allow_dirty: AllowDirty = False,
    web: WebFlag = False,
) -> None:
    """Drive a plan to the end: orchestrate, dispatch agents, gate, commit, report, release.

    One run at a time per repository. Tasks already committed on an existing working branch are
    skipped. Exit codes: 0 released (manifest written), 3 waiting for a human answer, 1 failed or
    blocked, 2 bad input (nothing written) or another run in progress, 130/143 stopped by
    SIGINT/SIGTERM (continue with `pm-agent resume`).
    """
    from pm_agent.engine.api import run_plan
    from pm_agent.plan.github_source import is_github_source

    root = repo_root(repo)
    check_agent(agent)
    if is_github_source(plan):  # github:owner/name?label=ready: the issues, kept as .pm-agent/plans/<plan-id>.md
        from pm_agent.github.issues_plan import write_issue_plan

        plan = call(lambda: write_issue_plan(plan, root))
    try:
        with dashboard(root, web):
            result = call(
                lambda: run_plan(
                    root,
                    plan.resolve(),
                    design.resolve() if design else None,
                    listener=ConsoleListener(),
                    channel=_channel(no_input),
                    slots=slots,
                    agent=agent,
                    allow_dirty=allow_dirty,
                )
            )
    except KeyboardInterrupt:
        _interrupted(root)
    _finish(result, root)


def resume_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    no_input: NoInput = False,
    web: WebFlag = False,
) -> None:
    """Continue a run after a stop or a crash: nothing committed twice, sessions resumed where they can be.

    Re-reads pm-agent.yaml: environment commands, agent settings, budgets and timeouts take effect
    (recorded as an event with the old and new values); changing working_branch or
    review_artifacts_dir is refused. Same exit codes as `pm-agent run`.
    """
    from pm_agent.engine.api import resume
    from pm_agent.intake import resume_request

    root = repo_root(repo)
    try:
        # A request stopped before its plan ran (`pm-agent new`) continues its intake; any other run as before.
        request = call(lambda: resume_request(root, run, listener=ConsoleListener(), channel=_channel(no_input)))
        if request is not None:
            finish_request(request, root)
        with dashboard(root, web):
            result = call(
                lambda: resume(root, run, listener=ConsoleListener(), channel=_channel(no_input), reread_config=True)
            )
    except KeyboardInterrupt:
        _interrupted(root)
    _finish(result, root)


def escalations_cmd(
    repo: RepoOption = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include answered and applied ones.")] = False,
    as_json: JsonOption = False,
) -> None:
    """List the escalations waiting for a human (seed 001's format)."""
    from pm_agent.engine.api import escalations
    from pm_agent.reports.escalation import render_stored

    found = call(lambda: escalations(repo_root(repo), include_closed=show_all))
    if as_json:
        print_json([e.model_dump(mode="json") for e in found])
        return
    if not found:
        out.print("No open escalations.")
        return
    for esc in found:
        where = f"task-{esc.task_id}" if esc.task_id else "the run"
        out.print(
            f"{render_stored(esc)}\n(about {where}; {esc.status.value}"
            + (f"; answer: {esc.answer}" if esc.answer else "")
            + ")\n",
            highlight=False,
        )


def answer_cmd(
    escalation: Annotated[int, typer.Argument(help="Escalation id (see `pm-agent escalations`).")],
    text: Annotated[str | None, typer.Argument(help="The answer.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the answer from a file.")] = None,
    repo: RepoOption = None,
) -> None:
    """Answer an escalation; a running pm-agent resumes the waiting agent, a stopped one on `pm-agent resume`."""
    from pm_agent.engine.api import answer

    if (text is None) == (file is None):
        raise fail("give the answer as TEXT or with --file, not both")
    body = text if text is not None else call(lambda: read_text_file(file, "answer"))
    if not body.strip():
        raise fail("the answer is empty")
    rec = call(lambda: answer(repo_root(repo), escalation, body))
    out.print(f"escalation #{rec.id} answered; a running pm-agent picks it up, else run `pm-agent resume`.")


def demo_cmd(
    dest: Annotated[
        Path | None, typer.Option("--dest", help="Folder for the sample repository (default: a new temp folder).")
    ] = None,
    slots: SlotsOption = None,
    request: Annotated[
        bool, typer.Option("--request", help="Start from a request (`pm-agent new`) instead of a written plan.")
    ] = False,
    web: WebFlag = False,
) -> None:
    """Run the whole loop on a sample project, offline: real Claude Code CLI, scripted model and user.

    Shows parallel LOW tasks, a CRITICAL task alone, a gate failure repaired by the fix loop, an
    escalation answered by the scripted user, progress reports, the final release gate, the
    manifest and the handoff. Needs no API key and no network. With --request it starts from a request:
    the analyst asks a question and writes the requirements, the planner's plan has one error sent
    back to it, the scripted user approves.
    """
    from pm_agent.demo.run import closing_lines, run_demo

    if request:  # the front door: analyst, planner, approval, then the same run
        from pm_agent.demo.request import request_closing_lines, run_request_demo

        asked = call(
            lambda: run_request_demo(dest.resolve() if dest else None, listener=ConsoleListener(), slots=slots)
        )
        out.print("\n" + "\n".join(request_closing_lines(asked)), highlight=False)
        raise typer.Exit(asked.result.exit_code)
    served: list[Background] = []  # the dashboard, once the sample repository exists
    built = (lambda repo: served.append(start_dashboard(repo))) if web else None
    try:
        result = call(
            lambda: run_demo(dest.resolve() if dest else None, listener=ConsoleListener(), slots=slots, built=built)
        )
        out.print("\n" + "\n".join(closing_lines(result)), highlight=False)
    finally:
        for background in served:  # its address was printed when it started; in a terminal it stays up
            keep_serving(background)
    raise typer.Exit(result.run.exit_code)
