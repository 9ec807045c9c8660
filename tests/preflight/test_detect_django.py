"""Django projects: `manage.py test`, Django's own runner, for the apps' `tests.py`; pytest when pytest-django is
told the settings.

The layout is what `django-admin startproject mysite .` and `manage.py startapp polls` make (Django 5.2); the
interpreters are real venvs, with a stand-in `django` package where the project's would be importable (detection
only asks whether it is). Tried by hand with Django 5.2 on that layout: `init` chose
`.venv/bin/python manage.py test --noinput`, and the preflight parsed its one failing test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.gates.narrow import command_for_test_files
from pm_agent.preflight._django import django_settings
from pm_agent.preflight.detect import Slot

from .conftest import Machine, make_venv, rejected_for, write

MANAGE_PY = '''\
#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import os
import sys


def main():
    """Run administrative tasks."""
    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')
    from django.core.management import execute_from_command_line
    execute_from_command_line(sys.argv)


if __name__ == '__main__':
    main()
'''
APP_TESTS = "from django.test import TestCase\n\n\nclass T(TestCase):\n    def test_one(self):\n        pass\n"
PROJECT = {
    "manage.py": MANAGE_PY,
    "mysite/__init__.py": "",
    "mysite/settings.py": "INSTALLED_APPS = ['polls']\n",
    "polls/__init__.py": "",
    "polls/tests.py": APP_TESTS,
}


@pytest.fixture(scope="module")
def django_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python 3 that imports `django` (a stand-in package) and pytest."""
    python = make_venv(tmp_path_factory.mktemp("django") / "venv", tooled=True)
    site = next((python.parent.parent / "lib").glob("python3*/site-packages"))
    (site / "django").mkdir()
    (site / "django" / "__init__.py").write_text("VERSION = (5, 2, 0)\n", encoding="utf-8")
    return python


def test_a_django_project_runs_its_apps_tests_with_manage_py(repo: Path, machine: Machine, django_python: Path) -> None:
    write(repo, PROJECT)
    detection = machine.add("python", django_python).detect(repo)
    chosen = detection.chosen[Slot.TEST]
    assert chosen.command == "python manage.py test --noinput"
    assert chosen.reason == (
        "Django: manage.py sets DJANGO_SETTINGS_MODULE to mysite.settings; polls/tests.py; django importable by python"
    )
    assert chosen.problem is None
    why = rejected_for(detection, Slot.TEST)["python -m pytest -q"]
    assert why.startswith("Django's tests need Django set up")


def test_django_not_importable_is_marked(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, PROJECT)
    chosen = machine.add("python", tooled_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python manage.py test --noinput"
    assert chosen.problem == "not installed: django is not importable by python"


@pytest.mark.parametrize(
    "config",
    [
        {"pytest.ini": "[pytest]\nDJANGO_SETTINGS_MODULE = mysite.settings\npython_files = tests.py test_*.py\n"},
        {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--ds=mysite.settings"\n'},
    ],
)
def test_pytest_django_told_the_settings_keeps_pytest(
    repo: Path, machine: Machine, django_python: Path, config: dict[str, str]
) -> None:
    write(repo, {**PROJECT, **config})
    chosen = machine.add("python", django_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "python -m pytest -q"


def test_a_project_in_a_folder_of_the_repository_runs_from_there(
    repo: Path, machine: Machine, django_python: Path
) -> None:
    """`pyproject.toml` at the top, the Django project in `src/`: its runner runs from `src/`, and a task's test file
    narrows to its label there."""
    write(repo, {"pyproject.toml": "[project]\nname = 'shop'\n", **{f"src/{k}": v for k, v in PROJECT.items()}})
    chosen = machine.add("python", django_python).detect(repo).chosen[Slot.TEST]
    assert chosen.command == "cd src && python manage.py test --noinput"
    assert chosen.reason.startswith("Django: src/manage.py sets DJANGO_SETTINGS_MODULE to mysite.settings; src/polls")
    narrowed = command_for_test_files(chosen.command, ["src/polls/tests.py"])
    assert narrowed == "cd src && python manage.py test --noinput polls.tests"
    # pytest-django told the settings in src/ only: pytest run from the top would not read it.
    write(repo, {"src/pytest.ini": "[pytest]\nDJANGO_SETTINGS_MODULE = mysite.settings\n"})
    assert machine.detect(repo).chosen[Slot.TEST].command == chosen.command
    write(repo, {"pytest.ini": "[pytest]\nDJANGO_SETTINGS_MODULE = mysite.settings\npythonpath = src\n"})
    assert machine.detect(repo).chosen[Slot.TEST].command.endswith("python -m pytest -q")


def test_two_django_projects_in_folders_choose_neither(repo: Path, machine: Machine, django_python: Path) -> None:
    projects = {f"{top}/{k}": v for top in ("shop", "blog") for k, v in PROJECT.items()}
    write(repo, {"pyproject.toml": "[project]\nname = 'site'\n", **projects})
    chosen = machine.add("python", django_python).detect(repo).chosen.get(Slot.TEST)
    assert chosen is None or "manage.py" not in chosen.command
    for top in ("docs", ".venv", "node_modules"):  # an example project in the docs, and what installs make
        (repo / "blog").rename(repo / top)
        chosen = machine.detect(repo).chosen.get(Slot.TEST)
        assert chosen is not None
        assert chosen.command == "cd shop && python manage.py test --noinput", top
        (repo / top).rename(repo / "blog")


def test_a_manage_py_that_is_not_django_s_changes_nothing(repo: Path, machine: Machine, tooled_python: Path) -> None:
    """A Flask project's manage.py; and outside Django, a tests.py is not a test file pytest collects."""
    write(repo, {"manage.py": "from flask.cli import main\nmain()\n", "app/tests.py": APP_TESTS, "setup.py": ""})
    detection = machine.add("python", tooled_python).detect(repo)
    assert Slot.TEST not in detection.chosen
    assert "no tests" in rejected_for(detection, Slot.TEST)["python -m pytest -q"]


@pytest.mark.parametrize(
    ("line", "settings"),
    [
        ("os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')", "mysite.settings"),
        ('os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")', "config.settings.local"),
        ('os.environ["DJANGO_SETTINGS_MODULE"] = "shop.settings"', "shop.settings"),
        ("from flask.cli import main", None),
        # Chosen at run time from a variable: the last settings module the file names.
        (
            "m = 'api.deployment_settings' if 'RENDER' in os.environ else 'api.settings'\n"
            "    os.environ.setdefault('DJANGO_SETTINGS_MODULE', m)",
            "api.settings",
        ),
        ("os.environ.setdefault('DJANGO_SETTINGS_MODULE', settings_from_env())", "set when manage.py runs"),
        ("os.environ.setdefault('DJANGO_SETTINGS_MODULE', m)  # without Django's runner", None),
    ],
)
def test_the_settings_module_manage_py_sets(repo: Path, line: str, settings: str | None) -> None:
    runner = "from django.core.management import execute_from_command_line\n"
    if "without Django's runner" in line:
        runner = ""
    write(repo, {"manage.py": f"import os\n{line}\n{runner}"})
    assert django_settings(repo) == settings
