"""The fix the preflight proposes for a command that cannot run, read from what a real shell says of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates.unrunnable import cannot_run_reason
from pm_agent.gates.ward import run_command
from pm_agent.preflight.baseline import fix_hint


def reason_of(command: str, cwd: Path) -> str:
    """What pm-agent records of `command` when it cannot run (its exit code and the shell's last line)."""
    reason = cannot_run_reason(run_command(command, cwd, 30), 30)
    assert reason is not None, command
    return reason


@pytest.mark.parametrize("shell", ["sh", "bash"])
@pytest.mark.parametrize("manager", ["npm", "pnpm", "yarn"])
def test_a_program_a_package_script_runs_comes_with_the_projects_dependencies(
    tmp_path: Path, shell: str, manager: str
) -> None:
    """`npm test` whose script is `xo && ava`, with no node_modules: xo is missing, not npm."""
    reason = reason_of(f"{shell} -c 'pm-agent-missing-xo && ava'", tmp_path)
    hint = fix_hint("test_command", f"{manager} test", reason, 60)
    assert hint == (
        f"install the project's dependencies (`{manager} install`: the script runs pm-agent-missing-xo), "
        "or set environment.test_command: null"
    )


def test_zsh_names_the_program_after_its_message() -> None:
    reason = "exit 127: zsh: command not found: jest"  # zsh's own words (zsh is not installed here)
    assert fix_hint("test_command", "yarn test", reason, 60).startswith(
        "install the project's dependencies (`yarn install`: the script runs jest)"
    )


def test_a_missing_package_manager_is_itself_what_to_install(tmp_path: Path) -> None:
    reason = reason_of("pm-agent-missing-npm test", tmp_path)
    assert fix_hint("test_command", "pm-agent-missing-npm test", reason, 60) == (
        "install pm-agent-missing-npm, or set environment.test_command: null"
    )
    assert fix_hint("test_command", "npm test", "exit 127: sh: 1: npm: not found", 60).startswith("install npm, or")


def test_the_program_the_shell_could_not_find_is_named_not_the_command(tmp_path: Path) -> None:
    """`make lint` running a linter that is not installed: the linter is what to install, not make."""
    reason = reason_of("sh -c 'pm-agent-missing-linter run'", tmp_path)
    assert fix_hint("lint_command", "make lint", reason, 60) == (
        "install pm-agent-missing-linter, or set environment.lint_command: null"
    )


def test_a_program_that_cannot_be_executed_is_named(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "xo"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n", encoding="utf-8")
    tool.chmod(0o644)
    reason = reason_of(f"sh -c {tool}", tmp_path)
    assert reason.startswith("exit 126")
    assert fix_hint("test_command", "npm test", reason, 60) == (
        f"make {tool} executable, or set environment.test_command: null"
    )


@pytest.mark.parametrize(
    ("command", "fetch"),
    [
        ("cargo build", "`cargo fetch`"),
        ("go test ./...", "`go mod download`"),
        ("npm test", "`npm install`"),
        ("mvn -B -q test", "`mvn dependency:go-offline`"),
        ("./mvnw -B test", "`./mvnw dependency:go-offline`"),
        ("gradle --console=plain test", "`gradle test` once"),
        ("./gradlew --console=plain test", "`./gradlew test` once, which fetches the wrapper's gradle as well"),
        ("bundle exec rspec", "`bundle install`"),
        ("composer install --quiet && phpunit", "`composer install`, which fills composer's cache"),
        ("make build", "`cargo fetch`, `go mod download`, `npm install`"),  # whichever the Makefile runs
    ],
)
def test_dependencies_that_cannot_be_fetched_are_fetched_elsewhere_or_vendored(command: str, fetch: str) -> None:
    reason = "the dependencies cannot be fetched: error: failed to get `no-panic` as a dependency of package `itoa`"
    assert fix_hint("build_command", command, reason, 60) == (
        f"fetch them where their registry can be reached ({fetch}) or vendor them, or set environment.build_command: "
        "null"
    )


def test_a_gradle_task_the_build_does_not_have_names_the_plugin() -> None:
    reason = "the gradle build has no task spotlessCheck"
    assert fix_hint("lint_command", "./gradlew --console=plain spotlessCheck", reason, 60) == (
        "apply the plugin that adds the task, or set environment.lint_command to the right command, or set "
        "environment.lint_command: null"
    )


@pytest.mark.parametrize(
    ("command", "reason", "hint"),
    [
        # msgpack-ruby's preflight without bundler: the package (bundler) is not the program's name.
        ("bundle exec rake spec", "exit 127: /bin/sh: 1: bundle: not found", "install bundle (`gem install bundler`)"),
        ("make test", "exit 127 in a make recipe: make: poetry: No such file or directory", "install poetry (`pipx"),
        ("pytest -q", "exit 127: /bin/sh: 1: pytest: not found", "install pytest, or"),  # nothing to add
    ],
)
def test_a_missing_program_s_fix_names_what_installs_it(command: str, reason: str, hint: str) -> None:
    assert fix_hint("test_command", command, reason, 60).startswith(hint)
