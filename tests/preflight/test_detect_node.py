"""The Node rows of the `pm-agent init` detection table: scripts, the lockfile's manager, tsc, eslint."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm_agent.preflight._node import run_script
from pm_agent.preflight.detect import Slot

from .conftest import Machine, package_json, rejected_for, write

SCRIPTS = {"test": "node test.js", "lint": "eslint .", "typecheck": "tsc --noEmit", "build": "tsc -p ."}
NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1'


def node_repo(repo: Path, lockfile: str | None, scripts: dict[str, str], **fields: object) -> Path:
    files = {"package.json": package_json(scripts, **fields), "node_modules/.keep": ""}
    if lockfile:
        files[lockfile] = ""
    return write(repo, files)


@pytest.mark.parametrize(
    ("lockfile", "manager", "commands"),
    [
        ("package-lock.json", "npm", ["npm test", "npm run lint", "npm run typecheck", "npm run build"]),
        ("pnpm-lock.yaml", "pnpm", ["pnpm test", "pnpm run lint", "pnpm run typecheck", "pnpm run build"]),
        ("yarn.lock", "yarn", ["yarn test", "yarn lint", "yarn typecheck", "yarn build"]),
        ("bun.lockb", "bun", ["bun run test", "bun run lint", "bun run typecheck", "bun run build"]),
        (None, "npm", ["npm test", "npm run lint", "npm run typecheck", "npm run build"]),
    ],
)
def test_scripts_run_with_the_lockfiles_manager(
    repo: Path, machine: Machine, lockfile: str | None, manager: str, commands: list[str]
) -> None:
    node_repo(repo, lockfile, SCRIPTS)
    detection = machine.script(manager, "exit 0").detect(repo)
    env = detection.environment
    assert [env.test_command, env.lint_command, env.typecheck_command, env.build_command] == commands
    test = detection.chosen[Slot.TEST]
    how = f"{manager} from {lockfile}" if lockfile else "npm: no lockfile"
    assert test.reason == f"package.json scripts.test (node test.js); {how}"
    assert test.problem is None


def test_npm_test_really_runs_the_script(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", {"test": "node -e \"require('fs').writeFileSync('ran', 'yes')\""})
    detection = machine.real("npm", "node", "sh").detect(repo)
    command = detection.environment.test_command
    assert command == "npm test"
    result = machine.run(command, repo)
    assert result.ok, result.output_tail
    assert (repo / "ran").read_text() == "yes"


def test_npm_placeholder_test_script_is_not_a_test_command(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", {"test": NPM_PLACEHOLDER})
    detection = machine.real("npm").detect(repo)
    assert detection.environment.test_command is None
    assert "placeholder" in rejected_for(detection, Slot.TEST)["npm test"]


def test_no_test_script(repo: Path, machine: Machine) -> None:
    node_repo(repo, "yarn.lock", {"lint": "eslint ."})
    detection = machine.script("yarn", "exit 0").detect(repo)
    assert detection.environment.test_command is None
    assert detection.environment.lint_command == "yarn lint"
    assert rejected_for(detection, Slot.TEST) == {"yarn test": "package.json has no test script"}


@pytest.mark.parametrize("name", ["type-check", "tsc"])
def test_other_typecheck_script_names(repo: Path, machine: Machine, name: str) -> None:
    node_repo(repo, "package-lock.json", {name: "tsc --noEmit"})
    assert machine.real("npm").detect(repo).environment.typecheck_command == f"npm run {name}"


@pytest.mark.parametrize(
    ("lockfile", "manager", "command"),
    [("package-lock.json", "npm", "npx tsc --noEmit"), ("pnpm-lock.yaml", "pnpm", "pnpm exec tsc --noEmit")],
)
def test_tsconfig_without_script_uses_tsc_when_typescript_is_a_dev_dependency(
    repo: Path, machine: Machine, lockfile: str, manager: str, command: str
) -> None:
    node_repo(repo, lockfile, {}, devDependencies={"typescript": "^5.4.0"})
    write(repo, {"tsconfig.json": "{}", "node_modules/.bin/tsc": ""})
    chosen = machine.script(manager, "exit 0").detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.command == command
    assert "typescript in devDependencies" in chosen.reason
    assert chosen.problem is None


def test_tsconfig_without_typescript_dependency_gives_no_typecheck(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", {}, dependencies={"react": "^18.0.0"})
    write(repo, {"tsconfig.json": "{}"})
    detection = machine.real("npm").detect(repo)
    assert detection.environment.typecheck_command is None
    assert "typescript is not in devDependencies" in rejected_for(detection, Slot.TYPECHECK)["npx tsc --noEmit"]


def test_typescript_declared_but_not_installed_is_marked(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", {}, devDependencies={"typescript": "^5.4.0"})
    write(repo, {"tsconfig.json": "{}"})
    chosen = machine.real("npm").detect(repo).chosen[Slot.TYPECHECK]
    assert chosen.problem == "not installed: node_modules/.bin/tsc is missing (run `npm install`)"


@pytest.mark.parametrize(
    ("config", "fields", "where"),
    [
        ({"eslint.config.mjs": "export default [];\n"}, {}, "eslint.config.mjs"),
        ({".eslintrc.json": "{}"}, {}, ".eslintrc.json"),
        ({}, {"eslintConfig": {"extends": "eslint:recommended"}}, "package.json eslintConfig"),
    ],
)
def test_eslint_config_without_a_lint_script_lints_with_eslint(
    repo: Path, machine: Machine, config: dict[str, str], fields: dict[str, object], where: str
) -> None:
    """Projects that lint only staged files (lint-staged, husky) have no lint script: their eslint still runs."""
    lint_staged = {"lint-staged": {"*.{js,ts}": ["eslint --fix", "prettier --write"]}}
    node_repo(repo, "yarn.lock", {"test": "jest"}, devDependencies={"eslint": "^9.0.0"}, **lint_staged, **fields)
    write(repo, {**config, "node_modules/.bin/eslint": ""})
    chosen = machine.script("yarn", "exit 0").detect(repo).chosen[Slot.LINT]
    assert chosen.command == "yarn eslint ."
    assert chosen.reason == f"{where} without a lint script; eslint in devDependencies; yarn from yarn.lock"
    assert chosen.problem is None


def test_a_lint_script_wins_and_eslint_without_its_package_is_not_guessed(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", {"lint": "xo"}, devDependencies={"eslint": "^9.0.0"})
    write(repo, {"eslint.config.js": ""})
    assert machine.real("npm").detect(repo).environment.lint_command == "npm run lint"
    node_repo(repo, "package-lock.json", {}, dependencies={"react": "^18.0.0"})
    detection = machine.real("npm").detect(repo)
    assert detection.environment.lint_command is None
    why = rejected_for(detection, Slot.LINT)["npx eslint ."]
    assert why == "eslint.config.js, but eslint is not in devDependencies (npx would fetch whatever eslint is)"


@pytest.mark.parametrize(
    ("script", "command", "problem"),
    [
        # Create React App's runner watches for changes unless CI is set (react-scripts/scripts/test.js).
        ("react-scripts test", "CI=true npm test", None),
        ("craco test", "CI=true npm test", None),
        ("react-scripts test --watchAll=false", "npm test", None),
        ("jest --watch", "npm test", "the test script watches for changes (jest --watch): it would never end"),
        ("jest --watchAll --coverage", "npm test", "the test script watches for changes"),
        ("vitest", "npm test", None),  # vitest runs once without a terminal
        # An ejected app's own scripts/test.js (0xckylee/react-django-unchained's frontend), and a node script
        # that does not watch.
        ("node scripts/test.js", "CI=true npm test", None),
        ("node scripts/check.js", "npm test", None),
    ],
)
def test_a_test_script_that_watches_is_made_to_run_once_or_marked(
    repo: Path, machine: Machine, script: str, command: str, problem: str | None
) -> None:
    node_repo(repo, "package-lock.json", {"test": script})
    ejected = "if (!process.env.CI && argv.indexOf('--watchAll') === -1) {\n  argv.push('--watch');\n}\n"
    write(repo, {"scripts/test.js": ejected, "scripts/check.js": "require('assert').ok(process.env.CI || true);\n"})
    chosen = machine.real("npm").detect(repo).chosen[Slot.TEST]
    assert chosen.command == command
    if problem is None:
        assert chosen.problem is None
    else:
        assert chosen.problem is not None
        assert chosen.problem.startswith(problem)


def test_yarn_plug_n_play_installs_in_each_worktree_unless_its_loader_is_committed(
    repo: Path, machine: Machine
) -> None:
    """Tried with Yarn 4.5 (corepack): a fresh checkout without .pnp.cjs fails `yarn test` with "Cannot find
    module"; `yarn install --immutable` there takes a fraction of a second from yarn's cache."""
    node_repo(repo, "yarn.lock", {"test": "node --test"}, packageManager="yarn@4.5.0")
    (repo / "node_modules" / ".keep").unlink()
    (repo / "node_modules").rmdir()  # Plug'n'Play: no node_modules at all
    write(repo, {".pnp.cjs": "// the loader\n", ".gitignore": ".pnp.*\n.yarn/*\n"})
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    detection = machine.script("yarn", "exit 0").detect(repo)
    setup = detection.chosen[Slot.SETUP]
    assert setup.command == "yarn install --immutable"
    assert setup.reason.startswith("Yarn Plug'n'Play: .pnp.cjs is not committed")
    assert detection.chosen[Slot.TEST].problem is None  # no node_modules is no missing install here
    subprocess.run(["git", "add", "-f", ".pnp.cjs"], cwd=repo, check=True)  # zero-installs: committed
    assert Slot.SETUP not in machine.detect(repo).chosen


def test_manager_not_on_path_is_marked(repo: Path, machine: Machine) -> None:
    node_repo(repo, "pnpm-lock.yaml", SCRIPTS)
    chosen = machine.detect(repo).chosen[Slot.TEST]
    assert chosen.command == "pnpm test"
    assert chosen.problem == "not installed: pnpm is not on PATH (corepack enable)"


def test_missing_node_modules_is_marked(repo: Path, machine: Machine) -> None:
    write(repo, {"package.json": package_json(SCRIPTS), "package-lock.json": ""})
    chosen = machine.real("npm").detect(repo).chosen[Slot.LINT]
    assert chosen.problem == "dependencies not installed: no node_modules/ (run `npm install`)"


def test_package_manager_field_beats_a_stray_lockfile(repo: Path, machine: Machine) -> None:
    node_repo(repo, "package-lock.json", SCRIPTS, packageManager="pnpm@9.1.0")
    detection = machine.script("pnpm", "exit 0").detect(repo)
    assert detection.environment.test_command == "pnpm test"
    assert "packageManager is pnpm@9.1.0" in rejected_for(detection, None)["npm"]


def test_broken_package_json_is_reported_with_its_line(repo: Path, machine: Machine) -> None:
    write(repo, {"package.json": '{\n  "scripts": {\n    "test": "jest",\n  }\n}\n'})
    detection = machine.real("npm").detect(repo)
    assert detection.environment.test_command is None
    assert "not valid JSON line 4" in rejected_for(detection, None)["package.json"]


@pytest.mark.parametrize(
    ("files", "fields", "setup"),
    [
        ({".yarnrc.yml": "nodeLinker: node-modules\n"}, {}, "yarn install --immutable"),
        ({}, {"packageManager": "yarn@4.4.1"}, "yarn install --immutable"),
        ({}, {"packageManager": "yarn@10.0.0"}, "yarn install --immutable"),
        ({}, {"packageManager": "yarn@1.22.22"}, None),  # classic yarn: the root's node_modules serves a worktree
        ({}, {}, None),
    ],
)
def test_yarn_2_and_later_install_in_each_worktree(
    repo: Path, machine: Machine, files: dict[str, str], fields: dict[str, object], setup: str | None
) -> None:
    """Tried with Yarn 4.4 (redux-thunk, node-modules linker): a fresh worktree fails every script with "Couldn't
    find the node_modules state file"; `yarn install --immutable` there takes ~5 s from yarn's cache."""
    node_repo(repo, "yarn.lock", SCRIPTS, **fields)
    write(repo, files)
    chosen = machine.script("yarn", "exit 0").detect(repo).chosen
    if setup is None:
        assert Slot.SETUP not in chosen
    else:
        assert chosen[Slot.SETUP].command == setup
        assert chosen[Slot.SETUP].reason.startswith("Yarn 2+")


def test_a_pnpm_workspace_installs_in_each_worktree(repo: Path, machine: Machine) -> None:
    """Tried with pnpm 10 (vite-plugin-react): a package's own node_modules/ is missing from a worktree, and tsc there
    fails with "Cannot find module"; a single pnpm project is served by the root's node_modules/."""
    node_repo(repo, "pnpm-lock.yaml", SCRIPTS)
    assert Slot.SETUP not in machine.script("pnpm", "exit 0").detect(repo).chosen
    write(repo, {"pnpm-workspace.yaml": "packages:\n  - packages/*\n"})
    setup = machine.detect(repo).chosen[Slot.SETUP]
    assert setup.command == "pnpm install --frozen-lockfile --prefer-offline"
    assert setup.reason.startswith("a pnpm workspace (pnpm-workspace.yaml)")


@pytest.mark.parametrize(
    ("manager", "lockfile", "script", "command"),
    [
        ("npm", "package-lock.json", "eslint . --fix", "npx eslint ."),
        ("bun", "bun.lock", "biome check --write --unsafe --no-errors-on-unmatched ./", None),
        ("pnpm", "pnpm-lock.yaml", "prettier -w src", "pnpm exec prettier src"),
        ("npm", "package-lock.json", "eslint . --fix-dry-run", "npm run lint"),  # reports what it would fix
        ("npm", "package-lock.json", "eslint .", "npm run lint"),
    ],
)
def test_a_lint_script_that_rewrites_files_is_run_without_its_fixing_flags(
    repo: Path, machine: Machine, manager: str, lockfile: str, script: str, command: str | None
) -> None:
    """Seen on full-stack-fastapi-template: `biome check --write --unsafe` rewrote a task's files and exited 0; a
    gate only checks (pm-agent would take the linter's fixes for the task's change, as with ruff's --fix)."""
    node_repo(repo, lockfile, {"lint": script})
    chosen = machine.script(manager, "exit 0").detect(repo).chosen[Slot.LINT]
    if command is None:  # biome via bunx: `bunx biome check --no-errors-on-unmatched ./`
        assert chosen.command == "bunx biome check --no-errors-on-unmatched ./"
        assert chosen.reason.endswith("without --write, --unsafe: a gate only checks, it rewrites nothing")
    else:
        assert chosen.command == command
    assert chosen.problem is None


@pytest.mark.parametrize(
    "script", ["prettier --write . && eslint .", "eslint --fix --fix-type problem .", "lint-fix --fix"]
)
def test_a_rewriting_lint_script_that_cannot_be_taken_apart_is_marked(
    repo: Path, machine: Machine, script: str
) -> None:
    node_repo(repo, "package-lock.json", {"lint": script})
    chosen = machine.script("npm", "exit 0").detect(repo).chosen[Slot.LINT]
    assert chosen.command == "npm run lint"
    assert chosen.problem is not None
    assert chosen.problem.startswith("the lint script rewrites files (--")


@pytest.mark.parametrize(
    ("manager", "lockfile", "root_script"),
    [
        ("bun", "bun.lock", "bun run --filter frontend lint"),
        ("pnpm", "pnpm-lock.yaml", "pnpm --filter web-app lint"),
        ("npm", "package-lock.json", "npm run lint --workspace=frontend"),
        ("yarn", "yarn.lock", "yarn workspace web-app lint"),
    ],
)
def test_a_root_script_handing_lint_to_a_workspace_package_is_judged_by_that_packages_script(
    repo: Path, machine: Machine, manager: str, lockfile: str, root_script: str
) -> None:
    """full-stack-fastapi-template: the root's `bun run --filter frontend lint` runs frontend's `biome check
    --write --unsafe`, which rewrote a task's files; the package's script, without its fixing flags, from its folder."""
    node_repo(repo, lockfile, {"lint": root_script}, workspaces=["frontend", "packages/*"])
    frontend = package_json({"lint": "biome check --write --unsafe ./"}, name="web-app")
    write(repo, {"frontend/package.json": frontend, "packages/emails/package.json": package_json({}, name="emails")})
    chosen = machine.script(manager, "exit 0").detect(repo).chosen[Slot.LINT]
    exec_ = {"bun": "bunx", "pnpm": "pnpm exec", "npm": "npx", "yarn": "yarn"}[manager]
    assert chosen.command == f"cd frontend && {exec_} biome check ./"
    assert "which runs frontend/package.json scripts.lint (biome check --write --unsafe ./)" in chosen.reason
    write(repo, {"frontend/package.json": package_json({"lint": "biome check ./"}, name="web-app")})
    assert machine.detect(repo).chosen[Slot.LINT].command == run_script(manager, "lint")  # it only checks: as is


def test_a_root_script_naming_no_workspace_package_stays_as_written(repo: Path, machine: Machine) -> None:
    node_repo(repo, "bun.lock", {"lint": "bun run --filter missing lint"}, workspaces=["frontend"])
    write(repo, {"frontend/package.json": package_json({"lint": "eslint --fix ."}, name="frontend")})
    assert machine.script("bun", "exit 0").detect(repo).chosen[Slot.LINT].command == "bun run lint"
