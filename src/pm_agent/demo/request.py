"""`pm-agent demo --request`: the front door offline. The textstats request goes through `pm-agent new`:
the scripted analyst asks one question (the scripted user answers it) and writes the requirements,
the scripted planner writes the textstats plan with one deliberate error (a dependency on a task
that does not exist), gets pm-agent's exact message back in the same session and corrects it; the
scripted user approves; then the plan runs as in `pm-agent demo`.

`RequestBrain` plays the analyst and planner of the request and hands every other session to
`DemoBrain`, whose developers, fixers and reviewers work from the same task data (tasks.yaml).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pm_agent.agents.header import parse_session_header
from pm_agent.config import CONFIG_FILE, load_config
from pm_agent.demo.brain import DemoBrain
from pm_agent.demo.project import DEFAULT_DATE, render_config, render_plan, skeleton_files
from pm_agent.demo.run import _model_env, missing_prerequisites, scripted_answer
from pm_agent.demo.tasks import DEMO_TASKS, DemoTask
from pm_agent.engine.events import Listener
from pm_agent.errors import InputError
from pm_agent.human.channels import ScriptedChannel
from pm_agent.intake import IntakePaths, RequestResult, new_request
from pm_agent.store import EscalationRecord
from pm_agent.testing.model_server import ModelRequest, ModelServer, Turn
from pm_agent.testing.repo import init_repo
from pm_agent.testing.team import ScriptedTeam, Step, signal, write

__all__ = ["DEMO_REQUEST", "RequestBrain", "RequestDemo", "request_closing_lines", "run_request_demo"]

DEMO_REQUEST = (
    "Build textstats: a small library and command line that report word, sentence, syllable and "
    "readability statistics for a text, with safe input validation, docs, editor config and a changelog."
)
QUESTION = "How large may one input text be before textstats refuses it?"
ANSWER = "1 MB of UTF-8; refuse anything larger with a clear error"
PATHS = IntakePaths.of(DEMO_REQUEST, date.fromisoformat(DEFAULT_DATE), slug="textstats")
BROKEN_DEPENDENCY = "Task 12"  # the planner's deliberate slip: task 9 depends on a task the plan lacks


def _traced(task: DemoTask) -> DemoTask:
    """The task with each criterion naming its scenario (`S<n>: ...`), as the planner must write them."""
    criteria = tuple(dataclasses.replace(c, text=f"S{task.number}: {c.text}") for c in task.criteria)
    return dataclasses.replace(task, criteria=criteria)


def request_plan(*, broken: bool = False) -> str:
    """The textstats plan as the planner writes it: each criterion traced to its scenario."""
    text = render_plan([_traced(t) for t in DEMO_TASKS], design_name=Path(PATHS.design_rel).name)
    if broken:
        last = DEMO_TASKS[-1]
        text = text.replace(
            f"### Task {last.number}: {last.title}\n",
            f"### Task {last.number}: {last.title}\n\n**Depends on:** {BROKEN_DEPENDENCY}\n",
            1,
        )
    return text


def requirements() -> str:
    """The requirements the analyst writes: one BDD scenario per capability of the request."""
    lines = ["# Requirements: textstats", "", "## Request", DEMO_REQUEST, "", "## Scenarios"]
    for task in DEMO_TASKS:
        first = task.criteria[0].text if task.criteria else task.title
        lines += [
            f"### S{task.number}: {task.title}",
            f"Given {task.description.split('. ')[0].rstrip('.')}",
            "When a user or a test uses it",
            f"Then {first}",
            "",
        ]
    lines += [
        "## Contexts",
        f"Plain text of any language; at most {ANSWER}.",
        "",
        "## Observables",
        "Return values of the library functions, the CLI's output and exit code, the docs files.",
        "",
        "## Non-goals",
        "Languages other than English for syllables and readability; file formats other than plain text.",
        "",
        "## Open questions",
        "none",
        "",
    ]
    return "\n".join(lines)


def _done(summary: str) -> Step:
    return signal({"signal": "complete", "summary": summary, "selfAssessment": "confident"})


def request_scripts() -> dict[tuple[str, str], Sequence[Step]]:
    """The analyst's and the planner's sessions, step by step (a resumed session continues its list)."""
    ask = {"signal": "needs-user-input", "question": QUESTION, "context": "The request says 'safe input' only."}
    return {
        ("task-requirements", "analyst"): [
            signal(ask),
            write(PATHS.design_rel, requirements()),
            _done(f"{len(DEMO_TASKS)} scenarios, S1-S{len(DEMO_TASKS)}"),
        ],
        ("task-plan", "planner"): [
            write(PATHS.plan_rel, request_plan(broken=True)),
            _done(f"{len(DEMO_TASKS)} tasks"),
            write(PATHS.plan_rel, request_plan()),
            _done(f"{len(DEMO_TASKS)} tasks; the dependency on a missing task removed"),
        ],
    }


class RequestBrain:
    """The request's analyst and planner (scripted), and `DemoBrain` for every other session."""

    def __init__(self, *, python: str | None = None) -> None:
        self.demo = DemoBrain(python=python)
        self.team = ScriptedTeam(request_scripts())

    def __call__(self, request: ModelRequest) -> Turn | None:
        header = parse_session_header(request.system_text())
        if header is not None and header.task in ("task-requirements", "task-plan"):
            return self.team(request)
        return self.demo(request)


def request_answer(esc: EscalationRecord) -> str | None:
    """The scripted user: answers the analyst, approves the plan, then answers as in `pm-agent demo`."""
    if esc.source == "intake-question":
        return ANSWER
    if esc.source == "intake-approval":
        return "approve"
    return scripted_answer(esc)


@dataclass(frozen=True)
class RequestDemo:
    """Where the demo left its repository, and how far the request got."""

    repo: Path
    result: RequestResult


def run_request_demo(dest: Path | None, *, listener: Listener, slots: int | None = None) -> RequestDemo:
    """Build the textstats skeleton (no plan) and take the request through `pm-agent new` to the release."""
    problem = missing_prerequisites()
    if problem is not None:
        raise InputError(problem)
    if dest is None:
        dest = Path(tempfile.mkdtemp(prefix="pm-agent-demo-")) / "textstats"
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("the demo needs a new or empty folder", path=dest)
    files = {**skeleton_files(), CONFIG_FILE: render_config(sys.executable)}
    repo = init_repo(dest, files=files, message="textstats: skeleton")
    listener.emit("run.demo", f"demo repository: {repo} (request mode; model: scripted, offline; human: scripted)")
    with ModelServer(fallback=RequestBrain()) as server, _model_env(server.url):
        result = new_request(
            repo,
            DEMO_REQUEST,
            listener=listener,
            channel=ScriptedChannel(request_answer),
            config=load_config(repo),
            slots=slots,
            slug="textstats",
            today=date.fromisoformat(DEFAULT_DATE),
        )
    return RequestDemo(repo, result)


def request_closing_lines(demo: RequestDemo) -> list[str]:
    """What `pm-agent demo --request` prints at the end."""
    result, repo = demo.result, demo.repo
    lines = [
        f"The demo repository is at {repo}",
        f"  pm-agent log requirements --run {result.intake_run} -C {repo}    (and: log plan)",
    ]
    run = result.run
    if run is not None and run.final is not None and run.final.passed:
        return [
            *lines,
            f"  git -C {repo} log --oneline {run.working_branch}",
            f"  git -C {repo} show {run.working_branch}:{PATHS.design_rel}",
            f"demo finished: request → requirements → plan → released, manifest {run.final.manifest_file} "
            f"on {run.working_branch} (exit {result.exit_code})",
        ]
    return [*lines, f"demo ended without a release (exit {result.exit_code})"]
