"""signal_back through the real Claude Code CLI, played by the scripted model server.

The CLI starts our server from `mcp_config`, offers the tool to the model, forwards the model's
arguments as the model sent them (numbers, nulls and all: the CLI does not check them against the
schema), and hands our refusal text back to the model, which then corrects itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pm_agent.signals import TOOL_NAME, mcp_config, signal_instructions
from pm_agent.testing.model_server import ModelRequest, ModelServer, Scenario, ToolCall, Turn, marker

if TYPE_CHECKING:
    from conftest import World

pytestmark = [pytest.mark.claude, pytest.mark.slow, pytest.mark.timeout(150)]


def run_claude(
    world: World, token: str, scenario: str, claude_bin: Path, agent_home: Path, tmp_path: Path, env: dict[str, str]
) -> list[dict[str, Any]]:
    """Run the real CLI once on the scripted model, with our signal server; returns its stream-json events."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(mcp_config(world.db, token)))
    for folder in ("xdg", "cc-tmp"):
        (tmp_path / folder).mkdir(exist_ok=True)
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(agent_home),
        "XDG_RUNTIME_DIR": str(tmp_path / "xdg"),
        "CLAUDE_CODE_TMPDIR": str(tmp_path / "cc-tmp"),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ENABLE_TOOL_SEARCH": "false",
        **env,
    }
    prompt = f"{marker(scenario)} Implement task 3.\n\n{signal_instructions('developer', '3')}"
    done = subprocess.run(
        [
            str(claude_bin),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            f"--mcp-config={config}",
            "--strict-mcp-config",
            f"--allowedTools={TOOL_NAME}",
            "--setting-sources",
            "",
            "--max-turns",
            "5",
        ],
        cwd=tmp_path,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (init,) = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    assert {"name": "pm", "status": "connected"}.items() <= init["mcp_servers"][0].items(), done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    return events


def test_claude_code_gets_the_refusal_text_and_its_corrected_signal_is_stored(
    world: World,
    complete: dict[str, Any],
    model_server: ModelServer,
    claude_bin: Path,
    agent_home: Path,
    tmp_path: Path,
) -> None:
    session = world.session("developer")
    seen: list[ModelRequest] = []

    def correct(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn(tool_calls=[ToolCall(TOOL_NAME, complete)])

    def finish(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn(text="Signalled; stopping.")

    bad = {"signal": "complete", "stepId": "task-3", "summry": "typo"}
    model_server.add(Scenario("signal", [Turn(tool_calls=[ToolCall(TOOL_NAME, bad)]), correct, finish]))
    run_claude(world, session.token, "signal", claude_bin, agent_home, tmp_path, model_server.env())

    first = model_server.requests_for("signal")[0]
    (offered,) = [t for t in first.body["tools"] if t["name"] == TOOL_NAME]
    assert "criteriaMapping" in offered["input_schema"]["properties"]

    refusal, accepted = seen
    (result,) = refusal.tool_results()
    assert result.get("is_error") is True
    assert "Signal refused: invalid complete signal:" in refusal.tool_result_text()
    assert "- summary: required" in refusal.tool_result_text()
    assert "- summry: unknown field; did you mean 'summary'?" in refusal.tool_result_text()
    assert "Signal complete recorded for task 3." in accepted.tool_result_text()

    stored = world.signals(session)
    assert [(s.seq, s.accepted) for s in stored] == [(1, False), (2, True)]
    assert stored[0].payload == bad
    assert stored[1].payload["summary"] == complete["summary"]


def test_a_flat_schema_filled_with_nulls_and_blanks_is_accepted_on_the_first_call(
    world: World,
    complete: dict[str, Any],
    model_server: ModelServer,
    claude_bin: Path,
    agent_home: Path,
    tmp_path: Path,
) -> None:
    """What models send for a flat schema: every field present, the other signals' ones null or blank."""
    session = world.session("developer")
    flat = {
        **complete,
        "stepId": 3,
        "selfAssessment": "Confident",
        "progress": None,
        "continuationPoint": "",
        "question": None,
        "targetRole": "",
        "reason": None,
        "context": "",
        "resume": None,
        "filesModified": None,
        "filesDeleted": [],
        "lintEvidence": ["", "All checks passed!"],
        "typecheckEvidence": "",
        "blockers": None,
    }
    seen: list[ModelRequest] = []

    def finish(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn(text="Signalled; stopping.")

    model_server.add(Scenario("flat", [Turn(tool_calls=[ToolCall(TOOL_NAME, flat)]), finish]))
    run_claude(world, session.token, "flat", claude_bin, agent_home, tmp_path, model_server.env())

    (answer,) = seen
    (result,) = answer.tool_results()
    assert result.get("is_error") is not True, answer.tool_result_text()
    assert "Signal complete recorded for task 3." in answer.tool_result_text()
    (stored,) = world.signals(session)
    assert stored.accepted
    assert stored.payload["stepId"] == "3"
    assert stored.payload["selfAssessment"] == "confident"
    assert stored.payload["lintEvidence"] == ["All checks passed!"]
    assert stored.payload["filesModified"] == stored.payload["typecheckEvidence"] == []
    assert not {"progress", "continuationPoint", "question", "targetRole", "reason", "context", "resume"} & set(
        stored.payload
    )
    assert stored.reason.startswith("normalised: stepId: the number 3 read as '3'; ")
    for note in [
        "selfAssessment: 'Confident' read as 'confident'",
        "question: null ignored (a needs-user-input field)",
        "context: '' ignored (a needs-user-input field)",
        "filesModified: null read as []",
        "lintEvidence: 1 blank entry dropped",
        "typecheckEvidence: '' read as []",
        "blockers: null read as []",
    ]:
        assert note in stored.reason
