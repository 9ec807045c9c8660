"""The command that runs only the task's test files: each runner told in its own words, and the whole suite for a
runner that cannot be pointed at files (a path added to it would be read as a target, a task or a package).

The pytest rows were written against mutmut's survivors (make mutation). The gradle and go forms were run here
with real gradle 4.4.1 (single and multi-project: `test --tests X` on every project fails "No tests found for
given includes", `:app:test --tests X` passes) and go 1.19 (`go test ./... a_test.go`: "named files must be .go
files"); go's is run again below.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pm_agent.gates.narrow import command_for_test_files


@pytest.mark.parametrize(
    ("command", "files", "expected"),
    [
        ("pytest -x {files} -q", ["a b.py", "c.py"], "pytest -x 'a b.py' c.py -q"),
        ("pytest tests/unit -q", ["a.py", "b.py"], "pytest -q a.py b.py"),
        ("py.test tests/ -q", ["a.py"], "py.test -q a.py"),
        (".venv/bin/pytest tests/test_x.py::test_y", ["a.py"], ".venv/bin/pytest a.py"),
        ("pytest -q", ["a.py"], "pytest -q a.py"),
        ("pytest --rootdir=/tmp/x tests/unit", ["a.py"], "pytest --rootdir=/tmp/x a.py"),
        ("pytest tests", ["a.py"], "pytest tests a.py"),  # without the worktree "tests" is not known to be a path
        ("npm test", ["a.test.js", "b.test.js"], "npm test a.test.js b.test.js"),
        ("pnpm exec vitest run", ["src/a.test.ts"], "pnpm exec vitest run src/a.test.ts"),
        ("python -m unittest -v", ["tests/test_a.py"], "python -m unittest -v tests/test_a.py"),
        # discover reads words after it as its start folder and pattern ("Start directory is not importable"):
        # the paths go to unittest itself (mkdocs' hatch script `python -m unittest discover -s mkdocs -p "*tests.py"`).
        (
            "python -m unittest discover -s mkdocs -p '*tests.py'",
            ["mkdocs/tests/new_tests.py"],
            "python -m unittest mkdocs/tests/new_tests.py",
        ),
        (
            "python -m unittest discover -v -s t -t . -p '*_tests.py'",
            ["t/a_tests.py"],
            "python -m unittest -v t/a_tests.py",
        ),
        ('pytest "unbalanced', ["a.py"], 'pytest "unbalanced a.py'),
        # gradle: each file's project's own test task with a class filter.
        (
            "./gradlew --console=plain test",
            ["src/test/java/demo/CartTest.java", "src/test/kotlin/demo/PriceTest.kt"],
            "./gradlew --console=plain :test --tests demo.CartTest --tests demo.PriceTest",
        ),
        (
            "gradle test --console=plain",
            ["app/src/test/java/shop/CartTest.java", "libs/core/src/test/java/core/MoneyTest.java"],
            "gradle :app:test --tests shop.CartTest :libs:core:test --tests core.MoneyTest --console=plain",
        ),
        ("gradle check", ["src/test/java/demo/CartTest.java"], "gradle check"),  # no test task to filter
        ("gradle test", ["src/test/resources/cart.json"], "gradle test"),  # not a class: the whole suite
        # Another source set's class (instrumented, integration tests): the test task would find no such test.
        ("./gradlew test", ["app/src/androidTest/java/shop/ScreenTest.kt"], "./gradlew test"),
        ("gradle test", ["src/integrationTest/java/shop/FlowTest.java"], "gradle test"),
        ("mvn -B test", ["src/it/java/shop/FlowIT.java"], "mvn -B test"),
        # maven: surefire's -Dtest, and a module without the classes is not a failure.
        (
            "mvn -B -q test",
            ["src/test/java/demo/CartTest.java", "api/src/test/java/api/CartTest.java"],
            "mvn -B -q test -Dtest=CartTest -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false",
        ),
        ("mvn -B -q verify", ["src/test/java/demo/CartTest.java"], "mvn -B -q verify"),
        # Django's runner: dotted module labels (it refuses a file path), its own labels dropped, options kept.
        (
            "/repo/.venv/bin/python manage.py test --noinput",
            ["polls/tests.py", "blog/tests/test_views.py"],
            "/repo/.venv/bin/python manage.py test --noinput polls.tests blog.tests.test_views",
        ),
        (
            "python manage.py test -v 2 --parallel 4 --settings site.test polls --shuffle",
            ["polls/tests.py"],
            "python manage.py test -v 2 --parallel 4 --settings site.test --shuffle polls.tests",
        ),
        ("python manage.py test --parallel polls", ["polls/tests.py"], "python manage.py test --parallel polls.tests"),
        ("python manage.py test", ["my-app/tests.py"], "python manage.py test"),  # no module name: the whole suite
        ("python manage.py test", ["polls/fixtures/x.json"], "python manage.py test"),
        # go: the files' packages in place of the command's patterns; flags and their values kept.
        ("go test ./...", ["pkg/cart/cart_test.go"], "go test ./pkg/cart"),
        (
            "go test -count=1 -run TestCart ./... example.com/shop/...",
            ["cart_test.go", "pkg/cart/cart_test.go", "pkg/cart/more_test.go"],
            "go test -count=1 -run TestCart . ./pkg/cart",
        ),
        ("go test ./...", ["testdata/cart.json"], "go test ./..."),
        # cargo: integration test targets; a unit test inside src/ is reached only by the whole suite.
        (
            "cargo test -- --nocapture",
            ["tests/api.rs", "tests/cli.rs"],
            "cargo test --test api --test cli -- --nocapture",
        ),
        ("cargo test", ["src/lib.rs"], "cargo test"),
        ("cargo test", ["tests/api.rs", "tests/common/mod.rs"], "cargo test"),  # a module of the tests, no target
        # Only the last part of a command list is narrowed; the rest stays as written (its && not quoted).
        (
            "composer install --no-interaction --quiet && vendor/bin/phpunit",
            ["tests/CalcTest.php"],
            "composer install --no-interaction --quiet && vendor/bin/phpunit tests/CalcTest.php",
        ),
        # A `cd` first: the runner takes paths from that folder, the files are the worktree's.
        ("cd app && pytest -q", ["app/tests/test_a.py"], "cd app && pytest -q tests/test_a.py"),
        ("cd svc; cd api && go test ./...", ["svc/api/pkg/a_test.go"], "cd svc; cd api && go test ./pkg"),
        ("cd web && npm ci && npm test", ["web/src/a.test.js"], "cd web && npm ci && npm test src/a.test.js"),
        ("cd app/.. && pytest -q", ["tests/test_a.py"], "cd app/.. && pytest -q tests/test_a.py"),
        ("cd app && pytest -q", ["tests/test_a.py"], "cd app && pytest -q"),  # outside app/: the whole suite
        ("cd $APP && pytest -q", ["app/test_a.py"], "cd $APP && pytest -q"),  # a cd pm-agent cannot follow
        ("cd /srv/app && pytest -q", ["test_a.py"], "cd /srv/app && pytest -q"),
        ("cd .. && pytest -q", ["test_a.py"], "cd .. && pytest -q"),
        ("go vet ./... ; go test ./...", ["pkg/a_test.go"], "go vet ./... ; go test ./pkg"),
        ('pytest -k "a && b"', ["x.py"], "pytest -k 'a && b' x.py"),  # an operator inside quotes is no split
        ("bundle exec rspec", ["spec/cart_spec.rb"], "bundle exec rspec spec/cart_spec.rb"),
        # A pipe or a redirection: where the files would go is unclear, so the whole suite.
        ("pytest -q | tee log.txt", ["a.py"], "pytest -q | tee log.txt"),
        ("npm test 2>&1", ["a.test.js"], "npm test 2>&1"),
        # Runners pm-agent cannot point at files: the whole suite (a path would be a make target, a tox env ...).
        ("make test", ["tests/test_a.py"], "make test"),
        ("tox -e py311", ["tests/test_a.py"], "tox -e py311"),
        ("./scripts/test.sh --fast", ["tests/test_a.py"], "./scripts/test.sh --fast"),
    ],
)
def test_command_for_test_files(command: str, files: list[str], expected: str) -> None:
    assert command_for_test_files(command, files) == expected


def test_a_directory_of_the_worktree_is_a_path_argument(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    assert command_for_test_files("pytest tests -q", ["a.py"], tmp_path) == "pytest -q a.py"
    assert command_for_test_files("pytest unit -q", ["a.py"], tmp_path) == "pytest unit -q a.py"  # no such dir


def test_the_narrowed_go_command_runs_only_the_files_package(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/shop\n\ngo 1.19\n", encoding="utf-8")
    for package, body in (("cart", 't.Log("ran cart")'), ("other", 't.Fatal("other ran")')):
        (tmp_path / package).mkdir()
        test = f'package {package}\n\nimport "testing"\n\nfunc TestIt(t *testing.T) {{ {body} }}\n'
        (tmp_path / package / f"{package}_test.go").write_text(test, encoding="utf-8")
    whole = "go test -count=1 ./..."
    env = {
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(tmp_path),
        "GOFLAGS": "-mod=mod",
        "GOCACHE": str(tmp_path / ".c"),
    }
    assert shutil.which("go", path=env["PATH"]), "this test runs the real go"
    run = subprocess.run(whole, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 1, "the whole suite fails on the other package"
    assert "other ran" in run.stdout
    narrowed = command_for_test_files(whole, ["cart/cart_test.go"], tmp_path)
    assert narrowed == "go test -count=1 ./cart"
    run = subprocess.run(narrowed, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    appended = subprocess.run(
        f"{whole} cart/cart_test.go", shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, check=False
    )
    assert "named files must be .go files" in appended.stderr, "what appending the path did"


def test_a_workspace_members_integration_tests_run_as_that_package(tmp_path: Path) -> None:
    """The narrowed form was run with cargo 1.95 on such a workspace: only shop-core's api target ran."""
    (tmp_path / "crates" / "core").mkdir(parents=True)
    (tmp_path / "crates" / "core" / "Cargo.toml").write_text('[package]\nname = "shop-core"\n', encoding="utf-8")
    (tmp_path / "crates" / "cli").mkdir(parents=True)
    (tmp_path / "crates" / "cli" / "Cargo.toml").write_text('[package]\nname = "shop"\n', encoding="utf-8")
    member = ["crates/core/tests/api.rs", "crates/core/tests/money.rs"]
    assert command_for_test_files("cargo test --workspace -q", member, tmp_path) == (
        "cargo test -q -p shop-core --test api --test money"
    )
    two_crates = ["crates/core/tests/api.rs", "crates/cli/tests/run.rs"]
    assert command_for_test_files("cargo test --workspace", two_crates, tmp_path) == "cargo test --workspace"
    assert command_for_test_files("cargo test", ["crates/web/tests/x.rs"], tmp_path) == "cargo test"  # no manifest
    assert command_for_test_files("cargo test", member, None) == "cargo test"  # no worktree to read it from


def test_a_command_that_changes_folder_first_runs_the_task_s_file_from_there(tmp_path: Path) -> None:
    """A repository with its Python project in backend/ (`cd backend && pytest -q`): the task's file, given from the
    worktree's root, runs; the path as given would not be found from backend/."""
    tests = tmp_path / "backend" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_a.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    (tests / "test_b.py").write_text("def test_b():\n    raise AssertionError('b ran')\n", encoding="utf-8")
    whole = f"cd backend && {sys.executable} -m pytest -q -p no:cacheprovider"
    env = {"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    narrowed = command_for_test_files(whole, ["backend/tests/test_a.py"], tmp_path)
    assert narrowed == f"{whole} tests/test_a.py"
    run = subprocess.run(narrowed, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    as_given = f"{whole} backend/tests/test_a.py"
    run = subprocess.run(as_given, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 4, "what narrowing with the worktree's path did: file or directory not found"
