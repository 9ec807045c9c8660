"""Gradle and Maven outputs this machine cannot produce (surefire needs Maven Central, checkstyle and kotlinc are
not installed): each line is written in the shape the tool prints it, one case per shape; gradle's and maven's
own outputs that could be captured here are in fixtures/findings (gradle-*, maven-*)."""

from __future__ import annotations

import pytest

from pm_agent.gates.findings import parse_findings, ratchet
from pm_agent.gates.findings.select import parsers_for_command


def _ids(command: str, output: str, exit_code: int = 1) -> list[str | None]:
    found = parse_findings(command, output, exit_code)
    assert found.parser is not None, found.note
    return [f.test_id or f"{f.path}:{f.line} {f.code} {f.message}" for f in found.findings]


@pytest.mark.parametrize(
    ("command", "parsers"),
    [
        ("./gradlew --console=plain test", ["gradle"]),
        ("gradle --console=plain checkstyleMain checkstyleTest", ["gradle"]),
        ("./mvnw -B -q test", ["maven"]),
        ("mvn -B -q checkstyle:check", ["maven"]),
        ("make test", []),
    ],
)
def test_the_command_names_the_parser(command: str, parsers: list[str]) -> None:
    assert parsers_for_command(command) == parsers


SUREFIRE_2 = """\
[INFO] Running demo.CartTest
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in demo.CartTest
[ERROR] addsItems(demo.CartTest)  Time elapsed: 0.01 s  <<< FAILURE!
java.lang.AssertionError: expected:<2> but was:<1>
[ERROR] emptyCart(demo.CartTest)  Time elapsed: 0 s  <<< ERROR!
java.lang.NullPointerException
[ERROR] Failures:
[ERROR]   CartTest.addsItems:14 expected:<2> but was:<1>
[ERROR] Errors:
[ERROR]   CartTest.emptyCart:20 NullPointer
[ERROR] Tests run: 3, Failures: 1, Errors: 1, Skipped: 0
"""
SUREFIRE_3 = """\
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.031 s <<< FAILURE! -- in demo.CartTest
[ERROR] demo.CartTest.addsItems -- Time elapsed: 0.012 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <2> but was: <1>
[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0
"""
# Maven before 3.5 printed surefire's lines without a level; two modules each print their own totals.
SUREFIRE_OLD_TWO_MODULES = """\
Tests run: 1, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.2 sec <<< FAILURE!
total(shop.PriceTest)  Time elapsed: 0.1 sec  <<< FAILURE!
Tests run: 1, Failures: 1, Errors: 0, Skipped: 0
Tests run: 4, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0.3 sec <<< FAILURE!
save(shop.StoreTest)  Time elapsed: 0.2 sec  <<< ERROR!
Tests run: 4, Failures: 0, Errors: 1, Skipped: 0
"""


@pytest.mark.parametrize(
    ("output", "ids"),
    [
        (SUREFIRE_2, ["demo.CartTest.addsItems", "demo.CartTest.emptyCart"]),
        (SUREFIRE_3, ["demo.CartTest.addsItems"]),
        (SUREFIRE_OLD_TWO_MODULES, ["shop.PriceTest.total", "shop.StoreTest.save"]),
    ],
)
def test_surefires_failing_and_erroring_tests(output: str, ids: list[str]) -> None:
    assert _ids("mvn -B -q test", output) == ids


def test_a_surefire_output_cut_above_its_totals_is_not_read_as_fewer_failures() -> None:
    cut = SUREFIRE_2.replace("[ERROR] addsItems(demo.CartTest)  Time elapsed: 0.01 s  <<< FAILURE!\n", "")
    found = parse_findings("mvn -B -q test", cut, 1)
    assert found.parser is None
    assert found.note == "maven: its summary reports 2 but 1 were parsed (output cut or in an unknown format)"


def test_a_new_failing_surefire_test_fails_the_ratchet_and_is_named() -> None:
    current = SUREFIRE_2.replace("Failures: 1, Errors: 1", "Failures: 2, Errors: 1") + (
        "[ERROR] removesItems(demo.CartTest)  Time elapsed: 0 s  <<< FAILURE!\n"
    )
    result = ratchet("mvn -B -q test", SUREFIRE_2, 1, current, 1)
    assert not result.passed
    assert [f.test_id for f in result.new] == ["demo.CartTest.removesItems"]
    assert result.preexisting_count == 2


MAVEN_CHECKSTYLE = """\
[ERROR] src/main/java/demo/Cart.java:[12,5] (javadoc) MissingJavadocMethod: Missing a Javadoc comment.
[ERROR] src/main/java/demo/Cart.java:[30] (sizes) LineLength: Line is longer than 100 characters (found 104).
[WARN] src/main/java/demo/Cart.java:[31,1] (whitespace) FileTabCharacter: File contains tab characters.
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-checkstyle-plugin:3.3.1:check (default-cli) on project
demo: You have 2 Checkstyle violations. -> [Help 1]
"""
GRADLE_CHECKSTYLE = """\
> Task :checkstyleMain
[ant:checkstyle] [ERROR] /w/shop/src/main/java/demo/Cart.java:12:5: Missing a Javadoc comment. [MissingJavadocMethod]
[ant:checkstyle] [WARN] /w/shop/src/main/java/demo/Cart.java:31:1: File contains tab characters. [FileTabCharacter]
[ant:checkstyle] [ERROR] /w/shop/src/main/java/demo/Cart.java:30: Line is longer than 100 characters. [LineLength]
> Task :checkstyleMain FAILED
"""


def test_checkstyles_errors_not_its_warnings() -> None:
    assert _ids("mvn -B -q checkstyle:check", MAVEN_CHECKSTYLE) == [
        "src/main/java/demo/Cart.java:12 MissingJavadocMethod Missing a Javadoc comment.",
        "src/main/java/demo/Cart.java:30 LineLength Line is longer than 100 characters (found 104).",
    ]
    found = parse_findings("./gradlew --console=plain checkstyleMain", GRADLE_CHECKSTYLE, 1, root="/w/shop")
    assert [(f.path, f.line, f.code) for f in found.findings] == [
        ("src/main/java/demo/Cart.java", 12, "MissingJavadocMethod"),
        ("src/main/java/demo/Cart.java", 30, "LineLength"),
    ]


def test_checkstyles_own_count_catches_a_violation_in_an_unknown_format() -> None:
    odd = MAVEN_CHECKSTYLE.replace("[ERROR] src/main/java/demo/Cart.java:[30]", "[ERROR] Cart.java line 30:")
    assert parse_findings("mvn -B -q checkstyle:check", odd, 1).parser is None


def test_kotlinc_errors_in_both_of_its_formats() -> None:
    output = (
        "> Task :compileKotlin FAILED\n"
        "e: file:///w/shop/src/main/kotlin/Cart.kt:7:13 Unresolved reference: total\n"
        "e: /w/shop/src/main/kotlin/Price.kt: (3, 9): Type mismatch: inferred type is String but Int was expected\n"
        "w: /w/shop/src/main/kotlin/Price.kt: (5, 9): Variable 'x' is never used\n"
    )
    found = parse_findings("./gradlew --console=plain testClasses", output, 1, root="/w/shop")
    assert [(f.path, f.line, f.code, f.message) for f in found.findings] == [
        ("src/main/kotlin/Cart.kt", 7, "kotlinc", "Unresolved reference: total"),
        ("src/main/kotlin/Price.kt", 3, "kotlinc", "Type mismatch: inferred type is String but Int was expected"),
    ]


def test_junit5_display_names_and_nested_classes_under_gradle() -> None:
    output = (
        "> Task :test\n\n"
        "CartTest > adds two items() FAILED\n    org.opentest4j.AssertionFailedError at CartTest.kt:12\n\n"
        "CartTest > Empty > total is zero() FAILED\n    java.lang.IllegalStateException at CartTest.kt:30\n\n"
        "4 tests completed, 2 failed\n\n> Task :test FAILED\n"
    )
    found = parse_findings("./gradlew --console=plain test", output, 1)
    assert [(f.test_id, f.message) for f in found.findings] == [
        ("CartTest > adds two items()", "org.opentest4j.AssertionFailedError at CartTest.kt:12"),
        ("CartTest > Empty > total is zero()", "java.lang.IllegalStateException at CartTest.kt:30"),
    ]


def test_gradle_output_behind_make_is_read_by_its_shape() -> None:
    output = "gradle --console=plain test\n\ndemo.CartTest > adds FAILED\n\n2 tests completed, 1 failed\n"
    assert _ids("make test", output) == ["demo.CartTest > adds"]
    surefire = "mvn -q test\n" + SUREFIRE_3
    assert _ids("make test", surefire) == ["demo.CartTest.addsItems"]


def test_each_kinds_own_count_checks_only_that_kind() -> None:
    # gradle --continue: one project's kotlinc error (kotlinc prints no count) between another's failing tests.
    output = (
        "demo.CartTest > adds FAILED\n"
        "e: file:///w/shop/app/src/main/kotlin/Cart.kt:7:13 Unresolved reference: total\n"
        "demo.CartTest > removes FAILED\n"
        "3 tests completed, 2 failed\n"
    )
    assert _ids("./gradlew --continue test", output) == [
        "demo.CartTest > adds",
        "/w/shop/app/src/main/kotlin/Cart.kt:7 kotlinc Unresolved reference: total",
        "demo.CartTest > removes",
    ]


@pytest.mark.parametrize(
    "output",
    [
        "demo.CartTest > adds FAILED\n\n2 tests completed, 2 failed\n",
        "/w/Cart.java:3: error: cannot find symbol\n2 errors\n",
        ":compileJava/w/Cart.java:3: error: cannot find symbol\n/w/Cart.java:4: error: ';' expected\n1 error\n",
    ],
)
def test_a_gradle_output_that_disagrees_with_its_own_count_is_not_parsed(output: str) -> None:
    assert parse_findings("gradle --console=plain test", output, 1).parser is None


def test_checkstyle_counts_once_per_module_and_once_per_repeated_line() -> None:
    two_modules = (
        "[ERROR] a/src/A.java:[1,1] (javadoc) MissingJavadocType: Missing a Javadoc comment.\n"
        "[ERROR] b/src/B.java:[2,1] (javadoc) MissingJavadocType: Missing a Javadoc comment.\n"
        "[ERROR] b/src/B.java:[3,1] (javadoc) MissingJavadocType: Missing a Javadoc comment.\n"
        "[ERROR] Failed to execute goal ...:check on project a: You have 1 Checkstyle violation. -> [Help 1]\n"
        "[ERROR] Failed to execute goal ...:check on project b: You have 2 Checkstyle violations. -> [Help 1]\n"
    )
    assert len(_ids("mvn -B -q -fae checkstyle:check", two_modules)) == 3
    repeated = MAVEN_CHECKSTYLE + MAVEN_CHECKSTYLE.splitlines(keepends=True)[-1]
    assert len(_ids("mvn -B -q checkstyle:check", repeated)) == 2
