"""Detection table rows for Makefile-only, Go, Rust and Maven repositories, and repositories with several."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_agent.preflight.detect import Slot, detect_environment

from .conftest import Machine, package_json, rejected_for, write

MAKEFILE = ".PHONY: test build\n\ntest:\n\t@echo ran > ran.txt\n\nbuild:\n\t@echo built\n"


# ---------------------------------------------------------------- Makefile only


def test_make_test_when_make_n_test_succeeds(repo: Path, machine: Machine) -> None:
    write(repo, {"Makefile": MAKEFILE})
    detection = machine.real("make").detect(repo)
    assert (detection.environment.test_command, detection.environment.build_command) == ("make test", "make build")
    assert detection.chosen[Slot.TEST].reason == "Makefile: make -n test succeeds"
    assert not (repo / "ran.txt").exists(), "make -n must not run the recipe"
    assert machine.run("make test", repo).ok
    assert (repo / "ran.txt").exists()


def test_no_make_test_without_a_test_target(repo: Path, machine: Machine) -> None:
    write(repo, {"Makefile": "build:\n\t@echo built\n"})
    detection = machine.real("make").detect(repo)
    assert detection.environment.test_command is None
    assert rejected_for(detection, Slot.TEST) == {"make test": "Makefile has no test target (make -n test failed)"}
    assert (
        "none of the targets typecheck, type-check, mypy"
        in rejected_for(detection, Slot.TYPECHECK)["make typecheck/type-check/mypy"]
    )


def test_a_test_directory_is_not_a_test_target(repo: Path, machine: Machine) -> None:
    write(repo, {"Makefile": "build:\n\t@echo built\n", "test/check.sh": "exit 0\n"})
    machine.real("make")
    assert machine.run("make test", repo).ok, "the trap: make test 'succeeds' with nothing to do"
    detection = machine.detect(repo)
    assert detection.environment.test_command is None
    assert rejected_for(detection, Slot.TEST)["make test"].startswith("make -n test runs nothing")


def test_a_target_whose_prerequisite_cannot_be_made_is_refused_with_makes_words(repo: Path, machine: Machine) -> None:
    write(repo, {"Makefile": "test: .stamp\n\t./run-tests\n\n.stamp: requirements.lock\n\ttouch .stamp\n"})
    detection = machine.real("make").detect(repo)
    assert detection.environment.test_command is None
    why = rejected_for(detection, Slot.TEST)["make test"]
    assert why.startswith("make -n test failed:")
    assert "requirements.lock" in why


def test_gnumakefile_and_missing_make(repo: Path, machine: Machine) -> None:
    write(repo, {"GNUmakefile": MAKEFILE})
    assert machine.real("make").detect(repo).chosen[Slot.TEST].reason == "GNUmakefile: make -n test succeeds"
    (machine.bindir / "make").unlink()
    detection = machine.detect(repo)
    assert detection.environment.test_command is None
    assert rejected_for(detection, None) == {"make": "GNUmakefile present but make is not on PATH"}


# ---------------------------------------------------------------- Go


def test_go_module(repo: Path, machine: Machine) -> None:
    write(repo, {"go.mod": "module example.com/demo\n\ngo 1.22\n"})
    detection = machine.real("go", "gofmt").detect(repo)
    env = detection.environment
    assert (env.test_command, env.lint_command, env.build_command) == (
        "go test ./...",
        "go vet ./...",
        "go build ./...",
    )
    assert env.typecheck_command is None
    assert detection.problems == {}


def test_go_without_go_on_path_is_marked(repo: Path, machine: Machine) -> None:
    write(repo, {"go.mod": "module example.com/demo\n"})
    problems = machine.detect(repo).problems
    assert set(problems) == {Slot.TEST, Slot.LINT, Slot.BUILD, Slot.FORMAT}
    assert problems[Slot.TEST] == "not installed: go is not on PATH"
    assert problems[Slot.FORMAT] == "not installed: gofmt is not on PATH (it comes with go)"


def test_golangci_config_without_golangci_lint_keeps_go_vet(repo: Path, machine: Machine) -> None:
    write(repo, {"go.mod": "module example.com/demo\n", ".golangci.yml": "linters:\n  enable: [errcheck]\n"})
    detection = machine.real("go").detect(repo)
    assert detection.environment.lint_command == "go vet ./..."
    assert rejected_for(detection, Slot.LINT) == {"golangci-lint run": "not installed: golangci-lint is not on PATH"}
    machine.script("golangci-lint", "exit 0")
    assert machine.detect(repo).environment.lint_command == "golangci-lint run"


# ---------------------------------------------------------------- Rust


def test_rust_crate_with_clippy_that_does_not_fail_on_old_warnings(repo: Path, machine: Machine) -> None:
    write(repo, {"Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'})
    detection = machine.real("cargo", "cargo-clippy", "cargo-fmt", "rustfmt").detect(repo)
    env = detection.environment
    assert (env.test_command, env.lint_command, env.build_command) == ("cargo test", "cargo clippy", "cargo build")
    assert "without -D warnings" in detection.chosen[Slot.LINT].reason
    assert "every warning already in the code" in rejected_for(detection, Slot.LINT)["cargo clippy -- -D warnings"]
    assert detection.problems == {}


def test_rust_workspace_and_missing_clippy(repo: Path, machine: Machine) -> None:
    write(repo, {"Cargo.toml": '[workspace]\nmembers = ["a", "b"]\n'})
    detection = machine.real("cargo").detect(repo)
    env = detection.environment
    assert (env.test_command, env.lint_command) == ("cargo test --workspace", "cargo clippy --workspace")
    assert detection.problems == {
        Slot.LINT: "not installed: rustup component add clippy",
        Slot.FORMAT: "not installed: rustup component add rustfmt",
    }


# ---------------------------------------------------------------- Maven

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version>
  <build><plugins>{plugins}</plugins></build>
</project>
"""
CHECKSTYLE = (
    "<plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-checkstyle-plugin</artifactId></plugin>"
)
MVN = "-B -q"


def test_maven_project_test_compile_and_its_own_lint_plugin(repo: Path, machine: Machine) -> None:
    write(repo, {"pom.xml": POM.format(plugins=CHECKSTYLE)})
    detection = machine.script("mvn", "exit 0").detect(repo)
    env = detection.environment
    assert (env.test_command, env.build_command, env.lint_command) == (
        f"mvn {MVN} test",
        f"mvn {MVN} test-compile",
        f"mvn {MVN} checkstyle:check",
    )
    assert detection.chosen[Slot.LINT].reason == "pom.xml: maven-checkstyle-plugin in pom.xml"
    assert env.typecheck_command is None
    assert detection.problems == {}


def test_maven_wrapper_comes_first_and_no_lint_the_pom_does_not_configure(repo: Path, machine: Machine) -> None:
    write(repo, {"pom.xml": POM.format(plugins=""), "mvnw": "#!/bin/sh\n"})
    (repo / "mvnw").chmod(0o755)
    detection = machine.detect(repo)  # no mvn on PATH: the wrapper fetches its own
    env = detection.environment
    assert (env.test_command, env.build_command) == (f"./mvnw {MVN} test", f"./mvnw {MVN} test-compile")
    assert env.lint_command is None
    assert detection.chosen[Slot.TEST].reason == "the project's maven wrapper (mvnw): the test phase (surefire)"
    assert detection.problems == {}
    (repo / "mvnw").chmod(0o644)
    assert machine.detect(repo).problems == {
        Slot.TEST: "mvnw is not executable: chmod +x mvnw",
        Slot.BUILD: "mvnw is not executable: chmod +x mvnw",
    }


def test_maven_without_mvn_says_so(repo: Path, machine: Machine) -> None:
    write(repo, {"pom.xml": POM.format(plugins="<plugin><artifactId>spotless-maven-plugin</artifactId></plugin>")})
    detection = machine.detect(repo)
    # Spotless checks formatting: the format check, not the lint.
    assert (detection.environment.lint_command, detection.environment.format_command) == (
        None,
        f"mvn {MVN} spotless:check",
    )
    assert set(detection.problems.values()) == {"not installed: mvn is not on PATH"}
    assert set(detection.problems) == {Slot.TEST, Slot.BUILD, Slot.FORMAT}


# ---------------------------------------------------------------- several ecosystems, none


def test_python_and_node_one_test_command_and_the_other_named(
    repo: Path, machine: Machine, tooled_python: Path
) -> None:
    write(
        repo,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "package.json": package_json({"test": "vitest run", "lint": "eslint web"}),
            "package-lock.json": "",
            "node_modules/.keep": "",
        },
    )
    detection = machine.add("python", tooled_python).real("npm").detect(repo)
    assert detection.environment.test_command == "python -m pytest -q"
    assert detection.environment.lint_command == "npm run lint"
    why = rejected_for(detection, Slot.TEST)["npm test"]
    assert why.startswith("python -m pytest -q (python) comes first")
    assert "&&" in why


def test_pytest_comes_before_make_test(repo: Path, machine: Machine, tooled_python: Path) -> None:
    write(repo, {"pytest.ini": "[pytest]\n", "Makefile": MAKEFILE})
    detection = machine.add("python", tooled_python).real("make").detect(repo)
    assert detection.environment.test_command == "python -m pytest -q"
    assert "make cannot be narrowed" in rejected_for(detection, Slot.TEST)["make test"]


@pytest.mark.parametrize("files", [{}, {"README.md": "# notes\n"}])
def test_nothing_to_run_detects_nothing(repo: Path, files: dict[str, str]) -> None:
    write(repo, files)
    detection = detect_environment(repo)
    assert detection.chosen == {}
    assert detection.rejected == ()
