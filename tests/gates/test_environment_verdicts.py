"""Environment commands judged against their baseline: each verdict's exact words, and why a run cannot run.

Written against mutmut's survivors (make mutation) in gates/environment.py. Command results are built from
the output a tool prints (ruff's concise format), so counts and limits can be exact.
"""

from __future__ import annotations

from typing import Any

import pytest

from pm_agent.gates.environment import BaselineCommand, Verdict, judge, relative_output
from pm_agent.gates.unrunnable import cannot_run_reason
from pm_agent.gates.ward import CommandResult

RUFF = "ruff check ."


def _ruff_output(count: int, start: int = 0) -> str:
    lines = [f"pkg/m{i:02}.py:1:8: F401 [*] `os` imported but unused\n" for i in range(start, start + count)]
    return "".join(lines) + f"Found {count} errors.\n"


def _result(**fields: Any) -> CommandResult:
    return CommandResult.model_validate({"cmd": RUFF, "exit_code": 1, "duration_ms": 5, "output_tail": ""} | fields)


def _baseline(**fields: Any) -> BaselineCommand:
    values = {"key": "lint_command", "name": "lint", "command": RUFF, "exit_code": 1, "duration_ms": 5}
    return BaselineCommand.model_validate(values | fields)


# ---------------------------------------------------------------- why a command cannot run


CARGO_OFFLINE = """\
    Updating crates.io index
warning: spurious network error (1 try remaining): [6] Could not resolve hostname (Could not resolve host: index.cr…)
error: failed to get `no-panic` as a dependency of package `itoa v1.0.18 (/tmp/itoa)`

Caused by:
  download of config.json failed
"""
# Maven's (with -q -B: its colour codes still lead the line), cut short in the middle.
MAVEN_OFFLINE = (
    "\x1b[0m\x1b[0m[ERROR] Failed to execute goal org.apache.maven.plugins:maven-resources-plugin:2.6:resources "
    "(default-resources) on project x: Execution default-resources of goal ... failed: Failed to read artifact "
    "descriptor for org.apache.maven:maven-project:jar:2.0.6: Could not transfer artifact "
    "org.apache.maven:maven-project:pom:2.0.6 from/to central (https://repo.maven.apache.org/maven2): Unknown host "
    "repo.maven.apache.org: Name or service not known -> [Help 1]\n[ERROR] \n"
)
MAVEN_MISSING = "[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project x:x:jar:1: "
MAVEN_MISSING += "Could not find artifact junit:junit:jar:99.0 in central (https://repo.maven.apache.org/maven2)\n"
# Gradle 4.4.1's (Debian's, on this machine): a dependency it cannot GET, one that does not exist, a task the build
# does not have, and the wrapper that cannot download its gradle.
GRADLE_OFFLINE = """\
* What went wrong:
Could not resolve all files for configuration ':testCompileClasspath'.
> Could not resolve junit:junit:4.13.99.
  Required by:
      project :
   > Could not resolve junit:junit:4.13.99.
      > Could not get resource 'https://repo.maven.apache.org/maven2/junit/junit/4.13.99/junit-4.13.99.pom'.
         > Could not GET 'https://repo.maven.apache.org/maven2/junit/junit/4.13.99/junit-4.13.99.pom'.
            > repo.maven.apache.org: Name or service not known
"""
GRADLE_MISSING = """\
* What went wrong:
Could not resolve all files for configuration ':testCompileClasspath'.
> Could not find junit:junit:4.13.99.
  Searched in the following locations:
      file:/root/.m2/repository/junit/junit/4.13.99/junit-4.13.99.pom
"""
GRADLE_NO_TASK = "* What went wrong:\nTask 'spotlessCheck' not found in root project 'gr2'.\n"
GRADLEW_OFFLINE = """\
Downloading https://services.gradle.org/distributions/gradle-4.4.1-bin.zip

Exception in thread "main" java.net.UnknownHostException: services.gradle.org
\tat java.base/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:572)
"""
# composer 2 offline (its message boxed in spaces) and bundler without a gem of the Gemfile: Debian's, on this machine.
COMPOSER_OFFLINE = (
    "\nIn RemoteFilesystem.php line 476:\n"
    "                                                                               \n"
    '  The "https://repo.packagist.org/packages.json" file could not be downloaded  \n'
    "  : php_network_getaddresses: getaddrinfo for repo.packagist.org failed: Name  \n"
    "   or service not known                                                        \n"
    "\ninstall [--prefer-source] [--prefer-dist] [--prefer-install PREFER-INSTALL] [--dry-run] ...\n"
)
BUNDLER_MISSING = (
    "bundler: failed to load command: rspec (/usr/bin/rspec)\n"
    "/usr/share/rubygems-integration/all/gems/bundler-2.3.15/lib/bundler/resolver.rb:271:in `block in "
    "verify_gemfile_dependencies_are_found!': Could not find gem 'rspec-nonexistent-xyz' in locally installed "
    "gems. (Bundler::GemNotFound)\n"
)
GO_OFFLINE = (
    'go: github.com/stretchr/testify@v1.9.0: Get "https://proxy.golang.org/github.com/stretchr/testify/@v/v1.9.0.mod": '
    "dial tcp: lookup proxy.golang.org on 10.255.255.53:53: no such host\n"
)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"exit_code": 127, "output": "sh: 1: ruff: not found\n\n  \n"}, "exit 127: sh: 1: ruff: not found"),
        (
            {"exit_code": 126, "output": "sh: 1: ./lint.sh: Permission denied\n"},
            "exit 126: sh: 1: ./lint.sh: Permission denied",
        ),
        ({"exit_code": 127, "output": ""}, "exit 127: "),
        ({"output": "/usr/bin/python3: No module named ruff\n"}, "No module named ruff"),
        ({"output": 'npm error Missing script: "lint"\n'}, 'package.json has no script "lint"'),
        ({"output": "make: *** No rule to make target 'lint'.  Stop.\n"}, "the Makefile has no target lint"),
        ({"output": "error: no such command: `clippy`\n"}, "no such command: clippy"),
        ({"exit_code": -9, "timed_out": True}, "timed out after 2.5s"),
        ({"output": "pkg/a.py:1:1: F401 unused\n"}, None),
        # What cargo, go and npm print here without a network (their real output on this machine).
        (
            {"exit_code": 101, "output": CARGO_OFFLINE},
            "the dependencies cannot be fetched: error: failed to get `no-panic` as a dependency of package "
            "`itoa v1.0.18 (/tmp/itoa)`",
        ),
        (
            {"exit_code": 1, "output": GO_OFFLINE},
            'the dependencies cannot be fetched: go: github.com/stretchr/testify@v1.9.0: Get "https://proxy.golang.org/'
            'github.com/stretchr/testify/@v/v1.9.0.mod": dial tcp: lookup proxy.golang.org on 10.255.255.53:53: no '
            "such host",
        ),
        (
            {"exit_code": 1, "output": "npm error code ENOTFOUND\nnpm error syscall getaddrinfo\n"},
            "the dependencies cannot be fetched: npm error code ENOTFOUND",
        ),
        (
            {"exit_code": 1, "output": MAVEN_OFFLINE},
            "the dependencies cannot be fetched: Could not transfer artifact org.apache.maven:maven-project:pom:2.0.6 "
            "from/to central (https://repo.maven.apache.org/maven2): Unknown host repo.maven.apache.org: Name or "
            "service not known -> [Help 1]",
        ),
        ({"exit_code": 1, "output": MAVEN_MISSING}, None),  # a version that does not exist: the task's to fix
        (
            {"exit_code": 1, "output": GRADLE_OFFLINE},
            "the dependencies cannot be fetched: Could not GET "
            "'https://repo.maven.apache.org/maven2/junit/junit/4.13.99/junit-4.13.99.pom'.",
        ),
        ({"exit_code": 1, "output": GRADLE_MISSING}, None),
        (
            {"exit_code": 100, "output": COMPOSER_OFFLINE},
            'the dependencies cannot be fetched: The "https://repo.packagist.org/packages.json" file could not be '
            "downloaded",
        ),
        (
            {"exit_code": 1, "output": BUNDLER_MISSING},
            "the dependencies cannot be fetched: Could not find gem 'rspec-nonexistent-xyz' in locally installed gems.",
        ),
        ({"exit_code": 1, "output": GRADLE_NO_TASK}, "the gradle build has no task spotlessCheck"),
        (
            {"exit_code": 1, "output": GRADLEW_OFFLINE},
            'the dependencies cannot be fetched: Exception in thread "main" java.net.UnknownHostException: '
            "services.gradle.org",
        ),
        # A test of the project's own that fails on a lookup is a failure like any other.
        ({"exit_code": 1, "output": "FAIL client.test.js\n  Error: getaddrinfo ENOTFOUND api.example.invalid\n"}, None),
        ({"exit_code": 101, "output": "test tests::dns ... FAILED\nerror: test failed, to rerun pass `--lib`\n"}, None),
    ],
)
def test_cannot_run_reason(fields: dict[str, Any], reason: str | None) -> None:
    assert cannot_run_reason(_result(**fields), 2.5) == reason


def test_the_whole_output_is_read_before_the_tail() -> None:
    whole = _result(output="python3: No module named mypy\n", output_tail="tail without the reason")
    assert cannot_run_reason(whole, 60) == "No module named mypy"
    only_tail = _result(output=None, output_tail="python3: No module named mypy")
    assert cannot_run_reason(only_tail, 60) == "No module named mypy"


def test_relative_output_of_a_worktree_whose_name_ends_in_x() -> None:
    result = _result(output="/w/GFX/pkg/a.py:1:8: F401\n", cwd="/w/GFX")
    assert relative_output(result) == "pkg/a.py:1:8: F401\n"


# ---------------------------------------------------------------- the verdicts, word for word


def test_an_environment_failure_says_it_is_escalated() -> None:
    verdict = judge(_result(exit_code=127, output="sh: ruff: not found"), None, mode="ratchet", timeout_s=60)
    assert verdict == Verdict(
        passed=False,
        rule="environment",
        lines=(
            "ENVIRONMENT: `ruff check .` cannot run: exit 127: sh: ruff: not found (not the task's doing: escalated)",
        ),
        environment_failure="exit 127: sh: ruff: not found",
    )


@pytest.mark.parametrize(
    ("baseline", "mode", "why"),
    [
        (None, "ratchet", "no baseline run to compare with"),
        (None, "strict", "no baseline run to compare with"),
        (_baseline(output=_ruff_output(1)), "strict", "environment.baseline is strict"),
        (_baseline(exit_code=0), "ratchet", "it passed on the baseline"),
    ],
)
def test_a_failure_judged_strictly_says_why(baseline: BaselineCommand | None, mode: Any, why: str) -> None:
    verdict = judge(_result(exit_code=1, output=_ruff_output(1)), baseline, mode=mode, timeout_s=60)
    assert verdict == Verdict(passed=False, rule="strict", lines=(f"`ruff check .`: exit 1 ({why})",))


@pytest.mark.parametrize("baseline", [None, _baseline(exit_code=0)])
def test_a_clean_run_without_a_failed_baseline_fixed_nothing(baseline: BaselineCommand | None) -> None:
    verdict = judge(_result(exit_code=0), baseline, mode="ratchet", timeout_s=60)
    assert verdict == Verdict(passed=True, rule="clean", lines=("`ruff check .`: exit 0 (rule: clean)",))


@pytest.mark.parametrize(("baseline_complete", "now_complete"), [(True, False), (False, True), (False, False)])
def test_output_too_large_on_either_side_falls_back_to_the_exit_status(
    baseline_complete: bool, now_complete: bool
) -> None:
    baseline = _baseline(exit_code=1, output=_ruff_output(1), output_complete=baseline_complete)
    now = _result(exit_code=1, output=_ruff_output(3), output_complete=now_complete)
    verdict = judge(now, baseline, mode="ratchet", timeout_s=60)
    assert verdict == Verdict(
        passed=True,
        rule="exit-status",
        lines=(
            "`ruff check .`: exit 1, baseline exit 1 (rule: exit-status: the output was too large to compare "
            "findings; no worse than the baseline)",
        ),
    )


def test_output_too_large_with_another_exit_status_is_worse() -> None:
    """A suite that crashes (exit 2) where the baseline failed (exit 1): too much output to compare, still worse."""
    baseline = _baseline(exit_code=1, output=_ruff_output(1), output_complete=False)
    verdict = judge(_result(exit_code=2, output=_ruff_output(1)), baseline, mode="ratchet", timeout_s=60)
    assert verdict == Verdict(
        passed=False,
        rule="exit-status",
        lines=(
            "`ruff check .`: exit 2, baseline exit 1 (rule: exit-status: the output was too large to compare "
            "findings; worse than the baseline)",
        ),
    )


def test_at_most_ten_pre_existing_findings_are_listed_and_fixed_ones_counted() -> None:
    baseline = _baseline(output=_ruff_output(14))
    verdict = judge(_result(output=_ruff_output(12)), baseline, mode="ratchet", timeout_s=60)
    assert (verdict.passed, verdict.rule, verdict.new, verdict.preexisting, verdict.fixed) == (
        True,
        "findings",
        0,
        12,
        2,
    )
    listed = verdict.lines[2:]
    assert listed == (*[f"  pkg/m{i:02}.py:1: F401 `os` imported but unused" for i in range(10)], "  ... and 2 more")


def test_a_long_line_quoted_in_a_reason_is_cut() -> None:
    line = "error: failed to download from `https://index.crates.io/" + "x" * 400 + "`"
    reason = cannot_run_reason(_result(exit_code=101, output=line + "\n"), 60)
    assert reason == "the dependencies cannot be fetched: " + line[:299] + "…"
