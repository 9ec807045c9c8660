"""Go (go.mod), Rust (Cargo.toml), Java by Maven (pom.xml) and by Gradle (build.gradle[.kts], settings.gradle[.kts]):
their toolchains' own test, lint, format check and build commands."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from pm_agent.preflight._candidates import Candidate, Finding, Rejected, Slot
from pm_agent.preflight._probe import Probe

GOLANGCI_CONFIGS = (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")


def detect_go(probe: Probe) -> Finding | None:
    """`go test ./...`, `go vet ./...` (or golangci-lint when configured), `go build ./...`; None without go.mod."""
    if not (probe.repo / "go.mod").is_file():
        return None
    missing = None if probe.which("go") else "not installed: go is not on PATH"
    gofmt = None if probe.which("gofmt") else "not installed: gofmt is not on PATH (it comes with go)"
    found = Finding()
    config = next((name for name in GOLANGCI_CONFIGS if (probe.repo / name).is_file()), None)
    if config is not None:
        why = probe.runs("golangci-lint")
        problem = f"not installed: {why}" if why else None
        found.candidates.append(Candidate(Slot.LINT, "golangci-lint run", f"golangci-lint: {config}", problem))
    found.candidates += [
        Candidate(Slot.TEST, "go test ./...", "go.mod: every package of the module", missing),
        Candidate(Slot.LINT, "go vet ./...", "go.mod: go vet ships with the go toolchain", missing),
        Candidate(Slot.BUILD, "go build ./...", "go.mod: compiles every package (the typecheck of go)", missing),
        Candidate(Slot.FORMAT, GOFMT, _GOFMT_WHY, gofmt),
    ]
    return found


# gofmt has no check mode: `-l` lists the files it would change and exits 0 all the same, so the list itself (and
# its `file:line:col: msg` syntax errors, the findings parser reads both) is the verdict. Nothing is rewritten.
GOFMT = 'out=$(gofmt -l . 2>&1); printf \'%s\' "$out"; test -z "$out"'
_GOFMT_WHY = "go.mod: gofmt, go's own formatter, which go's CI checks (lists the files it would change; rewrites none)"


def detect_rust(probe: Probe) -> Finding | None:
    """`cargo test`, `cargo clippy`, `cargo build` (with --workspace for workspaces); None without Cargo.toml."""
    manifest = probe.repo / "Cargo.toml"
    if not manifest.is_file():
        return None
    found = Finding()
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        found.rejected.append(Rejected("Cargo.toml", f"not valid TOML ({exc}); read as a single package"))
        data = {}
    flag = " --workspace" if "workspace" in data else ""
    scope = "every workspace member ([workspace] in Cargo.toml)" if flag else "Cargo.toml"
    missing = None if probe.which("cargo") else "not installed: cargo is not on PATH"
    clippy = missing or (None if probe.which("cargo-clippy") else "not installed: rustup component add clippy")
    # rustfmt is a rustup component of its own, like clippy: a toolchain may lack it.
    has_fmt = probe.which("cargo-fmt") and probe.which("rustfmt")
    rustfmt = missing or (None if has_fmt else "not installed: rustup component add rustfmt")
    found.candidates += [
        Candidate(Slot.TEST, f"cargo test{flag}", f"{scope}: cargo's test runner", missing),
        Candidate(
            Slot.LINT,
            f"cargo clippy{flag}",
            f"{scope}; without -D warnings: clippy exits 0 on warnings, so warnings already in the code"
            " do not fail every task",
            clippy,
        ),
        Candidate(Slot.BUILD, f"cargo build{flag}", f"{scope}: compiles the crates (the typecheck of rust)", missing),
        Candidate(Slot.FORMAT, f"cargo fmt{' --all' if flag else ''} --check", _rustfmt_why(probe, scope), rustfmt),
    ]
    found.rejected.append(
        Rejected(
            f"cargo clippy{flag} -- -D warnings",
            "turns every warning already in the code into a failure of every task's lint gate",
            Slot.LINT,
        )
    )
    return found


def _rustfmt_why(probe: Probe, scope: str) -> str:
    """Why `cargo fmt --check`: rust's own formatter, with the project's rustfmt.toml when it has one."""
    config = next((name for name in ("rustfmt.toml", ".rustfmt.toml") if (probe.repo / name).is_file()), None)
    settings = f", settings in {config}" if config else ""
    return f"{scope}: rustfmt, rust's own formatter{settings} (--check lists the changes it would make; rewrites none)"


def _wrapped(probe: Probe, tool: str, name: str, marker: str) -> tuple[str, str, str | None]:
    """(how to call the build tool, why, what stands in its way): the project's wrapper (`./mvnw`, `./gradlew`) when it
    ships one, else the tool on PATH."""
    wrapper = probe.repo / f"{tool}w"
    if wrapper.is_file():
        problem = None if os.access(wrapper, os.X_OK) else f"{tool}w is not executable: chmod +x {tool}w"
        return f"./{tool}w", f"the project's {name} wrapper ({tool}w)", problem
    return tool, marker, None if probe.which(tool) else f"not installed: {tool} is not on PATH"


# Maven plugins whose check goal is the project's own lint, when its pom.xml configures them.
MAVEN_LINTS = (("maven-checkstyle-plugin", "checkstyle:check"),)
# Spotless checks formatting (google-java-format, ktlint's formatting, prettier): the format check, not a lint.
MAVEN_FORMAT = ("spotless-maven-plugin", "spotless:check")
MAVEN_FLAGS = "-B -q"  # batch mode (no prompts, no progress bars), quiet: errors and test failures only


def detect_maven(probe: Probe) -> Finding | None:
    """`mvn test`, `mvn test-compile`, and the pom's checkstyle or spotless check; `./mvnw` when the project ships the
    wrapper. None without pom.xml."""
    pom = probe.repo / "pom.xml"
    if not pom.is_file():
        return None
    mvn, via, missing = _wrapped(probe, "mvn", "maven", "pom.xml")
    found = Finding()
    text = pom.read_text(encoding="utf-8", errors="replace")
    for slot, (plugin, goal) in [*((Slot.LINT, lint) for lint in MAVEN_LINTS), (Slot.FORMAT, MAVEN_FORMAT)]:
        if f"<artifactId>{plugin}</artifactId>" in text:
            command = f"{mvn} {MAVEN_FLAGS} {goal}"
            found.candidates.append(Candidate(slot, command, f"{via}: {plugin} in pom.xml", missing))
    found.candidates += [
        Candidate(Slot.TEST, f"{mvn} {MAVEN_FLAGS} test", f"{via}: the test phase (surefire)", missing),
        Candidate(
            Slot.BUILD,
            f"{mvn} {MAVEN_FLAGS} test-compile",
            f"{via}: compiles the main and test sources (the typecheck of java)",
            missing,
        ),
    ]
    return found


# The files that make a folder a Gradle build (a multi-project root may have only the settings file).
GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
GRADLE_FLAGS = "--console=plain"  # no progress bar or colours; failed tests still named (-q would hide them)
# Lint plugins in pm-agent's order of preference: (plugin id, its check tasks). A core plugin (checkstyle, pmd) is
# applied by its bare id, a community one by its dotted id, in a build file or the version catalog.
GRADLE_LINTS = (
    ("com.diffplug.spotless", "spotlessCheck"),  # the format check (GRADLE_FORMATS), not a lint
    ("checkstyle", "checkstyleMain checkstyleTest"),
    ("org.jlleitschuh.gradle.ktlint", "ktlintCheck"),
    ("io.gitlab.arturbosch.detekt", "detekt"),
    ("pmd", "pmdMain pmdTest"),
)
GRADLE_FORMATS = frozenset({"com.diffplug.spotless"})
# `id 'x'`, `id("x")`, `apply plugin: 'x'`, `apply(plugin = "x")`, or a Kotlin DSL plugins block's bare `x` line.
_GRADLE_PLUGIN = (
    r"(?:\bid\s*\(?\s*|\bapply\s*\(?\s*plugin\s*[:=]\s*)[\"']{id}[\"']"
    r"|^[ \t]*`?{id}`?[ \t]*$"
)
# Comments of Groovy and Kotlin build scripts, opened at a line's start or after a space: not a URL's `https://` or a
# glob's `src/**/*.java`.
_COMMENTS = re.compile(r"(?:^|(?<=\s))(?:/\*.*?\*/|//[^\n]*)", re.DOTALL | re.MULTILINE)
_ANDROID = re.compile(r"[\"']com\.android\.(?:application|library|test|dynamic-feature)[\"']")


# Convention plugins: precompiled script plugins (x.gradle.kts) and plugin classes (`apply("x")` in a .kt file).
_SCRIPT_SUFFIXES = frozenset({".gradle", ".kts", ".kt", ".groovy", ".java"})
_OUTPUTS = frozenset({"build", ".gradle"})


def _gradle_scripts(repo: Path) -> str:
    """The build scripts plugins are applied in: the root's, each direct subproject's, the script plugins under
    gradle/ (`apply from:`), the convention plugins of buildSrc and build-logic (an included build), and the version
    catalog (where `alias(libs.plugins.x)` names its id)."""
    paths = [repo / name for name in GRADLE_FILES]
    paths += [child / name for child in sorted(repo.iterdir()) if child.is_dir() for name in GRADLE_FILES[:2]]
    paths += sorted((repo / "gradle").glob("*.gradle*"))
    for build in ("buildSrc", "build-logic"):
        paths += sorted(
            script
            for script in (repo / build).rglob("*")
            if script.suffix in _SCRIPT_SUFFIXES and not _OUTPUTS.intersection(script.relative_to(repo).parts[:-1])
        )
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file()]
    catalog = repo / "gradle" / "libs.versions.toml"
    if catalog.is_file():
        texts.append(re.sub(r"(?m)^\s*#.*$", "", catalog.read_text(encoding="utf-8", errors="replace")))
    return _COMMENTS.sub("", "\n".join(texts))


def detect_gradle(probe: Probe) -> Finding | None:
    """`gradle test`, `gradle testClasses` and the build's own lint plugin's check; `./gradlew` when the project ships
    the wrapper. None without a Gradle build file."""
    marker = next((name for name in GRADLE_FILES if (probe.repo / name).is_file()), None)
    if marker is None:
        return None
    gradle, via, missing = _wrapped(probe, "gradle", "gradle", marker)
    scripts = _gradle_scripts(probe.repo)
    found = Finding()
    for plugin, tasks in GRADLE_LINTS:
        applied = "." in plugin and (f'"{plugin}"' in scripts or f"'{plugin}'" in scripts)
        if applied or re.search(_GRADLE_PLUGIN.format(id=re.escape(plugin)), scripts, re.MULTILINE):
            slot = Slot.FORMAT if plugin in GRADLE_FORMATS else Slot.LINT
            found.candidates.append(
                Candidate(slot, f"{gradle} {GRADLE_FLAGS} {tasks}", f"{via}: the {plugin} plugin", missing)
            )
    found.candidates.append(Candidate(Slot.TEST, f"{gradle} {GRADLE_FLAGS} test", f"{via}: the test task", missing))
    if _ANDROID.search(scripts):
        found.rejected.append(
            Rejected(
                f"{gradle} {GRADLE_FLAGS} testClasses",
                "an Android build has no testClasses task (its compile tasks are named by variant, e.g."
                " assembleDebugUnitTest): set build_command by hand",
                Slot.BUILD,
            )
        )
    else:
        found.candidates.append(
            Candidate(
                Slot.BUILD,
                f"{gradle} {GRADLE_FLAGS} testClasses",
                f"{via}: compiles the main and test sources (the typecheck of java and kotlin)",
                missing,
            )
        )
    return found


__all__ = ["detect_go", "detect_gradle", "detect_maven", "detect_rust"]
