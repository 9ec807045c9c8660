"""detect-secrets' pattern plugins, written out (`pm_agent._secret_patterns`): the same table as the installed
detect-secrets gives, and a process redacts with it without importing detect-secrets until a keyword shows up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pm_agent import _secret_patterns as written
from pm_agent.redaction import _table, live_secret_patterns, secret_patterns_source

REGENERATE = (
    "regenerate: python -c \"from pm_agent.redaction import secret_patterns_source as s; "
    "open('src/pm_agent/_secret_patterns.py', 'w').write(s())\""
)


def test_the_written_table_is_what_the_installed_detect_secrets_gives() -> None:
    assert Path(written.__file__).read_text(encoding="utf-8") == secret_patterns_source(), REGENERATE
    assert live_secret_patterns() == (written.ROWS, written.GATE)
    assert _table() == (written.ROWS, written.GATE)
    assert len(written.ROWS) > 40
    assert written.GATE


def test_redacting_imports_detect_secrets_only_for_a_line_with_a_keyword() -> None:
    code = (
        "import sys\n"
        "from pm_agent.redaction import redact\n"
        "print(redact({'summary': 'Added the login endpoint.', 'key': 'AKIAIOSFODNN7EXAMPLE'}))\n"
        "print(sorted(m for m in ('detect_secrets', 'requests') if m in sys.modules))\n"
        "print(redact('password = \"hunter2hunter2\"'))\n"
        "print(sorted(m for m in ('detect_secrets', 'requests') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "{'summary': 'Added the login endpoint.', 'key': '[REDACTED:AWS Access Key]'}",
        "[]",
        'password = "[REDACTED:Secret Keyword]"',
        "['detect_secrets', 'requests']",
    ]
