"""The secrets gate's scan configures detect-secrets once per process; it must find what detect-secrets'
own `default_settings()` finds, file for file, however the two are interleaved."""

from __future__ import annotations

from pathlib import Path

from detect_secrets.core.scan import scan_file
from detect_secrets.settings import default_settings

from pm_agent.gates.secret_scan import find_secrets

# Made-up values in the shapes the default plugins know; none is a real credential.
SAMPLES = {
    "aws.py": 'KEY = "AKIA' + "IOSFODNN7EXAMPLQ" + '"\n',
    "key.pem": "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
    "settings.py": 'password = "' + "hunter2-but-longer-Zq81" + '"\nDEBUG = True\n',
    "token.txt": "gh" + "p_0123456789abcdefghijABCDEFGHIJ012345\n",
    "entropy.py": 'BLOB = "' + "c2VjcmV0LWJ1dC1ub3QtcmVhbGx5LWEtc2VjcmV0LXZhbHVl" + '"\n',
    "slack.py": 'HOOK = "https://hooks.slack.com/services/' + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX" + '"\n',
    "clean.py": "def f() -> str:\n    return 'hello world'\n",
}


def upstream(file: Path) -> list[tuple[int, str]]:
    with default_settings():
        return sorted({(s.line_number, str(s.type)) for s in scan_file(str(file))})


def test_find_secrets_finds_what_default_settings_find(tmp_path: Path) -> None:
    found_any = 0
    for round_ in range(2):  # ours first, then upstream in between: neither changes the other's result
        for name, text in SAMPLES.items():
            file = tmp_path / name
            file.write_text(text, encoding="utf-8")
            lines = set(range(1, text.count("\n") + 2))
            ours = find_secrets(file, lines)
            assert ours == upstream(file), (round_, name)
            assert find_secrets(file, lines) == ours, (round_, name)
            found_any += bool(ours)
    assert found_any >= 2 * (len(SAMPLES) - 2), found_any  # the samples do hold findings
    assert find_secrets(tmp_path / "clean.py", {1, 2}) == []
