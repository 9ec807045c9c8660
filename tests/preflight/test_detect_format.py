"""The format check `pm-agent init` detects (format_command): ruff's formatter or black, a Makefile's check target,
a package.json check script or prettier, gofmt, cargo fmt. A check only, never a command that rewrites files, and
no rejected line for a project that shows no formatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot

from .conftest import Machine, package_json, rejected_for, write

UNFORMATTED = "x = {  'a':1 }\n"
FORMATTED = 'x = {"a": 1}\n'
RUFF_FORMAT_HOOK = """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.13.0
    hooks:
      - id: ruff-check
        args: [--fix]
      - id: ruff-format
        args: [--check, --line-length=100]
        files: ^(src|tests)/
"""
BLACK_HOOK = """\
repos:
  - repo: https://github.com/psf/black-pre-commit-mirror
    rev: 24.1.0
    hooks:
      - id: black
        args: [--skip-string-normalization]
"""
FAKE_BLACK = 'echo "black, 24.8.0 (compiled: yes)"'


# ---------------------------------------------------------------- Python: ruff format, black


def test_the_ruff_format_hook_checks_its_folders_and_fails_on_unformatted_code(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(repo, {".pre-commit-config.yaml": RUFF_FORMAT_HOOK, "src/app.py": UNFORMATTED, "tests/t.py": FORMATTED})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.FORMAT]
    # The hook's own `--check` is not repeated; its `files:` folders are what it formats.
    assert chosen.command == "python -m ruff format --check --extend-exclude '*.md' --line-length=100 src tests"
    assert chosen.reason.startswith("ruff: hook ruff-format in .pre-commit-config.yaml line 7; importable by python")
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert result.exit_code == 1, result.output_tail
    assert "src/app.py" in result.output_tail
    assert (repo / "src/app.py").read_text(encoding="utf-8") == UNFORMATTED, "a check rewrites nothing"
    # ruff 0.16+ formats Python blocks in Markdown too; the hook is given Python files only, so are the gates.
    write(repo, {"src/app.py": FORMATTED, "src/notes.md": "# notes\n\n```python\nx = [1,2]\n```\n"})
    assert machine.run(chosen.command, repo).ok


@pytest.mark.parametrize(
    ("files", "where"),
    [
        ({"pyproject.toml": "[tool.ruff.format]\nquote-style = 'single'\n"}, "[tool.ruff.format] in pyproject.toml"),
        ({"ruff.toml": "line-length = 90\n[format]\nindent-style = 'tab'\n"}, "[format] in ruff.toml"),
        ({".ruff.toml": "[format]\n"}, "[format] in .ruff.toml"),
    ],
)
def test_ruff_format_settings_give_ruff_format_check(
    repo: Path, machine: Machine, tooled_python: Path, files: dict[str, str], where: str
) -> None:
    write(repo, {**files, "app.py": FORMATTED})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "python -m ruff format --check --extend-exclude '*.md' ."
    assert chosen.reason == f"ruff: {where}; importable by python"


def test_the_lint_scripts_ruff_format_check_gives_its_paths(repo: Path, machine: Machine, tooled_python: Path) -> None:
    """full-stack-fastapi-template's backend/: `ruff format app --check` in scripts/lint.sh, [tool.ruff] only."""
    lint = "#!/usr/bin/env bash\nset -e\nmypy app\nruff check app\nruff format app --check\n"
    write(repo, {"pyproject.toml": "[tool.ruff]\n", "scripts/lint.sh": lint, "app/main.py": FORMATTED})
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "python -m ruff format --check app"
    assert chosen.reason.startswith("ruff: `ruff format --check` in scripts/lint.sh line 5 (`ruff format app --check`)")


def test_black_from_its_settings_on_path(repo: Path, machine: Machine, bare_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.black]\nline-length = 100\n", "app.py": FORMATTED})
    chosen = machine.add("python", bare_python).script("black", FAKE_BLACK).detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "black --check ."
    assert chosen.reason == "black: [tool.black] in pyproject.toml; black on PATH (black is not importable by python)"
    assert chosen.problem is None


def test_the_black_hook_keeps_its_flags_and_notes_the_pinned_version(
    repo: Path, machine: Machine, bare_python: Path
) -> None:
    write(repo, {".pre-commit-config.yaml": BLACK_HOOK, "setup.py": ""})
    chosen = machine.add("python", bare_python).script("black", FAKE_BLACK).detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "black --check --skip-string-normalization ."
    assert chosen.reason == (
        "black: hook black in .pre-commit-config.yaml line 5; black on PATH (black is not importable by python);"
        " black 24.8.0 here, but .pre-commit-config.yaml pins 24.1.0: its findings may differ (install black==24.1.0)"
    )


def test_ruff_format_wins_over_black(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.black]\n\n[tool.ruff.format]\n", "app.py": FORMATTED})
    detection = machine.add("python", tooled_python).script("black", FAKE_BLACK).detect(repo)
    assert detection.environment.format_command == "python -m ruff format --check --extend-exclude '*.md' ."
    why = rejected_for(detection, Slot.FORMAT)["black --check ."]
    assert why.startswith("[tool.black] in pyproject.toml, but ruff format comes first ([tool.ruff.format] in")
    assert "two formatters disagree" in why


def test_a_formatter_not_installed_is_still_the_check_marked(repo: Path, machine: Machine, bare_python: Path) -> None:
    write(repo, {"pyproject.toml": "[tool.ruff.format]\n", "app.py": FORMATTED})
    chosen = machine.add("python", bare_python).detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "python -m ruff format --check --extend-exclude '*.md' ."
    assert chosen.problem == "not installed: ruff is not importable by python and ruff does not run from PATH"


@pytest.mark.parametrize(
    "files",
    [
        {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "app.py": FORMATTED},  # ruff lints; no formatter shown
        {"setup.py": "", "tests/test_a.py": "def test_a():\n    pass\n"},
    ],
)
def test_a_python_project_without_a_formatter_gets_no_format_check_and_no_line(
    repo: Path, machine: Machine, tooled_python: Path, files: dict[str, str]
) -> None:
    write(repo, files)
    detection = machine.add("python", tooled_python).script("black", FAKE_BLACK).detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert rejected_for(detection, Slot.FORMAT) == {}


# ---------------------------------------------------------------- Makefile


def test_a_makefile_check_target_comes_first_and_format_is_never_used(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    makefile = "format:\n\tpython -m ruff format .\n\nfmt-check:\n\tpython -m ruff format --check .\n"
    write(repo, {"Makefile": makefile, "pyproject.toml": "[tool.ruff.format]\n"})
    detection = machine.real("make").add("python", tooled_python).detect(repo)
    assert detection.environment.format_command == "make fmt-check"
    assert detection.chosen[Slot.FORMAT].reason == "Makefile: make -n fmt-check succeeds"
    why = rejected_for(detection, Slot.FORMAT)["python -m ruff format --check --extend-exclude '*.md' ."]
    assert why.startswith("make fmt-check comes first")


def test_a_makefile_without_check_targets_adds_no_format_line(repo: Path, machine: Machine) -> None:
    write(repo, {"Makefile": "format:\n\tblack .\n\ntest:\n\t@echo ok\n"})
    detection = machine.real("make").detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert rejected_for(detection, Slot.FORMAT) == {}
    assert "make lint" in rejected_for(detection, Slot.LINT)  # the other slots still say why


# ---------------------------------------------------------------- Node


def node(repo: Path, scripts: dict[str, str], **fields: object) -> Path:
    return write(
        repo, {"package.json": package_json(scripts, **fields), "package-lock.json": "", "node_modules/.keep": ""}
    )


def test_a_format_check_script(repo: Path, machine: Machine) -> None:
    node(repo, {"format": "prettier --write .", "format:check": "prettier --check ."})
    chosen = machine.script("npm", "exit 0").detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "npm run format:check"
    assert chosen.reason == "package.json scripts.format:check (prettier --check .); npm from package-lock.json"


def test_a_check_script_that_rewrites_is_refused_and_prettier_checks_instead(repo: Path, machine: Machine) -> None:
    node(repo, {"format-check": "prettier -w src"}, prettier={"semi": False}, devDependencies={"prettier": "^3"})
    write(repo, {"node_modules/.bin/prettier": ""})
    detection = machine.script("npm", "exit 0").detect(repo)
    assert rejected_for(detection, Slot.FORMAT) == {
        "npm run format-check": "scripts.format-check (prettier -w src) rewrites files (-w): a format check only checks"
    }
    chosen = detection.chosen[Slot.FORMAT]
    assert chosen.command == "npx prettier --check ."
    assert chosen.reason == (
        "package.json prettier without a format script; prettier in devDependencies; npm from package-lock.json"
    )
    assert chosen.problem is None


def test_prettier_config_needs_the_dependency_and_its_binary(repo: Path, machine: Machine) -> None:
    node(repo, {}, devDependencies={"prettier": "^3"})
    write(repo, {".prettierrc.json": "{}\n"})
    chosen = machine.script("npm", "exit 0").detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "npx prettier --check ."
    assert chosen.problem == "not installed: node_modules/.bin/prettier is missing (run `npm install`)"
    node(repo, {})  # configured, but not a dependency: npx would fetch whatever prettier is
    detection = machine.detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert "prettier is not in devDependencies" in rejected_for(detection, Slot.FORMAT)["npx prettier --check ."]


def test_a_root_script_delegating_to_a_workspace_package_is_judged_by_the_packages(
    repo: Path, machine: Machine
) -> None:
    node(repo, {"format:check": "pnpm --filter web format:check"}, workspaces=["web"])
    write(repo, {"web/package.json": package_json({"format:check": "prettier --write ."}, name="web")})
    detection = machine.script("npm", "exit 0").detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert (
        "(prettier --write .) rewrites files (--write)" in rejected_for(detection, Slot.FORMAT)["npm run format:check"]
    )
    write(repo, {"web/package.json": package_json({"format:check": "prettier --check ."}, name="web")})
    chosen = machine.detect(repo).chosen[Slot.FORMAT]
    assert chosen.command == "npm run format:check"
    assert chosen.reason.endswith(", which runs web/package.json scripts.format:check (prettier --check .)")


def test_a_node_project_without_formatter_has_no_format_line(repo: Path, machine: Machine) -> None:
    node(repo, {"lint": "eslint .", "format": "eslint --fix . && prettier --write ."})  # no formatter alone
    detection = machine.script("npm", "exit 0").detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert rejected_for(detection, Slot.FORMAT) == {}


@pytest.mark.parametrize(
    ("script", "package", "lockfile", "command"),
    [
        # vite-plugin-react: `"format": "oxfmt"`, which its CI runs as `pnpm format --check`.
        ("oxfmt", "oxfmt", "pnpm-lock.yaml", "pnpm exec oxfmt --check"),
        ("prettier --write .", "prettier", "package-lock.json", "npx prettier --check ."),
        (
            "prettier -w 'src/**/*.ts' --log-level warn",
            "prettier",
            "yarn.lock",
            "yarn prettier --check 'src/**/*.ts' --log-level warn",
        ),
        ("biome format --write ./src", "@biomejs/biome", "package-lock.json", "npx biome format ./src"),
        ("dprint fmt", "dprint", "bun.lock", "bunx dprint check"),
    ],
)
def test_a_format_script_that_runs_one_formatter_gives_its_check(
    repo: Path, machine: Machine, script: str, package: str, lockfile: str, command: str
) -> None:
    binary = command.split()[2] if command.startswith("pnpm exec") else command.split()[1]
    write(repo, {"package.json": package_json({"format": script}, devDependencies={package: "1"}), lockfile: ""})
    write(repo, {f"node_modules/.bin/{binary}": ""})
    manager = {"pnpm-lock.yaml": "pnpm", "yarn.lock": "yarn", "bun.lock": "bun"}.get(lockfile, "npm")
    detection = machine.script(manager, "exit 0").detect(repo)
    chosen = detection.chosen[Slot.FORMAT]
    assert chosen.command == command
    assert chosen.reason.startswith(f"package.json scripts.format ({script}) formats in place: its check; {package} in")
    assert chosen.problem is None
    assert rejected_for(detection, Slot.FORMAT) == {}, "the prettier configuration's check is not offered twice"


def test_a_format_scripts_formatter_must_be_a_dependency_and_installed(repo: Path, machine: Machine) -> None:
    node(repo, {"format": "prettier --write ."})
    detection = machine.script("npm", "exit 0").detect(repo)
    assert Slot.FORMAT not in detection.chosen
    assert rejected_for(detection, Slot.FORMAT) == {
        "npx prettier --check .": (
            "scripts.format runs prettier, but prettier is not in devDependencies (npx would fetch it)"
        )
    }
    node(repo, {"format": "prettier --write ."}, devDependencies={"prettier": "^3"})
    chosen = machine.detect(repo).chosen[Slot.FORMAT]
    assert chosen.problem == "not installed: node_modules/.bin/prettier is missing (run `npm install`)"
    node(
        repo, {"format": "prettier --write .", "format:check": "prettier --check ."}, devDependencies={"prettier": "^3"}
    )
    assert machine.detect(repo).chosen[Slot.FORMAT].command == "npm run format:check", "the project's check first"


# ---------------------------------------------------------------- Go, Rust: always their standard formatter

GOFMT = 'out=$(gofmt -l . 2>&1); printf \'%s\' "$out"; test -z "$out"'


def test_gofmt_lists_unformatted_files_and_fails(repo: Path, machine: Machine) -> None:
    write(repo, {"go.mod": "module example.com/demo\n\ngo 1.22\n", "main.go": "package main\nfunc main(){}\n"})
    detection = machine.real("go", "gofmt", "sh").detect(repo)
    chosen = detection.chosen[Slot.FORMAT]
    assert chosen.command == GOFMT
    assert chosen.reason.startswith("go.mod: gofmt, go's own formatter")
    assert chosen.problem is None
    result = machine.run(chosen.command, repo)
    assert result.exit_code == 1
    assert result.output_tail.strip() == "main.go"
    assert (repo / "main.go").read_text(encoding="utf-8") == "package main\nfunc main(){}\n"
    write(repo, {"main.go": "package main\n\nfunc main() {}\n"})
    result = machine.run(chosen.command, repo)
    assert result.ok, result.output_tail
    assert result.output_tail.strip() == ""


def test_rust_crate_and_workspace_get_cargo_fmt_check(repo: Path, machine: Machine) -> None:
    cargo = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
    write(repo, {"Cargo.toml": cargo, "src/lib.rs": "pub fn f( )->u8{1}\n", "rustfmt.toml": 'edition = "2021"\n'})
    detection = machine.real("cargo", "cargo-fmt", "rustfmt").detect(repo)
    chosen = detection.chosen[Slot.FORMAT]
    assert chosen.command == "cargo fmt --check"
    assert "rustfmt, rust's own formatter, settings in rustfmt.toml" in chosen.reason
    assert chosen.problem is None
    assert machine.run(chosen.command, repo).exit_code == 1
    assert (repo / "src/lib.rs").read_text(encoding="utf-8") == "pub fn f( )->u8{1}\n"
    write(repo, {"src/lib.rs": "pub fn f() -> u8 {\n    1\n}\n"})
    assert machine.run(chosen.command, repo).ok
    write(repo, {"Cargo.toml": '[workspace]\nmembers = ["a"]\n'})
    assert machine.detect(repo).environment.format_command == "cargo fmt --all --check"
