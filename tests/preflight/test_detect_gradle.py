"""Detection table rows for Gradle builds: the wrapper or gradle on PATH, the build's own lint plugin, Android.

The build files are the shapes real projects use (Groovy and Kotlin DSL, a multi-project root with only a
settings file, a version catalog's `alias(libs.plugins.x)`); what gradle prints is in test_environment_verdicts.
"""

from __future__ import annotations

from pathlib import Path

from pm_agent.preflight.detect import Slot

from .conftest import Machine, rejected_for, write

FLAGS = "--console=plain"
GROOVY = "plugins {{\n    id 'java'\n{plugins}}}\n\nrepositories {{ mavenCentral() }}\n"
KOTLIN = "plugins {{\n    java\n{plugins}}}\n\nrepositories {{ mavenCentral() }}\n"
CATALOG = '[plugins]\nktlint = { id = "org.jlleitschuh.gradle.ktlint", version = "12.1.0" }\n'


def test_gradle_on_path_tests_compiles_and_runs_the_builds_checkstyle(repo: Path, machine: Machine) -> None:
    write(repo, {"build.gradle": GROOVY.format(plugins="    id 'checkstyle'\n")})
    detection = machine.script("gradle", "exit 0").detect(repo)
    env = detection.environment
    assert (env.test_command, env.build_command, env.lint_command) == (
        f"gradle {FLAGS} test",
        f"gradle {FLAGS} testClasses",
        f"gradle {FLAGS} checkstyleMain checkstyleTest",
    )
    assert detection.chosen[Slot.TEST].reason == "build.gradle: the test task"
    assert detection.chosen[Slot.LINT].reason == "build.gradle: the checkstyle plugin"
    assert env.typecheck_command is None
    assert detection.problems == {}


def test_the_wrapper_comes_first_and_must_be_executable(repo: Path, machine: Machine) -> None:
    plugins = '    id("com.diffplug.spotless") version "6.25.0"\n'
    write(repo, {"build.gradle.kts": KOTLIN.format(plugins=plugins), "gradlew": "#!/bin/sh\n"})
    (repo / "gradlew").chmod(0o755)
    detection = machine.script("gradle", "exit 0").detect(repo)
    env = detection.environment
    assert (env.test_command, env.format_command) == (f"./gradlew {FLAGS} test", f"./gradlew {FLAGS} spotlessCheck")
    assert env.lint_command is None  # spotless checks formatting: the format check, not the lint
    wrapper = "the project's gradle wrapper (gradlew)"
    assert detection.chosen[Slot.FORMAT].reason == f"{wrapper}: the com.diffplug.spotless plugin"
    assert detection.problems == {}
    (repo / "gradlew").chmod(0o644)
    problems = machine.detect(repo).problems
    assert set(problems) == {Slot.TEST, Slot.BUILD, Slot.FORMAT}
    assert set(problems.values()) == {"gradlew is not executable: chmod +x gradlew"}


def test_without_gradle_every_command_says_so(repo: Path, machine: Machine) -> None:
    write(repo, {"build.gradle": GROOVY.format(plugins="")})
    detection = machine.detect(repo)
    assert detection.environment.test_command == f"gradle {FLAGS} test"
    assert detection.environment.lint_command is None  # the build applies no lint plugin
    assert detection.problems == {
        Slot.TEST: "not installed: gradle is not on PATH",
        Slot.BUILD: "not installed: gradle is not on PATH",
    }


def test_a_multi_project_build_its_subprojects_plugins_and_the_version_catalog(repo: Path, machine: Machine) -> None:
    write(
        repo,
        {
            "settings.gradle.kts": 'rootProject.name = "shop"\ninclude("app", "lib")\n',
            "app/build.gradle.kts": KOTLIN.format(plugins="    alias(libs.plugins.ktlint)\n"),
            "lib/build.gradle.kts": KOTLIN.format(plugins="    `java-library`\n    checkstyle\n"),
            "gradle/libs.versions.toml": CATALOG,
        },
    )
    detection = machine.script("gradle", "exit 0").detect(repo)
    assert detection.environment.build_command == f"gradle {FLAGS} testClasses"
    assert detection.chosen[Slot.TEST].reason == "settings.gradle.kts: the test task"
    # Both plugins are found; checkstyle comes first in pm-agent's order and the other is named.
    assert detection.environment.lint_command == f"gradle {FLAGS} checkstyleMain checkstyleTest"
    assert rejected_for(detection, Slot.LINT) == {
        f"gradle {FLAGS} ktlintCheck": f"gradle {FLAGS} checkstyleMain checkstyleTest is preferred"
        " (settings.gradle.kts: the checkstyle plugin)"
    }


def test_convention_plugins_of_build_logic_buildsrc_and_script_plugins(repo: Path, machine: Machine) -> None:
    plugin = (
        "class KotlinConventionPlugin : Plugin<Project> {\n"
        "    override fun apply(target: Project) {\n"
        '        with(target.pluginManager) { apply("io.gitlab.arturbosch.detekt") }\n'
        "    }\n}\n"
    )
    write(
        repo,
        {
            "settings.gradle.kts": 'pluginManagement { includeBuild("build-logic") }\ninclude(":app")\n',
            "app/build.gradle.kts": 'plugins { id("shop.kotlin") }\n',
            "build-logic/convention/src/main/kotlin/KotlinConventionPlugin.kt": plugin,
            # The included build's own output is not a script of the build.
            "build-logic/convention/build/generated/Gen.kt": 'apply("com.diffplug.spotless")\n',
        },
    )
    detection = machine.script("gradle", "exit 0").detect(repo)
    assert detection.environment.lint_command == f"gradle {FLAGS} detekt"
    assert rejected_for(detection, Slot.LINT) == {}
    write(
        repo,
        {
            "gradle/quality.gradle": "apply plugin: 'checkstyle'\n",
            "build.gradle": "apply from: 'gradle/quality.gradle'\n",
        },
    )
    assert machine.detect(repo).environment.lint_command == f"gradle {FLAGS} checkstyleMain checkstyleTest"
    write(repo, {"buildSrc/src/main/groovy/shop.java-conventions.gradle": "plugins { id 'com.diffplug.spotless' }\n"})
    assert machine.detect(repo).environment.format_command == f"gradle {FLAGS} spotlessCheck"


def test_a_plugin_named_only_in_a_comment_or_its_settings_block_is_not_applied(repo: Path, machine: Machine) -> None:
    build = GROOVY.format(plugins="    // id 'checkstyle' once the old findings are fixed\n")
    write(repo, {"build.gradle": build + "\n// checkstyle: see CONTRIBUTING\npmd {\n    toolVersion = '6.55.0'\n}\n"})
    detection = machine.script("gradle", "exit 0").detect(repo)
    assert detection.environment.lint_command is None


def test_globs_and_urls_are_not_comments(repo: Path, machine: Machine) -> None:
    build = (
        "sourceSets { main { java { include 'src/**/*.java' } } }\n"
        "repositories { maven { url 'https://repo.example.invalid/m2' } }  /* a mirror */ apply plugin: 'pmd'\n"
        "test { exclude '**/slow/**' }\n"
    )
    write(repo, {"build.gradle": build, "gradle/libs.versions.toml": '# spotless = { id = "com.diffplug.spotless" }\n'})
    detection = machine.script("gradle", "exit 0").detect(repo)
    assert detection.environment.lint_command == f"gradle {FLAGS} pmdMain pmdTest"
    assert rejected_for(detection, Slot.LINT) == {}


def test_an_android_build_gets_its_tests_and_no_guessed_compile_task(repo: Path, machine: Machine) -> None:
    android = "plugins { id 'com.android.application' }\n"
    write(repo, {"settings.gradle": "include ':app'\n", "app/build.gradle": android})
    detection = machine.script("gradle", "exit 0").detect(repo)
    assert detection.environment.test_command == f"gradle {FLAGS} test"
    assert detection.environment.build_command is None
    why = rejected_for(detection, Slot.BUILD)[f"gradle {FLAGS} testClasses"]
    assert why.startswith("an Android build has no testClasses task")


def test_maven_comes_before_gradle_in_a_repository_with_both(repo: Path, machine: Machine) -> None:
    write(repo, {"pom.xml": "<project><modelVersion>4.0.0</modelVersion></project>\n", "build.gradle": ""})
    detection = machine.script("mvn", "exit 0").script("gradle", "exit 0").detect(repo)
    assert detection.environment.test_command == "mvn -B -q test"
    assert rejected_for(detection, Slot.TEST)[f"gradle {FLAGS} test"].startswith("mvn -B -q test (maven) comes first")
