"""Asking the agent CLI whether it is logged in before a run (`claude auth status`), with the real Claude Code CLI of
the claude-agent-sdk wheel and with small stand-in CLIs; strict about what the answer means, lenient about the rest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pm_agent.agents.base import SessionRequest
from pm_agent.agents.claude import ClaudeRunner, _not_logged_in, bundled_claude, login_settings
from pm_agent.agents.command import CommandRunner
from pm_agent.testing.model_server import ModelServer, Scenario, Turn

NOT_LOGGED_IN = "is not logged in (`claude auth status`: loggedIn false"


@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        ('{"loggedIn": false, "authMethod": "none"}', f"{NOT_LOGGED_IN}, authMethod none)"),
        ('{"loggedIn": false}', f"{NOT_LOGGED_IN})"),
        ('{"loggedIn": false, "authMethod": null}', f"{NOT_LOGGED_IN})"),
        ('{"loggedIn": true, "authMethod": "api_key"}', None),
        ('{"loggedIn": true, "authMethod": "third_party", "apiProvider": "bedrock"}', None),
        ('{"loggedIn": "false"}', None),  # not the CLI's JSON: it cannot tell
        ('{"authMethod": "none"}', None),
        ("[false]", None),
        ("Usage: claude [options] [command] [prompt]", None),
        ("", None),
    ],
)
def test_only_a_json_logged_in_false_is_a_problem(stdout: str, problem: str | None) -> None:
    found = _not_logged_in(stdout, "/opt/claude")
    if problem is None:
        assert found is None
    else:
        assert found == f"Claude Code (/opt/claude) {problem}"


def _cli(path: Path, stdout: str) -> Path:
    """A stand-in agent CLI that prints `stdout` for any arguments (and records them)."""
    path.write_text(f"#!/bin/sh\necho \"$@\" > {path}.args\ncat <<'EOF'\n{stdout}\nEOF\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_the_answer_is_asked_with_the_sessions_home_and_an_isolated_home_is_not_made(tmp_path: Path) -> None:
    cli = _cli(tmp_path / "claude", '{"loggedIn": false, "authMethod": "none"}')
    home = tmp_path / "state" / "agent-home"
    problem = ClaudeRunner(agent_home=home, binary=str(cli)).login_problem()
    assert problem == f"Claude Code ({cli}) {NOT_LOGGED_IN}, authMethod none)"
    # Asked as sessions run it (no settings file), then once more with them, which says the same here.
    assert Path(f"{cli}.args").read_text(encoding="utf-8") == "auth status\n"
    assert not (tmp_path / "state").exists(), "the check writes nothing where the run keeps its state"


def test_a_login_only_in_a_settings_file_is_named(tmp_path: Path) -> None:
    """Logged in through a settings file (an apiKeyHelper): `auth status` says yes, but not as sessions run it."""
    cli = tmp_path / "claude"
    cli.write_text(
        "#!/bin/sh\necho \"$@\" >> $0.args\n"
        'if [ "$1" = --setting-sources ]; then echo \'{"loggedIn": false, "authMethod": "none"}\'; '
        'else echo \'{"loggedIn": true, "authMethod": "api_key_helper"}\'; fi\n',
        encoding="utf-8",
    )
    cli.chmod(0o755)
    problem = ClaudeRunner(agent_home=None, binary=str(cli)).login_problem()
    assert problem == (
        f"Claude Code ({cli}) {NOT_LOGGED_IN}, authMethod none), as its sessions see it: its login comes from a "
        "part of its settings files that pm-agent's sessions do not get (they get only the apiKeyHelper and the "
        "ANTHROPIC_* env of ~/.claude/settings.json)"
    )
    assert Path(f"{cli}.args").read_text(encoding="utf-8").splitlines() == ["--setting-sources  auth status",
                                                                           "auth status"]  # fmt: skip


def test_a_cli_that_does_not_know_auth_status_is_not_refused(tmp_path: Path) -> None:
    cli = _cli(tmp_path / "claude", "error: unknown command 'auth'")
    assert ClaudeRunner(agent_home=None, binary=str(cli)).login_problem() is None
    assert CommandRunner(["my-agent", "{prompt}"]).login_problem() is None


def test_the_real_cli_logged_out_and_with_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wheel's Claude Code: logged out in an empty HOME; logged in by an API key (nothing leaves the machine:
    `auth status` asks no server)."""
    binary = bundled_claude()
    assert binary is not None
    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    runner = ClaudeRunner(agent_home=tmp_path / "agent-home", binary=str(binary))
    problem = runner.login_problem()
    assert problem is not None
    assert f"{NOT_LOGGED_IN}, authMethod none)" in problem
    assert not (tmp_path / "agent-home").exists()
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")  # `claude setup-token`'s: it reaches the CLI
    assert runner.login_problem() is None
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert runner.login_problem() is None
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    helper = tmp_path / "user-home" / ".claude" / "settings.json"  # the user's login through an apiKeyHelper
    helper.parent.mkdir(parents=True)
    helper.write_text(json.dumps({"apiKeyHelper": "echo sk-ant-helper"}), encoding="utf-8")
    assert ClaudeRunner(agent_home=None, binary=str(binary)).login_problem() is None, "sessions get the helper"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    (tmp_path / "agent-home").mkdir()  # a run's home after its first session: the check uses it
    assert ClaudeRunner(agent_home=tmp_path / "agent-home", binary=str(binary)).login_problem() is None
    assert json.loads((tmp_path / "agent-home" / ".claude.json").read_text(encoding="utf-8")) is not None


async def test_a_session_gets_the_login_of_the_users_settings_and_nothing_else_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wheel's Claude Code logged in only by ~/.claude/settings.json (an apiKeyHelper and the server in its env,
    as a company proxy is set up): the session reaches the server with the helper's key; the file's hook does not
    run (sessions read no settings file, they get the login's part of it)."""
    binary = bundled_claude()
    assert binary is not None
    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "CLAUDE_"))]:
        monkeypatch.delenv(name)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # the settings' env wins, as Claude Code has it
    hooked = tmp_path / "user-hook-ran"
    with ModelServer([Scenario("helper", [Turn(text="hello")])]) as server:
        settings = {
            "apiKeyHelper": "echo sk-ant-from-helper",
            "env": {"ANTHROPIC_BASE_URL": server.url, "UNRELATED": "x"},
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {hooked}"}]}]},
        }
        (home / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        assert login_settings(None) == {"apiKeyHelper": "echo sk-ant-from-helper",
                                        "env": {"ANTHROPIC_BASE_URL": server.url}}  # fmt: skip
        runner = ClaudeRunner(agent_home=None, binary=str(binary), max_retries=0)
        assert runner.login_problem() is None
        session = await runner.start(SessionRequest(prompt="[scenario:helper] hi", workdir=tmp_path / "work",
                                                    role="developer"))  # fmt: skip
        outcome = await session.wait()
        asked = server.requests_for("helper")
    assert (outcome.exit_code, outcome.account_error, outcome.is_error) == (0, None, False)
    assert len(asked) == 1
    assert asked[0].headers.get("x-api-key") == "sk-ant-from-helper"
    assert not hooked.exists(), "the user's own hook stays out of the session"
