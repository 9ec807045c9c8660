"""Integrity checks: scope, weakened tests, secrets, version-control tampering."""

from __future__ import annotations

from typing import Any

from pm_agent.gates import GateId, check_scope, check_secrets, check_tests_weakened, check_vcs_tampering
from pm_agent.plan.models import ExpectedFiles, Task
from pm_agent.vcs import record_session_baseline

FAKE_AWS_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id
PRIVATE_KEY_HEADER = "-----BEGIN RSA PRIVATE KEY-----"


def _task(**fields: Any) -> Task:
    return Task(id="1", title="Calc", **fields)


# ---------------------------------------------------------------- scope


def test_file_outside_scope_is_caught(work: Any) -> None:
    work.write("calc.py", "changed\n")
    work.write("tests/test_sub.py", "def test_x():\n    assert True\n")
    work.write("secrets/other.py", "oops\n")
    work.write("docs/reviews/task-1-review.md", "# review\n")
    work.write("__pycache__/calc.cpython-311.pyc", "junk")
    work.write("pkg/sub/__pycache__/x.pyc", "junk")
    task = _task(expected_files=ExpectedFiles(modify=["calc.py"]), tests_to_add=["tests/test_sub.py"])
    result = check_scope(task, work.path, work.base)
    assert not result.passed
    assert result.gate == GateId.SCOPE
    assert result.details["outside"] == ["secrets/other.py"]
    assert "secrets/other.py (A)" in result.evidence


def test_scope_allows_ownership_dir_globs_and_expected_deletes(work: Any) -> None:
    work.write("pkg/calc/core.py", "x\n")
    work.write("docs/guide/intro.md", "x\n")
    work.delete("README.md")
    task = _task(
        ownership="pkg/calc/",
        expected_files=ExpectedFiles(create=["docs/guide/*.md"], delete=["README.md"], modify=["calc.py"]),
    )
    result = check_scope(task, work.path, work.base)
    assert result.passed, result.evidence
    assert result.details["untouched"] == ["calc.py"]


def test_scope_without_contract_is_not_checked(work: Any) -> None:
    work.write("anything.py", "x\n")
    result = check_scope(_task(), work.path, work.base)
    assert result.passed
    assert result.details["checked"] is False


# ---------------------------------------------------------------- tests weakened


def test_added_skip_marker_is_caught(work: Any) -> None:
    work.write(
        "tests/test_calc.py",
        "import pytest\nfrom calc import add\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_add():\n"
        "    assert add(1, 2) == 3\n",
    )
    result = check_tests_weakened(_task(), work.path, work.base)
    assert not result.passed
    assert result.gate == GateId.TESTS_WEAKENED
    assert result.details["markers"] == ["tests/test_calc.py:5: @pytest.mark.skip(reason='flaky')"]


def test_other_skip_styles_are_caught(make_work: Any) -> None:
    work = make_work({"web/app.test.js": "it('works', () => { expect(1).toBe(1) })\n"})
    work.write("web/app.test.js", "it.skip('works', () => { expect(1).toBe(1) })\n")
    work.write(
        "tests/test_u.py",
        "import unittest\n\n\n@unittest.skip('later')\nclass T(unittest.TestCase):\n    pass\n",
    )
    work.write("tests/test_x.py", "import pytest\npytestmark = pytest.mark.xfail\n")
    result = check_tests_weakened(_task(), work.path, work.base)
    assert not result.passed
    assert len(result.details["markers"]) == 3


def test_deleted_test_file_and_removed_assertions_are_caught(make_work: Any) -> None:
    work = make_work(
        {
            "tests/test_a.py": "def test_a():\n    assert 1 == 1\n    assert 2 == 2\n",
            "tests/test_b.py": "def test_b():\n    assert True\n",
            "tests/test_c.py": "def test_c():\n    assert 3 == 3\n",
        }
    )
    work.write("tests/test_a.py", "def test_a():\n    assert 1 == 1\n")
    work.delete("tests/test_b.py")
    work.write("tests/test_c.py", "def test_c():\n    assert 3 == 1 + 2\n")  # rewritten, not weakened
    result = check_tests_weakened(_task(), work.path, work.base)
    assert not result.passed
    assert result.details["deleted"] == ["tests/test_b.py"]
    assert result.details["removed_asserts"] == {"tests/test_a.py": {"removed": 1, "added": 0}}

    planned = _task(expected_files=ExpectedFiles(delete=["tests/test_b.py"]))
    assert check_tests_weakened(planned, work.path, work.base).details["deleted"] == []


def test_strengthened_tests_pass(work: Any) -> None:
    work.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n    assert add(0, 0) == 0\n",
    )
    assert check_tests_weakened(_task(), work.path, work.base).passed


# ---------------------------------------------------------------- secrets


def test_fake_aws_key_and_private_key_are_caught_without_printing_them(work: Any) -> None:
    work.write("config.py", f'AWS_ACCESS_KEY_ID = "{FAKE_AWS_KEY}"\nREGION = "eu-west-1"\n')
    work.write("deploy/key.txt", f"{PRIVATE_KEY_HEADER}\n")
    result = check_secrets(work.path, work.base)
    assert not result.passed
    assert result.gate == GateId.SECRETS
    places = {(f["path"], f["line"], f["type"]) for f in result.details["findings"]}
    assert ("config.py", 1, "AWS Access Key") in places
    assert ("deploy/key.txt", 1, "Private Key") in places
    assert FAKE_AWS_KEY not in result.evidence
    assert FAKE_AWS_KEY not in str(result.details)
    assert "config.py:1: AWS Access Key" in result.evidence


def test_secrets_only_on_added_lines(make_work: Any) -> None:
    work = make_work({"legacy.py": f'KEY = "{FAKE_AWS_KEY}"\n'})
    work.write("legacy.py", f'KEY = "{FAKE_AWS_KEY}"\nTIMEOUT = 30\n')
    work.write("clean.py", "def f():\n    return 'hello world'\n")
    result = check_secrets(work.path, work.base)
    assert result.passed, result.evidence
    assert result.details["files_scanned"] == 2


# ---------------------------------------------------------------- vcs tampering


def test_vcs_tampering_check(work: Any) -> None:
    baseline = record_session_baseline(work.path)
    work.write("calc.py", "x\n")
    assert check_vcs_tampering(work.path, baseline).passed
    work.git.run("commit", "-qam", "agent commit")
    result = check_vcs_tampering(work.path, baseline)
    assert not result.passed
    assert result.gate == GateId.VCS_TAMPERING
    assert "committed" in result.evidence
    assert not check_vcs_tampering(work.path, expected_head=work.base).passed
