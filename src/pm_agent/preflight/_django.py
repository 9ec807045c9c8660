"""Django: a project's tests run by Django's own runner, `python manage.py test`.

A project `django-admin startproject` made has a `manage.py` that sets DJANGO_SETTINGS_MODULE, and the apps'
tests live in `tests.py` (`startapp`'s file), which neither pytest's default file patterns nor a plain
`python -m unittest` can run: Django must be set up first. pytest runs them only through pytest-django, with
the settings module in its configuration (`DJANGO_SETTINGS_MODULE = ...` or `--ds=...`); then pytest is the
runner, as configured.
"""

from __future__ import annotations

import re
from pathlib import Path

from pm_agent.preflight._candidates import project_folders

# `os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")`, or an assignment to `os.environ[...]`.
_SETTINGS = re.compile(r"""DJANGO_SETTINGS_MODULE['"]\s*(?:,|\]\s*=)\s*['"]([\w.]+)['"]""")
# `os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module)`, or an assignment from a name.
_SET_BY_NAME = re.compile(r"""DJANGO_SETTINGS_MODULE['"]\s*(?:,|\]\s*=)\s*[A-Za-z_]""")
_MODULE_LITERAL = re.compile(r"""['"]((?:\w+\.)+\w*settings\w*)['"]""")
# Where pytest-django is told which settings to use: an ini key, an option, or set in conftest.py.
_PYTEST_DJANGO = re.compile(r"DJANGO_SETTINGS_MODULE|--ds[= ]")
_PYTEST_CONFIGS = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py")


def django_project(repo: Path) -> tuple[str, str] | None:
    """(the folder of the project's `manage.py`, "" at the top; the settings module it sets): the repository's own,
    else the one a single folder of the top holds (`src/manage.py`, `backend/manage.py`); None otherwise."""
    settings = django_settings(repo)
    if settings is not None:
        return "", settings
    found = [(p.name, s) for p in project_folders(repo) if (s := django_settings(p)) is not None]
    return found[0] if len(found) == 1 else None  # two projects: which one runs the tests is not for pm-agent


def django_settings(repo: Path) -> str | None:
    """The settings module the repository's `manage.py` sets (`mysite.settings`); None without a Django manage.py."""
    path = repo / "manage.py"
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = _SETTINGS.search(text)
    if found:
        return found.group(1)
    # Set from a variable (`'api.deployment_settings' if ... else 'api.settings'`): the module the variable may
    # hold, as Django's own management command is what runs it.
    if _SET_BY_NAME.search(text) and "execute_from_command_line" in text:
        modules = _MODULE_LITERAL.findall(text)
        return modules[-1] if modules else "set when manage.py runs"
    return None


def pytest_runs_django(repo: Path) -> str | None:
    """The file that gives pytest-django the settings module, when one does; None otherwise."""
    for name in _PYTEST_CONFIGS:
        path = repo / name
        try:
            if path.is_file() and _PYTEST_DJANGO.search(path.read_text(encoding="utf-8", errors="replace")):
                return name
        except OSError:
            continue
    return None


__all__ = ["django_project", "django_settings", "pytest_runs_django"]
