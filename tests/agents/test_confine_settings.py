"""The confinement settings given to Claude Code, and reading back what was refused."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from pm_agent.agents.base import Confinement, Denial, SessionRequest
from pm_agent.agents.claude import ClaudeRunner
from pm_agent.agents.confine import HOOK_MATCHER, claude_settings, collect_denials, deny_rules, stream_denials


def layout(tmp_path: Path) -> Confinement:
    repo = tmp_path / "repo"
    state = repo / ".pm-agent"
    worktree = state / "worktrees" / "r1" / "task-1"
    worktree.mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "README.md").write_text("# r\n", encoding="utf-8")
    (repo / ".git").mkdir()
    db = state / "state.db"
    return Confinement(
        worktree=worktree,
        checkout=repo,
        state_dir=state,
        protected=(db, state / "state.db-wal", state / "state.db-shm"),
        denial_log=state / "guard" / "session-1.jsonl",
    )


def test_deny_rules_cover_the_store_and_the_checkout_but_not_the_worktree(tmp_path: Path) -> None:
    conf = layout(tmp_path)
    repo = tmp_path / "repo"
    assert deny_rules(conf) == [
        f"Edit(/{repo}/.pm-agent/state.db)",
        f"Edit(/{repo}/.pm-agent/state.db-wal)",
        f"Edit(/{repo}/.pm-agent/state.db-shm)",
        f"Edit(/{repo}/.pm-agent/guard/session-1.jsonl)",
        f"Edit(/{repo}/.git/**)",
        f"Edit(/{repo}/README.md)",
        f"Edit(/{repo}/src/**)",
    ]
    assert all(rule.startswith("Edit(//") for rule in deny_rules(conf))  # absolute: a double slash
    assert not any(".pm-agent/**" in rule or rule == f"Edit(/{repo}/**)" for rule in deny_rules(conf))


def test_an_entry_added_to_the_checkout_or_re_pointed_is_in_the_next_sessions_rules(tmp_path: Path) -> None:
    """The checkout's listing is kept between sessions: a change to the directory must still show at once."""
    conf = layout(tmp_path)
    repo = tmp_path / "repo"
    before = deny_rules(conf)
    (repo / "docs").mkdir()
    assert deny_rules(conf) == [*before[:6], f"Edit(/{repo}/docs/**)", *before[6:]]
    (repo / "docs").rmdir()
    (repo / "docs").symlink_to(repo / ".pm-agent")  # now it holds the worktree: no rule (the store's cover it)
    assert deny_rules(conf) == before
    (repo / "docs").unlink()
    (repo / "docs").symlink_to(repo / "src")  # re-pointed: a rule on the link itself, not on a tree
    assert f"Edit(/{repo}/docs)" in deny_rules(conf)


def test_the_settings_turn_on_blockwrites_and_a_blocking_hook(tmp_path: Path) -> None:
    conf = layout(tmp_path)
    settings = claude_settings(conf, python="/usr/bin/python3")
    assert settings["permissions"]["blockWritesOutsideWorkingDirectories"] is True
    (entry,) = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == HOOK_MATCHER
    (handler,) = entry["hooks"]
    assert handler["onFailure"] == "block"
    argv = shlex.split(handler["command"])
    assert argv[:3] == ["/usr/bin/python3", "-I", "-S"]
    assert argv[3].endswith("guard_hook.py")
    assert argv[argv.index("--worktree") + 1] == str(conf.worktree)
    assert argv[argv.index("--checkout") + 1] == str(conf.checkout)
    assert argv[argv.index("--log") + 1] == str(conf.denial_log)


def test_the_runner_passes_the_settings_file_only_when_confined(tmp_path: Path) -> None:
    runner = ClaudeRunner(agent_home=tmp_path / "home", binary=[sys.executable, "-c", "pass"])
    free = SessionRequest(prompt="p", workdir=tmp_path, role="developer")
    assert not any(a.startswith("--settings=") for a in runner.argv(free, None))
    args = runner.argv(free, None, tmp_path / "settings.json")
    assert f"--settings={tmp_path / 'settings.json'}" in args
    assert args.index(f"--settings={tmp_path / 'settings.json'}") < args.index("--")


def test_denials_from_the_stream_and_the_hook_log_are_merged_once_each(tmp_path: Path) -> None:
    log = tmp_path / "hook.jsonl"
    hook_line = {"tool": "Bash", "tool_use_id": "t2", "target": "echo x > /r/f", "reason": "writes /r/f"}
    log.write_text(json.dumps(hook_line) + "\nnot json\n", encoding="utf-8")
    result = {
        "type": "result",
        "permission_denials": [
            {"tool_name": "Write", "tool_use_id": "t1", "tool_input": {"file_path": "/r/.pm-agent/state.db"}},
            {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "echo x > /r/f"}},
            {"tool_name": "Write", "tool_use_id": "t3", "tool_input": {"file_path": "/outside/o.txt"}},
        ],
    }
    system = {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": "Write",
        "tool_use_id": "t3",
        "decision_reason": "Writes outside the working directories are blocked",
    }
    from_stream = [*stream_denials(system), *stream_denials(result), *stream_denials({"type": "assistant"})]
    denials = {d.tool_use_id: d for d in collect_denials(from_stream, log)}
    assert set(denials) == {"t1", "t2", "t3"}
    assert denials["t1"] == Denial(
        "Write", "/r/.pm-agent/state.db", "permission-rules", "refused by the session's permission settings", "t1"
    )
    assert denials["t2"] == Denial("Bash", "echo x > /r/f", "guard-hook", "writes /r/f", "t2")
    assert denials["t3"].target == "/outside/o.txt"
    assert denials["t3"].reason == "Writes outside the working directories are blocked"
    assert collect_denials([], tmp_path / "missing.jsonl") == []
