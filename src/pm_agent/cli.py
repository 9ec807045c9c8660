"""The pm-agent command line: parse arguments, call the library, print."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

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
workflow_app = typer.Typer(help="Inspect and check the task lifecycle (the workflow table).", no_args_is_help=True)
app.add_typer(workflow_app, name="workflow")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", "-C", help="Target repository (default: the git repository of the current folder)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


def main() -> None:
    """Console-script entry point."""
    app()


@contextmanager
def _errors() -> Iterator[None]:
    """Turn pm-agent errors into one clear line and the error's exit code."""
    try:
        yield
    except PmAgentError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


def _repo(repo: Path | None) -> Path:
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


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def _call(fn: Callable[[], T]) -> T:
    with _errors():
        return fn()


# ---------------------------------------------------------------- plan


@app.command("plan")
def plan_cmd(
    plan: Annotated[
        Path, typer.Argument(help="The plan document (Markdown), or a folder whose Markdown files are one plan.")
    ],
    design: Annotated[Path | None, typer.Option("--design", "-d", help="The design document.")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Parse a plan and print every task, its tier and why, its dependencies and the execution queue.

    Writes nothing. Bad input (a cycle, an unknown or duplicate task, no tasks, an unreadable
    file) exits with code 2, naming the file and line.
    """
    from pm_agent.plan import load_plan
    from pm_agent.reports.plan_view import plan_data, render_plan

    loaded = _call(lambda: load_plan(plan, design, _repo(repo)))
    if as_json:
        _print_json(plan_data(loaded))
    else:
        out.print(render_plan(loaded))


# ---------------------------------------------------------------- workflow


@workflow_app.command("check")
def workflow_check(
    file: Annotated[Path | None, typer.Argument(help="A workflow YAML file (default: the shipped one).")] = None,
) -> None:
    """Prove every state reachable from RECEIVED, able to end, and owned by a known role."""
    from pm_agent.lifecycle import check_workflow, load_workflow

    wf = _call(lambda: load_workflow(file))
    violations = check_workflow(wf)
    name = str(file) if file else "default workflow"
    if not violations:
        out.print(f"{name}: OK — {len(wf.states)} states, {len(list(wf.edges()))} transitions, all checks pass")
        return
    for v in violations:
        where = f"{file}:{v.line}: " if file and v.line else ""
        err.print(f"{where}{v.state.value}: {v.kind}: {v.message}", highlight=False)
    err.print(f"{name}: {len(violations)} violation(s)")
    raise typer.Exit(1)


@workflow_app.command("show")
def workflow_show(
    file: Annotated[Path | None, typer.Argument(help="A workflow YAML file (default: the shipped one).")] = None,
) -> None:
    """Print the workflow: each state, the role that owns it, and where it may go next."""
    from pm_agent.lifecycle import describe_workflow, load_workflow

    out.print(describe_workflow(_call(lambda: load_workflow(file))), highlight=False)


# ---------------------------------------------------------------- store views


@app.command("status")
def status_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a run: tasks by state and status, open escalations, cost so far."""
    from pm_agent.engine.runlock import lock_holder
    from pm_agent.reports.status import render_status, status_data
    from pm_agent.store import default_store_path, open_store

    root = _repo(repo)
    path = default_store_path(root)
    if not path.exists():
        if as_json:
            _print_json({"run": None, "runs": []})
            return
        out.print(f"No pm-agent state in {path.parent} yet: start with `pm-agent run PLAN.md`.")
        return
    from pm_agent.reports.progress_data import progress_text

    store = _call(lambda: open_store(path))
    try:
        data = _call(lambda: status_data(store, run))
        if data["run"] is not None:
            # Seed 001: a progress report on explicit request, stored like the periodic ones.
            report = progress_text(store, data["run"]["id"], data["run"]["plan_id"])
            store.add_report(data["run"]["id"], "progress", report)
            data["progress_report"] = report
    finally:
        store.close()
    live = lock_holder(root)  # the process holding the run lock, if one is working now
    data["live"] = live
    if as_json:
        _print_json(data)
    else:
        if live is not None:
            out.print(f"pm-agent {live.get('command', 'run')} is working now (pid {live.get('pid', '?')})")
        out.print(render_status(data))
        if "progress_report" in data:
            out.print("\n" + data["progress_report"], highlight=False)


def _read_run(repo: Path | None, run: str | None, read: Callable[[Any, str], T]) -> T:
    """Open the store read-side, find the run (default: the latest) and apply `read(store, run_id)`.

    Never creates a store: with no state yet it is a NotFoundError (exit 2).
    """
    from pm_agent.errors import NotFoundError
    from pm_agent.store import default_store_path, open_store

    path = default_store_path(_repo(repo))
    if not path.exists():
        raise NotFoundError(f"no pm-agent state in {path.parent}: start with `pm-agent run PLAN.md`")
    store = open_store(path)
    try:
        run_rec = store.get_run(run) if run else store.latest_run()
        if run_rec is None:
            raise NotFoundError(f"no run in {path}")
        return read(store, run_rec.id)
    finally:
        store.close()


@app.command("reports")
def reports_cmd(
    run: Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="progress or handoff (default: all).")] = None,
    repo: RepoOption = None,
) -> None:
    """Print the stored progress reports and handoff summaries of a run, oldest first."""
    for report in _call(lambda: _read_run(repo, run, lambda store, run_id: store.list_reports(run_id, kind))):
        out.print(f"--- {report.kind} at {report.created_at:%Y-%m-%d %H:%M:%S}\n{report.text}\n", highlight=False)


@app.command("log")
def log_cmd(
    task: Annotated[str, typer.Argument(help="Task id, e.g. 3 or task-3.")],
    run: Annotated[str | None, typer.Option("--run", help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
) -> None:
    """Print a task's history: transitions, sessions, signals, gates and events in order."""
    from pm_agent.plan import normalize_task_id
    from pm_agent.reports.status import render_task_log

    history = _call(
        lambda: _read_run(repo, run, lambda store, run_id: store.task_history(run_id, normalize_task_id(task)))
    )
    out.print(render_task_log(history), highlight=False)


# ---------------------------------------------------------------- init


@app.command("init")
def init_cmd(
    repo: RepoOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing pm-agent.yaml.")] = False,
) -> None:
    """Write pm-agent.yaml with the lint, typecheck, test and build commands detected in the repository."""
    from pm_agent.config import CONFIG_FILE, PmConfig, render_config
    from pm_agent.preflight.detect import detect_environment

    root = _repo(repo)
    target = root / CONFIG_FILE
    if target.exists() and not force:
        err.print(f"[bold red]error:[/] {target} exists; use --force to overwrite", highlight=False)
        raise typer.Exit(2)
    detection = detect_environment(root)
    target.write_text(render_config(PmConfig(environment=detection.environment)), encoding="utf-8")
    out.print(f"wrote {target}", highlight=False)
    _print_detection(detection)
    _print_preflight(root, PmConfig(environment=detection.environment))


def _print_preflight(root: Path, config: Any) -> None:
    """What `pm-agent run` will find: each command run once on HEAD, as the run's preflight does."""
    from pm_agent.engine.baseline import environment_commands
    from pm_agent.errors import VcsError
    from pm_agent.preflight.baseline import fix_hint, preflight
    from pm_agent.store import default_store_path
    from pm_agent.vcs import Git

    env = config.environment
    commands = environment_commands(config)
    if not any(commands.values()):
        return
    git = Git(root)
    try:
        sha = git.head_sha()
    except VcsError:
        out.print("preflight: skipped (the repository has no commit yet)", highlight=False)
        return
    out.print(f"preflight on {sha[:12]} (what `pm-agent run` checks before any agent starts):", highlight=False)
    baseline = preflight(
        git,
        default_store_path(root).parent,
        sha,
        commands,
        timeout_s=env.gate_timeout_s,
        mode=env.baseline,
        check=False,
        progress=None,
    )
    for entry in baseline.commands:
        if entry.cannot_run:
            fix = fix_hint(entry.key, entry.command, entry.cannot_run, env.gate_timeout_s)
            out.print(f"  {entry.name}: CANNOT RUN: {entry.cannot_run}\n      fix: {fix}", markup=False)
        elif entry.ok:
            out.print(f"  {entry.name}: passes ({entry.duration_ms / 1000:.1f}s)", markup=False)
        else:
            out.print(
                f"  {entry.name}: {entry.summary()}: already failing; gates will fail only on new findings "
                "(environment.baseline: ratchet)",
                markup=False,
            )


def _print_detection(detection: Any) -> None:
    from pm_agent.preflight.detect import Slot

    for slot in Slot:
        chosen = detection.chosen.get(slot)
        if chosen is None:
            out.print(f"  {slot.value}: none", highlight=False)
            continue
        out.print(f"  {slot.value}: {chosen.command}", markup=False, highlight=False)
        out.print(f"      why: {chosen.reason}", markup=False, highlight=False)
        if chosen.problem:
            out.print(f"      NOT READY: {chosen.problem}", markup=False, highlight=False)
    if detection.rejected:
        out.print("not chosen:", highlight=False)
    for rejected in detection.rejected:
        out.print(f"  {rejected.command}: {rejected.why}", markup=False, highlight=False)


# ---------------------------------------------------------------- run, resume, humans


def _channel(no_input: bool) -> Any:
    from pm_agent.human.channels import PrintOnlyChannel, TerminalChannel

    return TerminalChannel() if sys.stdin.isatty() and not no_input else PrintOnlyChannel()


def _finish(result: Any, repo: Path) -> None:
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
    )
    if outcome.waiting or (result.final is not None and result.final.waiting):
        out.print(
            "Answer the open escalations (`pm-agent escalations`, `pm-agent answer ID TEXT`), then `pm-agent resume`."
        )
    if result.final is not None and not result.final.passed and result.final.problems:
        out.print("Final release gate: " + "; ".join(result.final.problems))
    raise typer.Exit(result.exit_code)


def _interrupted(repo: Path) -> NoReturn:
    """Ctrl-C before the loop took over the signals (while checking, scanning the baseline)."""
    err.print(
        f"interrupted before the run got going; if it was recorded, `pm-agent resume -C {repo}` continues it",
        highlight=False,
    )
    raise typer.Exit(130)


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


@app.command("run")
def run_cmd(
    plan: Annotated[
        Path, typer.Argument(help="The plan document (Markdown), or a folder whose Markdown files are one plan.")
    ],
    design: Annotated[Path | None, typer.Option("--design", "-d", help="The design document.")] = None,
    slots: Annotated[int | None, typer.Option("--slots", min=1, max=16, help="Parallel agent slots.")] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent runner: claude (default) or command (from pm-agent.yaml).")
    ] = None,
    repo: RepoOption = None,
    no_input: NoInput = False,
    allow_dirty: AllowDirty = False,
) -> None:
    """Drive a plan to the end: orchestrate, dispatch agents, gate, commit, report, release.

    One run at a time per repository. Tasks already committed on an existing working branch are
    skipped. Exit codes: 0 released (manifest written), 3 waiting for a human answer, 1 failed or
    blocked, 2 bad input (nothing written) or another run in progress, 130/143 stopped by
    SIGINT/SIGTERM (continue with `pm-agent resume`).
    """
    from pm_agent.engine.api import run_plan
    from pm_agent.engine.events import ConsoleListener

    root = _repo(repo)
    if agent is not None and agent not in ("claude", "command"):
        err.print(f"[bold red]error:[/] --agent must be claude or command, not {agent!r}", highlight=False)
        raise typer.Exit(2)
    try:
        result = _call(
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


@app.command("resume")
def resume_cmd(
    run: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    repo: RepoOption = None,
    no_input: NoInput = False,
) -> None:
    """Continue a run after a stop or a crash: nothing committed twice, sessions resumed where they can be.

    Re-reads pm-agent.yaml: environment commands, agent settings, budgets and timeouts take effect
    (recorded as an event with the old and new values); changing working_branch or
    review_artifacts_dir is refused. Same exit codes as `pm-agent run`.
    """
    from pm_agent.engine.api import resume
    from pm_agent.engine.events import ConsoleListener

    root = _repo(repo)
    try:
        result = _call(
            lambda: resume(root, run, listener=ConsoleListener(), channel=_channel(no_input), reread_config=True)
        )
    except KeyboardInterrupt:
        _interrupted(root)
    _finish(result, root)


@app.command("escalations")
def escalations_cmd(
    repo: RepoOption = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include answered and applied ones.")] = False,
    as_json: JsonOption = False,
) -> None:
    """List the escalations waiting for a human (seed 001's format)."""
    from pm_agent.engine.api import escalations
    from pm_agent.reports.escalation import Escalation, render_escalation

    found = _call(lambda: escalations(_repo(repo), include_closed=show_all))
    if as_json:
        _print_json([e.model_dump(mode="json") for e in found])
        return
    if not found:
        out.print("No open escalations.")
        return
    for esc in found:
        body = Escalation(
            problem=esc.problem,
            impact=esc.impact,
            options=esc.options,
            recommended=esc.recommended,
            blocking=esc.blocking,
        )
        where = f"task-{esc.task_id}" if esc.task_id else "the run"
        out.print(
            f"{render_escalation(body, esc.id)}\n(about {where}; {esc.status.value}"
            + (f"; answer: {esc.answer}" if esc.answer else "")
            + ")\n",
            highlight=False,
        )


@app.command("answer")
def answer_cmd(
    escalation: Annotated[int, typer.Argument(help="Escalation id (see `pm-agent escalations`).")],
    text: Annotated[str | None, typer.Argument(help="The answer.")] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read the answer from a file.")] = None,
    repo: RepoOption = None,
) -> None:
    """Answer an escalation; a running pm-agent resumes the waiting agent, a stopped one on `pm-agent resume`."""
    from pm_agent.engine.api import answer

    if (text is None) == (file is None):
        err.print("[bold red]error:[/] give the answer as TEXT or with --file, not both", highlight=False)
        raise typer.Exit(2)
    body = text if text is not None else _call(lambda: _read(file))
    if not body.strip():
        err.print("[bold red]error:[/] the answer is empty", highlight=False)
        raise typer.Exit(2)
    rec = _call(lambda: answer(_repo(repo), escalation, body))
    out.print(f"escalation #{rec.id} answered; a running pm-agent picks it up, else run `pm-agent resume`.")


def _read(path: Path | None) -> str:
    from pm_agent.errors import InputError

    assert path is not None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the answer: {exc}", path=path) from exc


@app.command("demo")
def demo_cmd(
    dest: Annotated[
        Path | None, typer.Option("--dest", help="Folder for the sample repository (default: a new temp folder).")
    ] = None,
    slots: Annotated[int | None, typer.Option("--slots", min=1, max=16, help="Parallel agent slots.")] = None,
) -> None:
    """Run the whole loop on a sample project, offline: real Claude Code CLI, scripted model and user.

    Shows parallel LOW tasks, a CRITICAL task alone, a gate failure repaired by the fix loop, an
    escalation answered by the scripted user, progress reports, the final release gate, the
    manifest and the handoff. Needs no API key and no network.
    """
    from pm_agent.demo.run import closing_lines, run_demo
    from pm_agent.engine.events import ConsoleListener

    result = _call(lambda: run_demo(dest.resolve() if dest else None, listener=ConsoleListener(), slots=slots))
    out.print("\n" + "\n".join(closing_lines(result)), highlight=False)
    raise typer.Exit(result.run.exit_code)
