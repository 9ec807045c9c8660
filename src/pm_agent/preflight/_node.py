"""Node: package.json scripts run by the package manager the lockfile names, in its own syntax.

npm's placeholder test script (`echo "Error: no test specified" && exit 1`) is not a test command.
Without a typecheck script, a tsconfig.json gives `tsc --noEmit` only when typescript is a dependency:
otherwise `npx tsc` fetches the unrelated `tsc` package from the registry. Without a lint script, an eslint
configuration gives `eslint .` the same way (projects that lint only staged files, in a lint-staged hook).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot, read_manifest
from pm_agent.preflight._node_format import format_script
from pm_agent.preflight._node_scripts import EXEC, REWRITES, delegated_script, run_script
from pm_agent.preflight._probe import Probe

LOCKFILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
)
SCRIPTS: dict[Slot, tuple[str, ...]] = {
    Slot.TEST: ("test",),
    Slot.LINT: ("lint",),
    Slot.TYPECHECK: ("typecheck", "type-check", "tsc"),
    Slot.BUILD: ("build",),
    # A check only: `format` scripts write (`prettier --write .`); these names are the projects' check scripts.
    Slot.FORMAT: (
        "format:check",
        "check:format",
        "format-check",
        "check-format",
        "prettier:check",
        "prettier-check",
        "fmt:check",
        "lint:format",
    ),
}
"""package.json script names per slot, in order of preference."""


def detect_node(probe: Probe) -> Finding | None:
    """Script commands for a package.json at the root; None without one."""
    path = probe.repo / "package.json"
    if not path.is_file():
        return None
    found = Finding()
    data = read_manifest(path, found)
    if data is None:
        return found
    manager, how = _manager(probe.repo, data, found)
    pnp = _plug_n_play(probe.repo, manager, found)
    if pnp is None:
        _per_checkout(probe.repo, manager, data, found)
    problem = _problem(probe, manager, pnp)
    raw_scripts = data.get("scripts")
    scripts = {k: v for k, v in raw_scripts.items() if isinstance(v, str)} if isinstance(raw_scripts, dict) else {}
    for slot, names in SCRIPTS.items():
        name = next((n for n in names if n in scripts), None)
        if slot is Slot.FORMAT:
            name = format_script(probe.repo, (manager, how), names, scripts, data, (problem, pnp), found)
        if name is None:
            for tool in (t for t in _BINARIES if t.slot is slot):
                _binary(tool, probe.repo, data, manager, how, problem, pnp, found)
            if slot is Slot.TEST:
                found.rejected.append(Rejected(run_script(manager, "test"), "package.json has no test script", slot))
            continue
        command = run_script(manager, name)
        if slot is Slot.TEST and "no test specified" in scripts[name]:
            found.rejected.append(Rejected(command, "the test script is npm's placeholder that always fails", slot))
            continue
        reason = f"package.json scripts.{name} ({scripts[name]}); {how}"
        watching = None
        if slot is Slot.TEST:
            command, reason, watching = _once(command, reason, scripts[name], probe.repo)
        elif slot is Slot.FORMAT:
            delegated = delegated_script(probe.repo, scripts[name], data)
            if delegated is not None:
                reason = f"{reason}, which runs {delegated[0]}/package.json scripts.{name} ({delegated[1]})"
        elif slot is Slot.LINT:
            delegated = delegated_script(probe.repo, scripts[name], data)
            if delegated is not None:  # `bun run --filter frontend lint`: the package's own script decides
                folder, script = delegated
                reason = f"{reason}, which runs {folder}/package.json scripts.{name} ({script})"
                checked, reason, watching = _checking(command, reason, script, manager)
                command = command if checked == command else f"cd {folder} && {checked}"
            else:
                command, reason, watching = _checking(command, reason, scripts[name], manager)
        found.candidates.append(Candidate(slot, command, reason, problem or watching))
    return found


def _checking(command: str, reason: str, script: str, manager: str) -> tuple[str, str, str | None]:
    """A lint script that rewrites files, as a gate must not (pm-agent would take its fixes for the task's change):
    one command with the flags dropped, run by the manager's exec; else the problem to fix."""
    flags = REWRITES.findall(script)
    if not flags:
        return command, reason, None
    said = ", ".join(dict.fromkeys(flags))
    if re.search(r"&&|\|\||[;|&<>`$]|--fix-type", script) or not _NODE_BINARY.match(script):
        why = "it would change the files it checks; set environment.lint_command to a command that only checks"
        return command, reason, f"the lint script rewrites files ({said}): {why}"
    checking = " ".join(REWRITES.sub("", script).split())
    return f"{EXEC[manager]} {checking}", f"{reason}, without {said}: a gate only checks, it rewrites nothing", None


_NODE_BINARY = re.compile(r"^(?:eslint|biome|prettier|stylelint|xo|standard|tslint|oxlint)\s")


# Create React App's runner (and its wrappers) watches for changes unless CI is set; a gate must run once and end.
_WATCH_UNLESS_CI = re.compile(r"\b(?:react-scripts|craco|react-app-rewired)\s+test\b")
_WATCHES = re.compile(r"(?<![\w-])--watch(?:All)?(?![\w=-])")
# `node scripts/test.js`: an ejected Create React App's own copy of that runner, which watches the same way.
_NODE_FILE = re.compile(r"^node\s+([\w./-]+\.[cm]?js)\b")


def _once(command: str, reason: str, script: str, repo: Path) -> tuple[str, str, str | None]:
    """The test command made to run once and end: CI=true for Create React App's runner (or an ejected app's copy
    of it); with a script that asks for watch mode itself, the problem to fix."""
    if _WATCHES.search(script):
        why = "it would never end; set environment.test_command to a command that runs the tests once"
        return command, reason, f"the test script watches for changes ({script}): {why}"
    if "CI=" in script or "--watchAll=false" in script:
        return command, reason, None
    runner = _NODE_FILE.match(script)
    if _WATCH_UNLESS_CI.search(script) or (runner is not None and _watches_unless_ci(repo / runner.group(1))):
        return f"CI=true {command}", f"{reason}; CI=true: it watches for changes unless CI is set", None
    return command, reason, None


def _watches_unless_ci(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "process.env.CI" in text and "--watch" in text


def _manager(repo: Path, data: dict[str, Any], found: Finding) -> tuple[str, str]:
    """The package manager and why: the packageManager field, else the lockfile, else npm."""
    locks = [(name, manager) for name, manager in LOCKFILES if (repo / name).is_file()]
    field = data.get("packageManager")
    if isinstance(field, str) and field.split("@", 1)[0] in EXEC:
        manager = field.split("@", 1)[0]
        for name, other in locks:
            if other != manager:
                found.rejected.append(Rejected(other, f"{name} present, but package.json packageManager is {field}"))
        return manager, f"{manager} from package.json packageManager ({field})"
    if not locks:
        return "npm", "npm: no lockfile"
    name, manager = locks[0]
    for other_name, other in locks[1:]:
        if other != manager:
            found.rejected.append(Rejected(other, f"{other_name} present too; {name} comes first"))
    return manager, f"{manager} from {name}"


def _problem(probe: Probe, manager: str, pnp: str | None) -> str | None:
    if probe.which(manager) is None:
        hint = " (corepack enable)" if manager in ("pnpm", "yarn") else ""
        return f"not installed: {manager} is not on PATH{hint}"
    if pnp is None and not (probe.repo / "node_modules").is_dir():
        return f"dependencies not installed: no node_modules/ (run `{manager} install`)"
    return None


def _plug_n_play(repo: Path, manager: str, found: Finding) -> str | None:
    """Yarn's Plug'n'Play loader (`.pnp.cjs`), when the project has one: its dependencies live in yarn's cache, not
    node_modules/, and a worktree without a committed loader must install its own (`setup_command`)."""
    loader = next((name for name in (".pnp.cjs", ".pnp.js") if (repo / name).is_file()), None)
    if manager != "yarn" or loader is None:
        return None
    if not _tracked(repo, loader):
        why = f"Yarn Plug'n'Play: {loader} is not committed, so a worktree has no loader until yarn installs one"
        found.candidates.append(Candidate(Slot.SETUP, "yarn install --immutable", why + " (from yarn's cache)"))
    return loader


_YARN_BERRY = re.compile(r"^yarn@(?:[2-9]|\d{2,})\.")


def _per_checkout(repo: Path, manager: str, data: dict[str, Any], found: Finding) -> None:
    """A setup command for the managers that want an install in the checkout itself, which a worktree lacks:
    Yarn 2+ reads its install state from the project's own node_modules/ ("Couldn't find the node_modules state
    file" otherwise); a pnpm workspace's packages each have a node_modules/ of their own, which resolution from a
    worktree never reaches (the repository's root one holds the root's dependencies only)."""
    field = data.get("packageManager")
    berry = isinstance(field, str) and _YARN_BERRY.match(field) is not None
    if manager == "yarn" and (berry or (repo / ".yarnrc.yml").is_file()):
        why = "Yarn 2+ (.yarnrc.yml or packageManager): it keeps its install state in the checkout's own node_modules/"
        found.candidates.append(Candidate(Slot.SETUP, "yarn install --immutable", why + " (from yarn's cache)"))
    elif manager == "pnpm" and (repo / "pnpm-workspace.yaml").is_file():
        why = "a pnpm workspace (pnpm-workspace.yaml): each package has its own node_modules/, which a worktree lacks"
        command = "pnpm install --frozen-lockfile --prefer-offline"
        found.candidates.append(Candidate(Slot.SETUP, command, why + " (linked from pnpm's store)"))


@dataclass(frozen=True)
class _Binary:
    """A dependency's own binary, run when the project configures it but has no script for the slot."""

    slot: Slot
    package: str  # the dependency that installs it
    args: str  # its command line after the manager's exec: `tsc --noEmit`
    configs: tuple[str, ...]  # any of these files at the root configures it
    manifest_key: str | None = None  # or this package.json key (`eslintConfig`)

    @property
    def binary(self) -> str:
        return self.args.split()[0]


_BINARIES = (
    _Binary(Slot.TYPECHECK, "typescript", "tsc --noEmit", ("tsconfig.json",)),
    # A lint-staged or husky hook runs eslint on staged files only; a project without a lint script still has it.
    _Binary(
        Slot.LINT,
        "eslint",
        "eslint .",
        (
            *(f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")),
            ".eslintrc",
            *(f".eslintrc.{ext}" for ext in ("js", "cjs", "json", "yaml", "yml")),
        ),
        manifest_key="eslintConfig",
    ),
    # Without a format-check script, a prettier configuration: prettier's own check, as CI runs it.
    _Binary(
        Slot.FORMAT,
        "prettier",
        "prettier --check .",
        (
            ".prettierrc",
            *(f".prettierrc.{ext}" for ext in ("json", "json5", "yml", "yaml", "toml", "js", "cjs", "mjs")),
            *(f"prettier.config.{ext}" for ext in ("js", "cjs", "mjs", "ts")),
        ),
        manifest_key="prettier",
    ),
)


def _binary(
    tool: _Binary,
    repo: Path,
    data: dict[str, Any],
    manager: str,
    how: str,
    problem: str | None,
    pnp: str | None,
    found: Finding,
) -> None:
    """`tool` for a configured project without a script for its slot, when its package is a dependency (otherwise
    `npx` would fetch whatever package has that name)."""
    if any(c.slot is tool.slot for c in found.candidates):
        return  # the project's own script for the slot came first (a `format` script's formatter)
    config = next((name for name in tool.configs if (repo / name).is_file()), None)
    if config is None and tool.manifest_key is not None and tool.manifest_key in data:
        config = f"package.json {tool.manifest_key}"
    if config is None:
        return
    command = f"{EXEC[manager]} {tool.args}"
    deps = {key: data.get(key) for key in ("devDependencies", "dependencies")}
    where = next((key for key, table in deps.items() if isinstance(table, dict) and tool.package in table), None)
    if where is None:
        why = f"{config}, but {tool.package} is not in devDependencies (npx would fetch whatever {tool.binary} is)"
        found.rejected.append(Rejected(command, why, tool.slot))
        return
    if problem is None and pnp is None and not (repo / "node_modules" / ".bin" / tool.binary).exists():
        problem = f"not installed: node_modules/.bin/{tool.binary} is missing (run `{manager} install`)"
    reason = f"{config} without a {tool.slot.label} script; {tool.package} in {where}; {how}"
    found.candidates.append(Candidate(tool.slot, command, reason, problem))


def _tracked(repo: Path, name: str) -> bool:
    """Whether git tracks `name` in the repository (a checkout has it)."""
    from pm_agent.vcs import Git  # on use: most projects are not Plug'n'Play

    try:
        return Git(repo).try_run("ls-files", "--error-unmatch", "--", name).returncode == 0
    except OSError:
        return False


__all__ = ["LOCKFILES", "SCRIPTS", "detect_node", "run_script"]
