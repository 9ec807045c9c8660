"""Commands that cannot run must not pass for commands that fail on the baseline (their gate would then pass
whatever a task did): a make recipe's missing program, a package manager without its install in the checkout, a
test suite pytest stopped collecting for want of a third-party module. Found by running `pm-agent init` on public
repositories (rich, pydantic-settings, redux-thunk, vite-plugin-react, structlog)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates.environment import baseline_entry, judge
from pm_agent.gates.unrunnable import NOT_INSTALLED, baseline_cannot_run, cannot_run_reason
from pm_agent.gates.ward import CommandResult, run_command
from pm_agent.preflight.baseline import fix_hint


def result(output: str, exit_code: int, cwd: Path | None = None) -> CommandResult:
    return CommandResult(cmd="x", cwd=str(cwd or ""), exit_code=exit_code, duration_ms=5, output_tail=output)


def test_a_make_recipe_whose_program_is_missing_cannot_run_and_names_the_program(tmp_path: Path) -> None:
    """make exits 2, not 127, when a recipe's program is missing: the exit status alone read as "already failing"."""
    (tmp_path / "Makefile").write_text("lint:\n\tpm-agent-missing-uv run ruff check\n", encoding="utf-8")
    ran = run_command("make lint", tmp_path, 30)
    assert ran.exit_code == 2
    reason = cannot_run_reason(ran, 30)
    assert reason is not None
    assert reason.startswith("exit 127 in a make recipe: ")
    assert "pm-agent-missing-uv" in reason
    assert fix_hint("lint_command", "make lint", reason, 30) == (
        "install pm-agent-missing-uv, or set environment.lint_command: null"
    )
    entry = baseline_entry("lint_command", "lint", ran, 30)
    assert entry.cannot_run == reason
    assert not entry.blind


def test_a_make_recipe_that_fails_on_its_own_still_ran(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("lint:\n\tsh -c 'exit 3'\n", encoding="utf-8")
    ran = run_command("make lint", tmp_path, 30)
    assert ran.exit_code == 2
    assert cannot_run_reason(ran, 30) is None


YARN_BERRY = (
    "\x1b[31m\x1b[1mUsage Error\x1b[22m\x1b[39m: Couldn't find the node_modules state file - running an install "
    "might help (findPackageLocation)\n\n$ yarn run [--inspect] [--inspect-brk] <scriptName> ...\n"
)  # Yarn 4.4 in a fresh worktree of a node-modules-linker project (redux-thunk), exit 1
PNPM = (
    " WARN  Local package.json exists, but node_modules missing, did you mean to install?\n"
    "sh: 1: vitest: not found\n ELIFECYCLE  Test failed. See above for more details.\n"
)  # pnpm 10 in a fresh worktree of a workspace (vite-plugin-react), exit 127 in a package's script


@pytest.mark.parametrize(
    ("output", "exit_code", "manager", "install"),
    [
        (YARN_BERRY, 1, "yarn", "yarn install --immutable"),
        (PNPM, 1, "pnpm", "pnpm install --frozen-lockfile --prefer-offline"),
        (PNPM, 127, "pnpm", "pnpm install --frozen-lockfile --prefer-offline"),
    ],
)
def test_a_package_manager_without_its_install_in_the_checkout_cannot_run(
    output: str, exit_code: int, manager: str, install: str
) -> None:
    reason = cannot_run_reason(result(output, exit_code), 30)
    assert reason is not None
    assert reason.startswith(f"{NOT_INSTALLED}: ")
    assert "\x1b" not in reason
    assert fix_hint("test_command", f"{manager} test", reason, 30) == (
        f"set environment.setup_command: {install} (it runs in every new worktree before the gates), "
        "or set environment.test_command: null"
    )


def test_pnpms_warning_on_a_command_that_passed_is_nothing() -> None:
    assert cannot_run_reason(result(" WARN  Local package.json exists, but node_modules missing\nok\n", 0), 30) is None


def test_the_line_naming_the_missing_program_is_kept_not_the_last_line() -> None:
    output = "sh: 1: vitest: not found\n ELIFECYCLE  Test failed. See above for more details.\n"
    assert cannot_run_reason(result(output, 127), 30) == "exit 127: sh: 1: vitest: not found"


COLLECTION = """\
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_dev.py ______________________
ImportError while importing test module '/w/tests/test_dev.py'.
E   ModuleNotFoundError: No module named '{module}'
=========================== short test summary info ============================
ERROR tests/test_dev.py
!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
"""


def test_a_suite_stopped_for_a_third_party_module_cannot_run_on_the_baseline(tmp_path: Path) -> None:
    (tmp_path / "src" / "structlog").mkdir(parents=True)
    ran = result(COLLECTION.format(module="time_machine"), 2, tmp_path)
    assert baseline_cannot_run(ran, 30) == (
        "the test environment lacks time_machine (pytest stopped while collecting: no test ran)"
    )
    assert cannot_run_reason(ran, 30) is None  # in a task's gate run: an import the task added is the task's


@pytest.mark.parametrize("where", ["structlog", "src/structlog", "backend/structlog", "structlog.py"])
def test_the_projects_own_module_failing_to_import_is_a_failure_not_a_missing_install(
    tmp_path: Path, where: str
) -> None:
    target = tmp_path / where
    if where.endswith(".py"):
        target.write_text("", encoding="utf-8")
    else:
        target.mkdir(parents=True)
    ran = result(COLLECTION.format(module="structlog.dev"), 2, tmp_path)
    assert baseline_cannot_run(ran, 30) is None


def test_a_test_failure_is_not_a_collection_stop(tmp_path: Path) -> None:
    output = COLLECTION.format(module="time_machine").replace("Interrupted: 1 error during collection", "1 failed")
    assert baseline_cannot_run(result(output, 1, tmp_path), 30) is None
    assert baseline_cannot_run(result(output, 2, tmp_path), 30) is None


def test_the_gate_escalates_a_command_that_cannot_run_instead_of_comparing_exit_statuses() -> None:
    baseline = baseline_entry("test_command", "tests", result(YARN_BERRY, 1), 30)
    verdict = judge(result(YARN_BERRY, 1), baseline, mode="ratchet", timeout_s=30)
    assert not verdict.passed
    assert verdict.rule == "environment"


# corepack 0.34.6 (Node.js 20.20.2) running `pnpm test` for a package.json with "packageManager": "pnpm@9.15.0",
# through a registry mirror whose metadata carries no signatures (recorded on this machine).
COREPACK_SIGNATURE = """! Corepack is about to download https://registry.npmjs.org/pnpm/-/pnpm-9.15.0.tgz
/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:21999
  if (!Array.isArray(signatures) || !signatures.length) throw new Error(`No compatible signature found in package metadata`);
                                                              ^

Error: No compatible signature found in package metadata
    at verifySignature (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:21999:63)
    at installVersion (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:22414:7)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async Engine.ensurePackageManager (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:22899:32)
    at async Engine.executePackageManagerRequest (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:23010:25)
    at async Object.runMain (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:23710:7)

Node.js v20.20.2
"""  # noqa: E501 (the recorded lines)
# The same corepack for "packageManager": "yarn@4.5.0" without the network (recorded on this machine, abridged).
COREPACK_OFFLINE = """/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:22089
    throw new Error(
          ^

Error: Error when performing the request to https://repo.yarnpkg.com/4.5.0/packages/yarnpkg-cli/bin/yarn.js; for troubleshooting help, see https://github.com/nodejs/corepack#troubleshooting
    at fetch (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:22089:11)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async fetchUrlStream (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:22119:20)
    ... 4 lines matching cause stack trace ...
    at async Object.runMain (/usr/lib/node_modules/corepack/dist/lib/corepack.cjs:23710:7) {
  [cause]: TypeError: fetch failed
      at node:internal/deps/undici/undici:14976:13
    [cause]: Error: getaddrinfo ENOTFOUND repo.yarnpkg.com
        at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26) {
      code: 'ENOTFOUND',
    }
  }
}

Node.js v20.20.2
"""  # noqa: E501 (the recorded lines)
# Older corepacks (clipanion's report), as nodejs/corepack#253 quotes it.
COREPACK_INTERNAL = """Preparing yarn@3.5.0 for immediate activation...
Internal Error: Error when performing the request
    at ClientRequest.<anonymous> (/home/u/.nvm/versions/node/v18.15.0/lib/node_modules/corepack/dist/corepack.js:16073:20)
    at ClientRequest.emit (node:events:513:28)
    at process.processTicksAndRejections (node:internal/process/task_queues:82:21)
"""  # noqa: E501 (the recorded lines)


@pytest.mark.parametrize(
    ("output", "manager", "said"),
    [
        (COREPACK_SIGNATURE, "pnpm", "Error: No compatible signature found in package metadata"),
        (COREPACK_OFFLINE, "yarn", "Error: Error when performing the request to https://repo.yarnpkg.com/4.5.0/"),
        (COREPACK_INTERNAL, "yarn", "Internal Error: Error when performing the request"),
    ],
)
def test_a_corepack_shim_that_cannot_fetch_or_verify_the_manager_cannot_run(
    output: str, manager: str, said: str
) -> None:
    """Exit 1 with a stack trace through corepack's own code: not the project's tests already failing."""
    reason = cannot_run_reason(result(output, 1), 30)
    assert reason is not None
    assert reason.startswith(f"corepack could not fetch or verify the package manager: {said}")
    assert fix_hint("test_command", f"{manager} test", reason, 30) == (
        "let corepack fetch the package manager where the registry can be reached (`corepack enable`, then"
        " `corepack install` in the repository; `npm install -g corepack@latest` when its signing keys are out of"
        f" date), or install {manager} globally (`npm install -g {manager}`) ahead of corepack's shim on PATH, or"
        " set environment.test_command: null"
    )
    entry = baseline_entry("test_command", "tests", result(output, 1), 30)
    assert entry.cannot_run == reason


def test_a_javascript_stack_trace_of_the_project_or_yarn_itself_is_no_corepack_failure() -> None:
    """A test's own error, and Yarn's (run from corepack's cache, not its code) about the project's lockfile."""
    jest = "Error: expected 2, got 3\n    at Object.<anonymous> (/repo/src/cart.test.js:4:11)\n"
    yarn = (
        "Internal Error: root-workspace-0b6124@workspace:.: This package doesn't seem to be present in your lockfile\n"
        "    at gQ.getCandidates (/home/u/.cache/node/corepack/yarn/3.2.4/yarn.js:435:5146)\n"
    )
    assert cannot_run_reason(result(jest, 1), 30) is None
    assert cannot_run_reason(result(yarn, 1), 30) is None
    assert cannot_run_reason(result(COREPACK_SIGNATURE, 0), 30) is None


GOFMT_CHECK = 'out=$(gofmt -l . 2>&1); printf \'%s\' "$out"; test -z "$out"'


def test_init_s_gofmt_check_without_gofmt_cannot_run(tmp_path: Path) -> None:
    """The command substitution swallows the shell's 127: exit 1 and one line, which is no list of files."""
    (tmp_path / "main.go").write_text("package main\n", encoding="utf-8")
    ran = run_command(GOFMT_CHECK, tmp_path, 30, {"PATH": "/nonexistent"})
    assert ran.exit_code == 1
    reason = cannot_run_reason(ran, 30)
    assert reason is not None
    assert reason.startswith("exit 127 inside the command: ")
    assert "gofmt" in reason
    assert (
        fix_hint("format_command", GOFMT_CHECK, reason, 30) == "install gofmt, or set environment.format_command: null"
    )
    assert baseline_entry("format_command", "format", ran, 30).cannot_run == reason


@pytest.mark.parametrize(
    "output",
    [
        "main.go\n",  # a file gofmt lists
        "sh: 1: gofmt: not found\nmain.go\n",  # more than the shell's complaint: it ran something
        "FAILED tests/test_x.py::test_y - sh: 1: missing-tool: not found\n1 failed in 0.1s\n",
    ],
)
def test_more_than_the_shells_one_line_is_a_command_that_ran(output: str) -> None:
    assert cannot_run_reason(result(output, 1), 30) is None


def test_a_rustup_component_the_toolchain_lacks_cannot_run_and_says_what_installs_it() -> None:
    said = (
        "error: 'cargo-fmt' is not installed for the toolchain '1.84.1-x86_64-unknown-linux-gnu'.\n"
        "To install, run `rustup component add --toolchain 1.84.1-x86_64-unknown-linux-gnu rustfmt`\n"
    )  # rustup's proxy, as CI logs show it (topgrade-rs/topgrade#1164)
    reason = cannot_run_reason(result(said, 1), 30)
    assert reason == (
        "a rustup component is missing: cargo-fmt is not installed for the toolchain 1.84.1-x86_64-unknown-linux-gnu"
        " (`rustup component add --toolchain 1.84.1-x86_64-unknown-linux-gnu rustfmt`)"
    )
    assert fix_hint("format_command", "cargo fmt --check", reason, 30) == (
        "run `rustup component add --toolchain 1.84.1-x86_64-unknown-linux-gnu rustfmt`, or set"
        " environment.format_command: null"
    )
    older = "error: 'cargo-clippy' is not installed for the toolchain 'stable-x86_64-unknown-linux-gnu'\n"
    assert cannot_run_reason(result(older, 1), 30) == (
        "a rustup component is missing: cargo-clippy is not installed for the toolchain stable-x86_64-unknown-linux-gnu"
        " (`rustup component add clippy`)"
    )


def test_npx_asked_to_fetch_a_tool_is_a_missing_install() -> None:
    said = 'npm error npx canceled due to missing packages and no YES option: ["prettier@3.10.1"]\n'
    reason = cannot_run_reason(result(said, 1), 30)
    assert reason == f'{NOT_INSTALLED}: npx canceled due to missing packages and no YES option: ["prettier@3.10.1"]'
    assert fix_hint("format_command", "npx prettier --check .", reason, 30).startswith(
        "set environment.setup_command: npm ci --prefer-offline"
    )
