"""Python: the interpreter to use, pytest, Django's runner or unittest, ruff or flake8, mypy or pyright, ruff's
formatter or black (`_format.py`).

The interpreter: the repository's own `.venv/bin/python` (by absolute path: task worktrees are fresh
checkouts without the untracked venv), else the environment poetry, pipenv or hatch keeps for the project (asked
of them, by absolute path: `_envs.py`), else `python`, else `python3` on PATH, each only if it runs Python 3 (a
pyenv shim without a version does not). Tools run as `<python> -m tool` when that
interpreter imports them, else as the executable on PATH, else as `<python> -m tool` marked not
installed.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._django import django_project, pytest_runs_django
from pm_agent.preflight._envs import managed_interpreter
from pm_agent.preflight._format import FORMAT_HOOKS, python_format
from pm_agent.preflight._hatch import hatch_scripts
from pm_agent.preflight._lintscript import script_targets
from pm_agent.preflight._precommit import Hook, drift, pinned_versions, read_hooks
from pm_agent.preflight._probe import Probe, PythonInfo
from pm_agent.preflight._unittest import discover, unittest_blocker
from pm_agent.preflight._unittest import read as _read
from pm_agent.preflight._unittest import sample as _sample

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "tox.ini", "pytest.ini")
"""Any of these at the root makes a Python project (so do the lint/typecheck configs below and test files)."""
VENVS = (".venv", "venv")
# Directories never searched for tests: environments, dependencies, build output, VCS and caches.
_SKIP_DIRS = {"node_modules", "venv", "env", "build", "dist", "site-packages", "__pycache__", "target", "vendor"}
_MAX_TEST_FILES = 200
_MAX_DIRS = 5000
_SECTION = re.compile(r"^[ \t]*\[([^\]]+)\]", re.MULTILINE)


@dataclass(frozen=True)
class _Files:
    """The configuration files detection reads, parsed once."""

    repo: Path
    pyproject: dict[str, Any]
    hooks: dict[str, Hook]
    notes: list[Rejected]

    def hook(self, *ids: str) -> Hook | None:
        """The first of these pre-commit hooks the repository has."""
        return next((self.hooks[i] for i in ids if i in self.hooks), None)

    def table(self, *keys: str) -> dict[str, Any] | None:
        """pyproject.toml's table [tool.<keys>], or None."""
        node: Any = self.pyproject.get("tool")
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else None

    def tool(self, *keys: str) -> bool:
        """Whether pyproject.toml has the table [tool.<keys>]."""
        return self.table(*keys) is not None

    def section(self, name: str, section: str) -> str | None:
        """`[section] in name line N` when the ini-style file `name` has that section."""
        path = self.repo / name
        if not path.is_file():
            return None
        text = _read(path)
        for match in _SECTION.finditer(text):
            if match.group(1).strip() == section:
                return f"[{section}] in {name} line {text.count(chr(10), 0, match.start()) + 1}"
        return None

    def has_key(self, name: str, key: str) -> bool:
        """Whether the ini-style file `name` sets `key` (in any section; used for mypy/pytest settings)."""
        path = self.repo / name
        return path.is_file() and re.search(rf"^[ \t]*{key}[ \t]*=", _read(path), re.MULTILINE) is not None


def detect_python(probe: Probe) -> Finding | None:
    """Test, lint and typecheck commands for a Python project; None when the repository is not one."""
    repo = probe.repo
    files = _load(repo)
    django = django_project(repo)
    tests = _test_files(repo)
    mypy_config, pyright_config = _typecheck_configs(files)
    mypy_args, mypy_why = _mypy_args(files)
    configs = [_pytest_config(files), _ruff_config(files), _flake8_config(files), mypy_config, pyright_config]
    hooked = files.hook("ruff-check", "ruff", "flake8", "mypy", "pyright", *FORMAT_HOOKS) is not None
    if not any((repo / m).is_file() for m in MARKERS) and not tests and not any(configs) and not hooked:
        return None
    found = Finding(rejected=list(files.notes))
    python, problem = _interpreter(probe, files, found)
    # The project's own commands first: hatch scripts (`hatch run test`, `hatch run types:check`).
    hatch_scripts(probe, files.pyproject, python, problem, lambda *tool: _tool(probe, python, *tool), found)
    if django is None or not _django(probe, python, problem, django, tests, found):
        _test(probe, files, python, problem, tests, found, django=django is not None)
    # --no-fix: with `fix = true` in a project's ruff settings (pallets' projects have it) `ruff check` rewrites the
    # files it checks and exits 0: the lint gate would pass by editing the agent's work behind the checked tree.
    checks = [
        (Slot.LINT, "ruff", *_ruff(files)),
        (Slot.LINT, "flake8", *_settings(_flake8_config(files), "", files.hook("flake8"))),
        (Slot.TYPECHECK, "mypy", *_settings(mypy_config and mypy_config + mypy_why, mypy_args, files.hook("mypy"))),
        (Slot.TYPECHECK, "pyright", *_settings(pyright_config, "", files.hook("pyright"))),
    ]
    pins = pinned_versions(probe.repo)
    for slot, tool, args, config in checks:
        if config is not None:
            command, how, missing = _tool(probe, python, tool, tool, args)
            if missing is None:
                how += drift(probe, command.removesuffix(args), tool, pins)
            found.candidates.append(Candidate(slot, command, f"{tool}: {config}; {how}", problem or missing))
    read = (files.pyproject, files.hooks, pins)
    python_format(probe, read, lambda *tool: _tool(probe, python, *tool), problem, found)
    return found


def tool_config(repo: Path) -> str | None:
    """Where the project at `repo` configures a Python test, lint or typecheck tool of its own, or None."""
    files = _load(repo)
    configs = (_pytest_config(files), _ruff_config(files), _flake8_config(files), *_typecheck_configs(files))
    return next((c for c in configs if c is not None), None)


def _interpreter(probe: Probe, files: _Files, found: Finding) -> tuple[PythonInfo, str | None]:
    """The first of the repository venv (a uv workspace member's: the workspace root's), the environment poetry,
    pipenv or hatch keeps for it, `python`, `python3` that runs Python 3; else python3 with a problem (also when uv,
    poetry, pipenv or hatch has not made the project's environment yet)."""
    homes = [(probe.workspace, " of the uv workspace at the repository's root")] if probe.workspace else []
    for home, where in [*homes, (probe.repo, "")]:
        for venv in VENVS:
            exe = home / venv / "bin" / "python"
            if exe.exists():
                info = probe.python(str(exe))
                label = f"{venv}/bin/python{where}"
                if isinstance(info, PythonInfo):
                    own = label if where else f"{label} (the repository's own)"
                    return PythonInfo(shlex.quote(str(exe)), own, info.modules), None
                found.rejected.append(Rejected(label, info))
    managed, problem = managed_interpreter(probe, files.tool, found)
    if managed is not None:
        return managed, None
    for name in ("python", "python3"):
        if probe.which(name) is None:
            found.rejected.append(Rejected(name, "not on PATH"))
            continue
        info = probe.python(name)
        if isinstance(info, PythonInfo):
            return info, problem
        found.rejected.append(Rejected(name, info))
    problem = "no Python 3 interpreter: no .venv/bin/python, and neither python nor python3 on PATH runs Python 3"
    return PythonInfo("python3", "python3", frozenset()), problem


def _tool(probe: Probe, python: PythonInfo, module: str, exe: str, args: str) -> tuple[str, str, str | None]:
    """(command, how it runs, problem) for a Python tool: `-m module`, else `exe` on PATH, else not installed."""
    if module in python.modules:
        return f"{python.command} -m {module}{args}", f"importable by {python.label}", None
    # `--version` catches pyenv shims that exist for every tool of every version; not for pyright,
    # whose PyPI wrapper downloads node on first run.
    on_path = probe.which(exe) is not None if exe == "pyright" else probe.runs(exe) is None
    if on_path:
        return f"{exe}{args}", f"{exe} on PATH ({module} is not importable by {python.label})", None
    problem = f"not installed: {module} is not importable by {python.label} and {exe} does not run from PATH"
    return f"{python.command} -m {module}{args}", "not installed yet", problem


def _test(
    probe: Probe,
    files: _Files,
    python: PythonInfo,
    problem: str | None,
    tests: list[str],
    found: Finding,
    *,
    django: bool,
) -> None:
    """pytest when configured or importable, unittest for unittest-only suites without pytest, unittest discovery
    for suites pytest does not collect (mkdocs' `*_tests.py`), none without tests."""
    config = _pytest_config(files)
    prefix, layout = _src_prefix(files)
    pytest = f"{python.command} -m pytest -q"
    if not django and _python_files(files) is None:
        # A Django project's tests.py are its runner's or pytest-django's (with python_files set, usually).
        collected = [t for t in tests if _is_test_name(Path(t).name)]
        if tests and not collected:
            discover(probe, python, problem, tests, found, *_src_prefix(files))
            return
        tests = collected
    if config is None and not tests:
        why = "no tests: no test_*.py, *_test.py, *_tests.py or tests.py files and no pytest configuration"
        found.rejected.append(Rejected(pytest, why, Slot.TEST))
        return
    where = config or _sample(tests)
    if config is not None and not tests:
        where += " (no test files yet: pytest exits 5 until the first test exists)"
    if "pytest" in python.modules:
        reason = f"pytest: {where}; importable by {python.label}{layout}"
        found.candidates.append(Candidate(Slot.TEST, prefix + pytest, reason, problem))
        return
    unittest_why = "pytest is configured" if config else unittest_blocker(probe.repo, tests)
    if unittest_why is None:
        command = f"{prefix}{python.command} -m unittest"
        reason = f"unittest discovery: {_sample(tests)} use unittest; pytest is not importable by {python.label}"
        found.candidates.append(Candidate(Slot.TEST, command, reason + layout, problem))
        found.rejected.append(Rejected(pytest, f"pytest is not importable by {python.label}", Slot.TEST))
        return
    found.rejected.append(Rejected(f"{python.command} -m unittest", unittest_why, Slot.TEST))
    command, how, missing = _tool(probe, python, "pytest", "pytest", " -q")
    reason = f"pytest: {where}; {how}{layout}"
    found.candidates.append(Candidate(Slot.TEST, prefix + command, reason, problem or missing))


def _django(
    probe: Probe, python: PythonInfo, problem: str | None, project: tuple[str, str], tests: list[str], found: Finding
) -> bool:
    """`manage.py test` for a Django project whose pytest configuration does not set Django up (run from the
    folder of its manage.py); False when pytest runs its tests (pytest-django configured) or it has none."""
    folder, settings = project
    # The top's pytest configuration only: pytest run from the top reads no other.
    if pytest_runs_django(probe.repo) is not None or not tests:
        return False
    cd = f"cd {shlex.quote(folder)} && " if folder else ""
    command = f"{cd}{python.command} manage.py test --noinput"
    missing = None if "django" in python.modules else f"not installed: django is not importable by {python.label}"
    importable = f"django importable by {python.label}" if missing is None else "django not installed yet"
    manage = f"{folder}/manage.py" if folder else "manage.py"
    reason = f"Django: {manage} sets DJANGO_SETTINGS_MODULE to {settings}; {_sample(tests)}; {importable}"
    found.candidates.append(Candidate(Slot.TEST, command, reason, problem or missing))
    why = "Django's tests need Django set up: pytest runs them only with pytest-django told the settings module"
    found.rejected.append(Rejected(f"{python.command} -m pytest -q", why, Slot.TEST))
    return True


def _src_prefix(files: _Files) -> tuple[str, str]:
    """`PYTHONPATH=src ` for a src layout whose pytest config does not set pythonpath, and why."""
    src = files.repo / "src"
    if not src.is_dir() or not any(p.suffix == ".py" or (p / "__init__.py").is_file() for p in src.iterdir()):
        return "", ""
    tables = (files.table("pytest", "ini_options") or {}, files.table("pytest") or {})
    ini_files = ("pytest.ini", "tox.ini", "setup.cfg")
    if any("pythonpath" in t for t in tables) or any(files.has_key(name, "pythonpath") for name in ini_files):
        return "", ""
    why = "; PYTHONPATH=src: src layout, so the worktree's code is imported, not an installed copy"
    return "PYTHONPATH=src ", why


def _pytest_config(files: _Files) -> str | None:
    if files.tool("pytest", "ini_options"):
        return "[tool.pytest.ini_options] in pyproject.toml"
    if files.tool("pytest"):
        return "[tool.pytest] in pyproject.toml"
    if (files.repo / "pytest.ini").is_file():
        return "pytest.ini"
    for name in ("tox.ini", "setup.cfg"):
        for section in ("pytest", "tool:pytest"):
            if where := files.section(name, section):
                return where
    for conftest in ("conftest.py", "tests/conftest.py", "test/conftest.py"):
        if (files.repo / conftest).is_file():
            return conftest
    return None


def _python_files(files: _Files) -> str | None:
    """Where pytest's configuration sets python_files (the files it collects), or None."""
    tables = {"[tool.pytest.ini_options]": files.table("pytest", "ini_options"), "[tool.pytest]": files.table("pytest")}
    where = next((f"{name} in pyproject.toml" for name, t in tables.items() if t and "python_files" in t), None)
    return where or next((n for n in ("pytest.ini", "tox.ini", "setup.cfg") if files.has_key(n, "python_files")), None)


def _ruff_config(files: _Files) -> str | None:
    if files.tool("ruff"):
        return "[tool.ruff] in pyproject.toml"
    return next((name for name in ("ruff.toml", ".ruff.toml") if (files.repo / name).is_file()), None)


def _ruff(files: _Files) -> tuple[str, str | None]:
    """`ruff check`'s arguments and where its use is configured: a ruff settings file, else a pre-commit hook."""
    config, hook = _ruff_config(files), files.hook("ruff-check", "ruff")
    if config is None and hook is not None:
        return f" check --no-fix{hook.check_args('check')}{hook.targets(' .')}", hook.where
    return " check --no-fix .", config


def _settings(config: str | None, args: str, hook: Hook | None) -> tuple[str, str | None]:
    """A tool's arguments and where its use is configured: its settings (then `args`), else its pre-commit hook
    (the hook's flags, then its folders or the targets in `args`); None where neither is."""
    if config is None and hook is not None:
        return hook.check_args() + hook.targets(args), hook.where
    return args, config


def _flake8_config(files: _Files) -> str | None:
    if (files.repo / ".flake8").is_file():
        return ".flake8"
    return files.section("setup.cfg", "flake8") or files.section("tox.ini", "flake8")


def _typecheck_configs(files: _Files) -> tuple[str | None, str | None]:
    mypy = "[tool.mypy] in pyproject.toml" if files.tool("mypy") else None
    mypy = mypy or next((name for name in ("mypy.ini", ".mypy.ini") if (files.repo / name).is_file()), None)
    mypy = mypy or files.section("setup.cfg", "mypy")
    pyright = "pyrightconfig.json" if (files.repo / "pyrightconfig.json").is_file() else None
    pyright = pyright or ("[tool.pyright] in pyproject.toml" if files.tool("pyright") else None)
    return mypy, pyright


def _mypy_args(files: _Files) -> tuple[str, str]:
    """(arguments, why) for mypy: none when the config names what to check (`files`, `modules`, `packages`); else
    the paths the project's lint script gives it (`_lintscript.py`); else `src` for a src layout, else `.`."""
    table, ini = files.table("mypy") or {}, ("mypy.ini", ".mypy.ini")
    if any(key in table or any(files.has_key(n, key) for n in ini) for key in ("files", "modules", "packages")):
        return "", ""
    if (script := script_targets(files.repo, "mypy")) is not None:
        return script[0], f"; its targets as {script[1]}"
    return (" src" if (files.repo / "src").is_dir() else " ."), ""


def _load(repo: Path) -> _Files:
    notes: list[Rejected] = []
    hooks = read_hooks(repo, notes)
    pyproject: dict[str, Any] = {}
    path = repo / "pyproject.toml"
    if path.is_file():
        try:
            pyproject = tomllib.loads(_read(path))
        except tomllib.TOMLDecodeError as exc:
            notes.append(Rejected("pyproject.toml", f"not valid TOML ({exc}); its [tool.*] tables were not read"))
    return _Files(repo=repo, pyproject=pyproject, hooks=hooks, notes=notes)


def _test_files(repo: Path) -> list[str]:
    """test_*.py, *_test.py, *_tests.py and tests.py files (Django's `startapp` module, mkdocs' suites), relative
    and sorted, outside environments, dependencies and dot dirs."""
    found: list[str] = []
    for dirs, (root, subdirs, names) in enumerate(os.walk(repo), start=1):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in _SKIP_DIRS)
        rel = Path(root).relative_to(repo)
        found += [
            (rel / n).as_posix()
            for n in names
            if n.endswith(".py") and (_is_test_name(n) or n == "tests.py" or n.endswith("_tests.py"))
        ]
        if len(found) >= _MAX_TEST_FILES or dirs >= _MAX_DIRS:
            break
    return sorted(found)


def _is_test_name(name: str) -> bool:
    """What pytest collects by default (python_files = test_*.py *_test.py)."""
    return name.startswith("test_") or name.endswith("_test.py")


__all__ = ["MARKERS", "VENVS", "detect_python", "tool_config"]
