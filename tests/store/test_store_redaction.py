"""Secrets are redacted before they reach the store file: transcripts, signals, gate evidence, events."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pm_agent import redaction
from pm_agent.gates.secret_scan import check_secrets
from pm_agent.redaction import redact, redact_text, remember_secret
from pm_agent.store import SqliteStore
from pm_agent.vcs import Git

API_KEY = "sk-ant-api03-redaction-test-7f3a9c1e5b"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"  # ghp_ and 36 characters


def db_bytes(db_path: Path) -> bytes:
    """The store file and its write-ahead log, as bytes on disk."""
    return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))


def stream_line(text: str) -> str:
    """A Claude Code stream-json line carrying a Bash tool result."""
    block = {"type": "tool_result", "tool_use_id": "toolu_01", "content": text}
    return json.dumps({"type": "user", "message": {"role": "user", "content": [block]}, "session_id": "s-1"})


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    return API_KEY


def test_a_transcript_line_is_stored_without_the_env_key_or_an_aws_key(
    store: SqliteStore, run_id: str, db_path: Path, api_key: str
) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    line = stream_line(f"{api_key}\nexport AWS_ACCESS_KEY_ID={AWS_KEY}\nok")
    clean = stream_line("3 passed in 0.01s")

    store.record_session_event(session.id, 1, "user", line)
    store.record_session_event(session.id, 2, "user", clean)
    store.update_session(session.id, last_lines=f"echo {api_key}\n{AWS_KEY}")

    stored = [e.payload for e in store.session_events(session.id)]
    assert stored[1] == clean, "a line without secrets is stored byte for byte"
    content = json.loads(stored[0])["message"]["content"][0]["content"]
    assert content == "[REDACTED:$ANTHROPIC_API_KEY]\nexport AWS_ACCESS_KEY_ID=[REDACTED:AWS Access Key]\nok"
    assert store.get_session(session.id).last_lines == "echo [REDACTED:$ANTHROPIC_API_KEY]\n[REDACTED:AWS Access Key]"
    store.close()
    on_disk = db_bytes(db_path)
    assert api_key.encode() not in on_disk
    assert AWS_KEY.encode() not in on_disk


def test_signal_payloads_gate_evidence_events_and_escalations_are_redacted(
    store: SqliteStore, run_id: str, db_path: Path, api_key: str
) -> None:
    session = store.create_session(run_id, "1", "developer", 1, "tok", "claude", "/w")
    store.record_signal(
        run_id=run_id,
        task_id="1",
        session_id=session.id,
        attempt=1,
        seq=1,
        kind="complete",
        payload={"summary": f"used {GITHUB} to clone", "filesCreated": ["src/a.py"], "attempt": 1},
        accepted=True,
    )
    store.record_gate_result(
        run_id, "1", attempt=1, gate="3-tests-run", passed=False, evidence=f"FAILED: key={api_key!r}"
    )
    store.append_event(run_id, "fix.requested", {"evidence": f"token {GITHUB}", "n": 3}, task_id="1")
    store.open_escalation(
        run_id, "1", source="retry-budget", problem=f"leaked {AWS_KEY}", impact="i", options=["a"], recommended="a"
    )

    (signal,) = store.signals_for_session(session.id)
    assert signal.payload == {
        "summary": "used [REDACTED:GitHub Token] to clone",
        "filesCreated": ["src/a.py"],
        "attempt": 1,
    }
    (gate,) = store.gate_results(run_id, "1")
    assert gate.evidence == "FAILED: key='[REDACTED:$ANTHROPIC_API_KEY]'"
    fix = next(e for e in store.events(run_id, "1") if e.kind == "fix.requested")
    assert fix.payload == {"evidence": "token [REDACTED:GitHub Token]", "n": 3}
    assert "[REDACTED:AWS Access Key]" in store.list_escalations(run_id)[0].problem
    store.close()
    on_disk = db_bytes(db_path)
    for value in (api_key, AWS_KEY, GITHUB):
        assert value.encode() not in on_disk, value


def test_a_value_the_secrets_gate_found_is_redacted_wherever_it_shows_up_later(tmp_path: Path) -> None:
    repo = Git.init(tmp_path / "repo")
    (repo.path / "README.md").write_text("# x\n")
    repo.run("add", "-A")
    repo.run("-c", "user.name=T", "-c", "user.email=t@x", "commit", "-qm", "base")
    base = repo.head_sha()
    # Only detect-secrets' entropy plugin finds this one; the redactor's pattern plugins alone would not.
    value = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    (repo.path / "settings.py").write_text(f'UPSTREAM_SIGNATURE = "{value}"\n')
    assert redact_text(f"signature is {value}") == f"signature is {value}"

    result = check_secrets(repo.path, base)

    assert not result.passed
    assert value not in result.evidence
    assert redact_text(f"signature is {value}") == "signature is [REDACTED:Hex High Entropy String]"


def test_redaction_keeps_ordinary_text_shas_and_short_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to replace safely
    monkeypatch.setenv("KEY_FILE_TOKEN", "/etc/keys/token.pem")  # a path: where a secret is, not the secret
    text = "commit 7408996a1b2c3d4e5f60718293a4b5c6d7e8f901: abc in /etc/keys/token.pem; 3 passed"
    assert redact_text(text) == text
    assert redact({"tree": "79bd471834c488b0aab882e10c91661e2a809208", "n": 1}) == {
        "tree": "79bd471834c488b0aab882e10c91661e2a809208",
        "n": 1,
    }
    remember_secret("tiny", "test")
    assert redact_text("a tiny word") == "a tiny word"


def test_private_key_blocks_and_passwords_in_code_and_urls() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x\nq9Z\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"before\n{key}\nafter") == "before\n[REDACTED:Private Key]\nafter"
    assert redact_text('db_password = "correct-horse-battery"') == 'db_password = "[REDACTED:Secret Keyword]"'
    assert "s3cr3tpass" not in redact_text("cloning https://bot:s3cr3tpass@git.example.com/x.git")
    not_json = "{not json " + GITHUB
    assert redact(not_json) == "{not json [REDACTED:GitHub Token]"


def test_a_remembered_key_header_does_not_split_the_key_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # The secrets gate remembers what detect-secrets reports for a key: its header line.
    monkeypatch.setattr(redaction, "_remembered", {})
    remember_secret("BEGIN RSA PRIVATE KEY", "Private Key")
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"a\n{key}\nb") == "a\n[REDACTED:Private Key]\nb"


def test_raw_sqlite_rows_hold_no_secret(store: SqliteStore, run_id: str, db_path: Path, api_key: str) -> None:
    session = store.create_session(run_id, "2", "reviewer", 1, "tok2", "claude", "/w")
    store.record_session_event(session.id, 1, "assistant", {"oversize": True, "start": f"x {api_key}"})
    con = sqlite3.connect(db_path)
    try:
        rows = [r[0] for r in con.execute("SELECT payload FROM session_events")]
    finally:
        con.close()
    assert rows == [json.dumps({"oversize": True, "start": "x [REDACTED:$ANTHROPIC_API_KEY]"}, separators=(",", ":"))]
