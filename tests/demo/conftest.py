"""Demo fixtures: the demo repository, and an offline agent loop that plays the brain's turns for real.

`run_offline` is a tiny stand-in for Claude Code: it sends the brain requests shaped like the CLI's
(system prompt with pm-agent's session line, the conversation so far), runs the Read, Write and Bash
calls for real in the workdir (Write refuses to overwrite a file the session did not Read, as Claude
Code does), and validates every signal_back call with `parse_signal`. The real CLI runs in
test_demo_claude.py; this loop makes the whole plan cheap to play.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pm_agent.agents.session import answer_prompt
from pm_agent.config import load_config
from pm_agent.demo import DemoBrain, DemoRepo, build_demo_repo, session_header
from pm_agent.engine.prompt_builder import render_contract, render_prompt, task_contract
from pm_agent.plan import Plan, load_plan
from pm_agent.signals import TOOL_NAME, AnySignal, parse_signal, signal_instructions, signal_payload
from pm_agent.testing.model_server import ModelRequest

SYSTEM_BASE = "You are Claude Code, Anthropic's official CLI for Claude."


@dataclass
class Demo:
    """A fresh demo repository and its parsed plan."""

    paths: DemoRepo
    plan: Plan

    @property
    def repo(self) -> Path:
        return self.paths.repo


@pytest.fixture
def demo(tmp_path: Path) -> Demo:
    paths = build_demo_repo(tmp_path / "textstats")
    return Demo(paths, load_plan(paths.plan, paths.design, paths.repo))


def prompt_for(demo: Demo, task_id: str, role: str, extra: str = "") -> str:
    """The prompt pm-agent's templates give `role` on `task_id` (contract, extra text, signal instructions)."""
    task = demo.plan.task(task_id)
    config = load_config(demo.repo)
    contract = task_contract(task, config, shared_context=demo.plan.shared_context.render(), task_delta="")
    values = {
        "contract": render_contract(contract),
        "extra": extra,
        "signal_instructions": signal_instructions(role, task.ref, criteria=task.acceptance_criteria),
        "attempt": "1",
        "retry_budget": str(config.retry_budget),
        "review_depth": "full",
    }
    return render_prompt(role, values)


@dataclass
class Offline:
    """One offline session: its conversation, the signals it sent, the commands it ran."""

    system: str
    workdir: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    signals: list[AnySignal] = field(default_factory=list)
    payloads: list[dict[str, Any]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)
    read: set[Path] = field(default_factory=set)
    turns: int = 0
    bash_output: str | None = None  # answer every Bash call with this text instead of running it

    @property
    def signal(self) -> AnySignal:
        assert self.signals, "the session sent no signal"
        return self.signals[-1]

    @property
    def payload(self) -> dict[str, Any]:
        assert self.payloads, "the session sent no signal"
        return self.payloads[-1]

    def request(self) -> ModelRequest:
        body = {
            "system": [{"type": "text", "text": SYSTEM_BASE}, {"type": "text", "text": self.system}],
            "messages": self.messages,
            "tools": [{"name": n} for n in ("Read", "Write", "Bash", TOOL_NAME)],
            "stream": True,
        }
        return ModelRequest("POST", "/v1/messages?beta=true", {"x-claude-code-session-id": "offline"}, body)

    def _run(self, name: str, args: Mapping[str, Any]) -> tuple[str, bool]:
        if name == "Read":
            path = Path(str(args["file_path"]))
            if not path.is_file():
                return f"File does not exist: {path}", True
            self.read.add(path)
            return path.read_text(encoding="utf-8"), False
        if name == "Write":
            path = Path(str(args["file_path"]))
            assert path.is_absolute(), path
            assert path.resolve().is_relative_to(self.workdir.resolve()), f"write outside the workdir: {path}"
            if path.exists() and path not in self.read:
                return "File has not been read yet. Read it first before writing to it.", True
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(args["content"]), encoding="utf-8")
            self.written[path.relative_to(self.workdir).as_posix()] = str(args["content"])
            return f"File created successfully at: {path}", False
        if name == "Bash":
            command = str(args["command"])
            self.commands.append(command)
            if self.bash_output is not None:
                return self.bash_output, False
            done = subprocess.run(
                command, shell=True, cwd=self.workdir, capture_output=True, text=True, timeout=300, check=False
            )
            output = (done.stdout + done.stderr).strip()
            return (f"Exit code {done.returncode}\n{output}" if done.returncode else output), done.returncode != 0
        if name == TOOL_NAME:
            signal = parse_signal(dict(args))  # raises if the brain sent an invalid payload
            self.signals.append(signal)
            self.payloads.append(signal_payload(signal))
            return f"Signal {signal.signal} recorded.", False
        raise AssertionError(f"unexpected tool {name}")

    def play(self, brain: DemoBrain, max_turns: int = 20) -> Offline:
        """Play turns until the brain ends its turn without tool calls."""
        for _ in range(max_turns):
            turn = brain(self.request())
            assert turn is not None, "the brain did not answer a session request"
            self.turns += 1
            content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
            results: list[dict[str, Any]] = []
            for index, call in enumerate(turn.tool_calls):
                tool_id = f"toolu_{len(self.messages):03d}_{index}"
                content.append({"type": "tool_use", "id": tool_id, "name": call.name, "input": dict(call.input)})
                text, is_error = self._run(call.name, call.input)
                results.append({"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error})
            self.messages.append({"role": "assistant", "content": content})
            if not turn.tool_calls:
                return self
            self.messages.append({"role": "user", "content": results})
        raise AssertionError("the brain did not end its turn")

    def resume(self, brain: DemoBrain, prompt: str) -> Offline:
        """Continue the conversation with a new user message (`--resume`), then play."""
        self.messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
        return self.play(brain)


def run_offline(
    brain: DemoBrain,
    demo: Demo,
    task_id: str,
    role: str,
    *,
    attempt: int = 1,
    extra: str = "",
    workdir: Path | None = None,
    bash_output: str | None = None,
) -> Offline:
    """One offline session of `role` on `task_id` in `workdir` (default: the demo repository)."""
    where = workdir or demo.repo
    system = session_header(role, f"task-{task_id}", attempt, where) + "\nReport back only through signal_back."
    session = Offline(system=system, workdir=where, bash_output=bash_output)
    prompt = prompt_for(demo, task_id, role, extra)
    session.messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    return session.play(brain)


def answer(session: Offline, brain: DemoBrain, text: str) -> Offline:
    """Resume a session that asked the user, with pm-agent's answer message."""
    return session.resume(brain, answer_prompt(session.payload, text))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def run(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, timeout=300, check=False)
