"""Checks before a run starts, and what a new run takes over from an earlier one on the same branch.

`check_start` reads and writes nothing outside git's own queries: every refusal (not a repository,
no commits, a bad working branch, an agent setup that cannot start, uncommitted changes, an agent CLI
that is not logged in) happens before `.pm-agent/`, a run record or a branch exists. `done_on_branch`
marks the tasks whose `Refs: task-<id>` commit is already on an existing working branch, so a second
run skips them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pm_agent.agents.base import AgentRunner
from pm_agent.agents.factory import runner_from_config
from pm_agent.config import CONFIG_FILE, PmConfig, load_config
from pm_agent.engine.commit_message import commit_message
from pm_agent.engine.events import Listener
from pm_agent.errors import AgentError, ConfigError, InputError, VcsError
from pm_agent.listing import few
from pm_agent.plan import load_plan
from pm_agent.plan.models import Plan, Presence, Task
from pm_agent.statefile import STATE_DIR, mark_state_dir
from pm_agent.store import Store, default_store_path
from pm_agent.vcs import Git, is_protected_branch, working_branch

__all__ = [
    "ALWAYS_READ_FROM_DISK",
    "StartInput",
    "base_branch",
    "check_login",
    "check_start",
    "done_on_branch",
    "exclude_state_dir",
    "login_fix",
    "record_takeover",
    "repo_root",
    "uncommitted_files",
]

# pm-agent reads these itself from the folder it runs in; agents never need them from git.
ALWAYS_READ_FROM_DISK = (".pm-agent/", CONFIG_FILE)
SHOWN_FILES = 10


@dataclass(frozen=True)
class StartInput:
    """Everything a new run needs, checked: the repository root, its configuration and the plan."""

    repo: Path
    config: PmConfig
    plan: Plan
    branch: str
    runner: AgentRunner
    dirty: list[str] = field(default_factory=list)  # uncommitted files accepted with --allow-dirty


def repo_root(path: Path) -> Path:
    """The top folder of the git repository holding `path`; InputError when there is none or it has no commit."""
    path = Path(path)
    if not path.is_dir():
        raise InputError("folder not found", path=path)
    try:
        probe = Git(path).try_run("rev-parse", "--show-toplevel")
    except VcsError as exc:
        raise InputError(f"cannot run git: {exc}", path=path) from exc
    if probe.returncode != 0:
        raise InputError(
            "not a git repository: pm-agent works on a git checkout (`git init`, commit your project, then run)",
            path=path,
        )
    root = Path(probe.stdout.strip())
    if Git(root).try_run("rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
        raise InputError(
            "the repository has no commits yet: agents work from HEAD, so commit your project first",
            path=root,
        )
    return root


def _config_line(repo: Path, key: str) -> tuple[Path | None, int | None]:
    """pm-agent.yaml and the line of a top-level `key` in it, when the file sets it."""
    path = repo / CONFIG_FILE
    if not path.exists():
        return None, None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return path, number
    return path, None


def check_branch(git: Git, branch: str) -> None:
    """Refuse a working branch pm-agent must not or cannot use; the error names pm-agent.yaml's line."""
    path, line = _config_line(git.path, "working_branch")
    if is_protected_branch(branch):
        raise ConfigError(
            f"working_branch {branch!r} is protected: pm-agent never writes to it; "
            "name a branch of its own (default pm/<plan-id>/work)",
            path=path,
            line=line,
        )
    if git.try_run("check-ref-format", "--branch", branch).returncode != 0:
        raise ConfigError(f"working_branch {branch!r} is not a valid git branch name", path=path, line=line)
    if git.current_branch() == branch:
        raise InputError(
            f"the working branch {branch!r} is checked out here; pm-agent needs it free for its "
            f"worktrees: switch to another branch (e.g. {base_branch(git, branch)}) and run again",
            path=git.path,
        )


def check_agent(repo: Path, config: PmConfig) -> AgentRunner:
    """The configured agent runner, built once here so that a runner that cannot start fails before the run does;
    isolated sessions get a HOME under `.pm-agent/`, made by the first session (nothing is written here)."""
    path = repo / CONFIG_FILE
    home = default_store_path(repo).parent / "agent-home" if config.agent.isolated_home else None
    try:
        return runner_from_config(config.agent, home)
    except (AgentError, ConfigError) as exc:
        message = exc.message if isinstance(exc, ConfigError) else str(exc)
        raise ConfigError(f"agent: {message}", path=path if path.exists() else None) from exc


def check_login(repo: Path, config: PmConfig, runner: AgentRunner) -> None:
    """Ask the agent CLI whether it is logged in before anything is written: logged out, every session would end at
    once; InputError (exit 2) saying how to log it in."""
    problem = runner.login_problem()
    if problem is not None:
        path, line = _config_line(repo, "agent")
        raise InputError(f"agent: {problem}, so every session would end at once\n  fix: {login_fix(config)}",
                         path=path, line=line)  # fmt: skip


def login_fix(config: PmConfig) -> str:
    """How to give the agent CLI a login its sessions will see."""
    if config.agent.isolated_home:
        return (
            "agent.isolated_home is true, so sessions get their own HOME under .pm-agent/ and your own login does "
            "not reach them: export ANTHROPIC_API_KEY (or the token of `claude setup-token` as CLAUDE_CODE_OAUTH_TOKEN)"
            " where pm-agent runs, or set agent.isolated_home: false to use your login"
        )
    return (
        "log it in (run `claude`, then /login), or export ANTHROPIC_API_KEY (or the token of `claude setup-token` as "
        "CLAUDE_CODE_OAUTH_TOKEN) where pm-agent runs"
    )


def uncommitted_files(git: Git, exempt: Sequence[Path] = ()) -> list[str]:
    """Changed, staged and untracked (not ignored) paths, less pm-agent's own and the given inputs."""
    skip = list(ALWAYS_READ_FROM_DISK)
    for item in exempt:
        try:
            rel = Path(item).resolve().relative_to(git.path).as_posix()
        except ValueError:
            continue  # outside the repository: not in `git status` anyway
        skip.append(rel + "/" if Path(item).is_dir() else rel)
    found = []
    for entry in git.status_porcelain():
        if any(entry.path == s or (s.endswith("/") and entry.path.startswith(s)) for s in skip):
            continue
        if entry.code == "??" and _local_tooling(git.path, entry.path):
            continue
        found.append(entry.path)
    return found


def _local_tooling(repo: Path, path: str) -> bool:
    """Inside an untracked virtualenv or node_modules: tools installed here, not work an agent would miss
    (seen on real repositories whose .gitignore does not name their `.venv/`)."""
    parts = Path(path).parts
    return any(
        parts[i - 1] == "node_modules" or (repo.joinpath(*parts[:i]) / "pyvenv.cfg").is_file()
        for i in range(1, len(parts))
    )


def _dirty_error(repo: Path, files: list[str]) -> InputError:
    return InputError(
        f"uncommitted changes: {few(files, SHOWN_FILES)}. Agents work from HEAD and would never see them: commit or "
        f"stash them (or pass --allow-dirty to run without them). {CONFIG_FILE} and the plan and design files need "
        "not be committed: pm-agent reads them itself",
        path=repo,
    )


def check_start(
    repo: Path,
    plan_path: Path,
    design_path: Path | None,
    config: PmConfig | None = None,
    *,
    allow_dirty: bool = False,
    runner: AgentRunner | None = None,
) -> StartInput:
    """Every check a new run makes before it writes anything; InputError (exit 2) on the first that fails. `runner`:
    the agent runner to use instead of the configuration's (whose setup is checked all the same)."""
    root = repo_root(repo)
    config = config or load_config(root)
    plan = load_plan(plan_path, design_path, root)
    git = Git(root)
    branch = config.working_branch or working_branch(plan.plan_id)
    check_branch(git, branch)
    configured = check_agent(root, config)
    exempt = [Path(plan_path), *([Path(plan.design_path)] if plan.design_path is not None else [])]
    dirty = uncommitted_files(git, exempt)
    if dirty and not allow_dirty:
        raise _dirty_error(root, dirty)
    runner = runner or configured
    check_login(root, config, runner)
    return StartInput(root, config, plan, branch, runner, dirty)


def done_on_branch(git: Git, branch: str, plan: Plan, baseline: str | None = None) -> tuple[Plan, dict[str, str]]:
    """The plan with tasks already committed on `branch` (a `Refs: task-<id>` trailer) marked EXISTS.

    Returns the updated plan and {task id: commit sha}. A branch that does not exist yet changes nothing.
    `InputError` when the branch holds another plan's commits (a plan file of the same name, so the same
    branch): a task's newest `Refs: task-<id>` commit has a subject that is not this plan's task's and is not in
    `baseline`'s history (other plans' commits merged into trunk are history, not this branch's work).
    """
    if not git.branch_exists(branch):
        return plan, {}
    commits = git.commits_by_trailer_prefix(branch, "task-")
    found: dict[str, str] = {}
    others: list[str] = []
    tasks = []
    own: set[str] | None = None  # the branch's commits the baseline lacks (asked of git once, when needed)

    def branch_work(sha: str) -> bool:
        nonlocal own
        if baseline is None:
            return True
        if own is None:
            own = set(git.commits_since(baseline, branch))
        return sha in own

    for task in plan.tasks:
        # The newest commit decides, leaving out another task's that the baseline has (history, not this branch's).
        sha, subject = next(
            (
                (sha, subject)
                for sha, subject in commits.get(task.ref, [])
                if _same_task(subject, task) or branch_work(sha)
            ),
            ("", ""),
        )
        if not sha:
            tasks.append(task)
            continue
        if not _same_task(subject, task):
            others.append(f"{task.ref}'s commit {sha[:12]} is {subject!r}, this plan's {task.ref} is {task.title!r}")
            continue
        found[task.id] = sha
        reason = f"commit {sha[:12]} on the working branch {branch} carries 'Refs: {task.ref}'"
        tasks.append(
            task.model_copy(
                update={
                    "presence": Presence.EXISTS,
                    "presence_reason": reason,
                    "decision_log": [*task.decision_log, f"working branch: EXISTS: {reason}"],
                }
            )
        )
    if others:
        shown = "; ".join(others[:3]) + (f"; and {len(others) - 3} more" if len(others) > 3 else "")
        raise InputError(
            f"the working branch {branch} holds another plan's commits ({shown}). Keep them under another name"
            f" and start afresh: `git branch -m {branch} {branch}-old`; or, if this is the same plan with tasks"
            " renamed, give them back their titles"
        )
    return plan.model_copy(update={"tasks": tasks}), found


def catch_up(git: Git, branch: str, baseline: str) -> str | None:
    """Move an existing working branch that is already merged (an ancestor of `baseline`) forward to `baseline`,
    so the run's remaining tasks start from what the user has now, not from the branch's old tip; the line
    that says so, or None when the branch is absent, at `baseline`, holds commits `baseline` lacks, or is
    checked out in a worktree (someone works on it: it is left as it is)."""
    if not git.branch_exists(branch):
        return None
    tip = git.rev_parse(f"refs/heads/{branch}")
    if tip == baseline or not git.is_ancestor(tip, baseline) or git.branch_holder(branch) is not None:
        return None
    reason = "pm-agent: the working branch was merged; the run starts from the baseline"
    git.run("update-ref", "-m", reason, f"refs/heads/{branch}", baseline, tip)
    return (
        f"working branch {branch} was already merged here ({tip[:12]} is in {baseline[:12]}'s history): "
        f"moved it forward to {baseline[:12]}, so the remaining tasks start from the code as it is now"
    )


def _same_task(subject: str, task: Task) -> bool:
    """Whether a commit subject can be the one delivery writes for `task`: its description, as far as either goes
    (a long subject is cut short; the type and scope may read differently in another pm-agent version). A
    subject not of the `type(scope): description` form (a person's own commit) cannot be told apart: it is."""
    head, colon, theirs = subject.partition(": ")
    if not colon or " " in head:
        return True
    theirs = theirs.rstrip("…").strip().casefold()
    ours = commit_message(task, "").partition("\n")[0].partition(": ")[2].rstrip("…").strip().casefold()
    return theirs.startswith(ours) or ours.startswith(theirs)


def store_exists(repo: Path) -> bool:
    """Whether `repo` has pm-agent state (read-only commands never create it)."""
    return default_store_path(repo).exists()


def record_takeover(
    store: Store, run_id: str, checked: StartInput, on_branch: dict[str, str], listener: Listener
) -> None:
    """Store the commits of tasks found on the working branch, and say what the run takes over and skips."""
    for task_id, sha in on_branch.items():
        store.update_task(run_id, task_id, event="task.on_branch", commit_sha=sha)
    if on_branch:
        refs = ", ".join(f"task-{t}" for t in on_branch)
        listener.emit(
            "run.existing",
            f"working branch {checked.branch} already has {len(on_branch)} of {len(checked.plan.tasks)} tasks "
            f"committed ({refs}): they are EXISTS and skipped",
        )
    if checked.dirty:
        listener.emit(
            "run.dirty",
            f"--allow-dirty: agents work from HEAD and will not see {len(checked.dirty)} uncommitted "
            f"file(s): {', '.join(checked.dirty[:SHOWN_FILES])}",
        )


def base_branch(git: Git, working: str) -> str:
    """The branch the work goes back into: the remote's default (origin/HEAD), else the one checked out.

    The checked-out branch is where the user started the run from; main or master when neither says.
    """
    remote = git.try_run("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote.returncode == 0 and remote.stdout.strip():
        return remote.stdout.strip().removeprefix("origin/")
    current = git.current_branch()
    if current is not None and current != working:
        return current
    for name in ("main", "master"):
        if git.branch_exists(name):
            return name
    return "your main branch"


def exclude_state_dir(git: Git) -> None:
    """Keep `.pm-agent/` out of `git status` without touching the user's .gitignore (a run's and a request's start),
    and mark it (`statefile.mark_state_dir`)."""
    mark_state_dir(git.path / STATE_DIR)
    exclude = Path(git.git_path("info/exclude"))
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if ".pm-agent/" not in text.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + ".pm-agent/\n", encoding="utf-8")
