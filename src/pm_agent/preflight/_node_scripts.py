"""How a package manager runs a project's scripts and binaries, and what a script's text says about it: the pieces
detection of every slot shares (`_node.py`) and the format check's (`_node_format.py`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Finding, read_manifest

# How each manager runs a binary of node_modules/.bin.
EXEC = {"npm": "npx", "pnpm": "pnpm exec", "yarn": "yarn", "bun": "bunx"}


def run_script(manager: str, script: str) -> str:
    """The manager's own way to run `script`: `npm test`, `npm run lint`, `pnpm test`, `yarn lint`, `bun run test`."""
    if manager == "bun":
        return f"bun run {script}"  # `bun test` is bun's own test runner, not the script
    if script == "test":
        return f"{manager} test"
    return f"yarn {script}" if manager == "yarn" else f"{manager} run {script}"


# Flags with which a linter or formatter rewrites the files it checks (eslint, stylelint, xo, standard `--fix`;
# biome `--write`, `--apply`, `--apply-unsafe`, `--unsafe`; prettier `--write`, `-w`).
REWRITES = re.compile(r"(?<![\w-])(?:--fix|--write|--apply(?:-unsafe)?|--unsafe|-w)(?![\w=-])")


# A root script that runs one workspace package's script: `bun run --filter frontend lint`, `pnpm --filter web lint`,
# `npm run lint --workspace=frontend` (or `-w frontend`), `yarn workspace frontend lint`.
_DELEGATES = (
    re.compile(r"^(?:bun|pnpm)(?: run)? --filter[= ](?P<pkg>[\w@./-]+)(?: run)? (?P<script>[\w:.-]+)$"),
    re.compile(r"^npm run (?P<script>[\w:.-]+) (?:--workspace[= ]|-w )(?P<pkg>[\w@./-]+)$"),
    re.compile(r"^yarn workspace (?P<pkg>[\w@./-]+)(?: run)? (?P<script>[\w:.-]+)$"),
)


def delegated_script(repo: Path, script: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """(folder, script) of the workspace package a root script hands its work to, when it names exactly one by its
    name or folder and that package has the script; else None."""
    found = next((m for pattern in _DELEGATES if (m := pattern.match(script.strip())) is not None), None)
    if found is None:
        return None
    raw = data.get("workspaces")
    globs = raw.get("packages") if isinstance(raw, dict) else raw
    for pattern in globs if isinstance(globs, list) else ():
        for folder in sorted(repo.glob(pattern)) if isinstance(pattern, str) and ".." not in pattern else ():
            manifest = folder / "package.json"
            package = read_manifest(manifest, Finding()) if manifest.is_file() else None
            if package is None or found["pkg"] not in (package.get("name"), folder.name):
                continue
            scripts = package.get("scripts")
            own = scripts.get(found["script"]) if isinstance(scripts, dict) else None
            return (folder.relative_to(repo).as_posix(), own) if isinstance(own, str) else None
    return None


__all__ = ["EXEC", "REWRITES", "delegated_script", "run_script"]
