"""checks-weakened: inline suppressions and lint/type-check ignore entries, justified or not; hidden findings.

Real git repositories in tmp_path; the hidden-findings tests run the real ruff and mypy.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pm_agent.gates import AgentReport, GateId, gate_checks_weakened
from pm_agent.gates.justify import Weakening, covers, judge_weakenings
from pm_agent.gates.suppressions import added_suppressions, find_markers
from pm_agent.plan.models import Task

from .conftest import MakeWork, Work

RUFF = f"{sys.executable} -m ruff check --no-cache --output-format=concise ."
MYPY = f"{sys.executable} -m mypy --cache-dir=/dev/null --no-error-summary calc.py"
TASK = Task(id="1", title="Calc")
CALC = "def add(a: int, b: int) -> int:\n    return a + b\n"
PYPROJECT = '[project]\nname = "calc"\nversion = "0"\n\n[tool.ruff]\nline-length = 100\n'


def _report(*risks: str, summary: str = "done") -> AgentReport:
    return AgentReport.from_payload({"reviewNote": {"summary": summary, "risks": list(risks), "rollback": "revert"}})


def _gate(work: Work, report: AgentReport | None = None, commands: tuple[str, ...] = ()) -> Any:
    return gate_checks_weakened(TASK, work.path, work.base, report or _report(), commands=commands, timeout_s=120)


@pytest.fixture
def calc(make_work: MakeWork) -> Work:
    return make_work({"calc.py": CALC, "pyproject.toml": PYPROJECT, "README.md": "# calc\n"})


# ---------------------------------------------------------------- inline suppressions


@pytest.mark.parametrize(
    ("path", "line", "marker", "codes"),
    [
        ("a.py", "import os  # noqa: F401", "# noqa", ("F401",)),
        ("a.py", "import os  # noqa", "# noqa", ()),
        ("a.py", "x: int = 'a'  # type: ignore[assignment]", "# type: ignore", ("assignment",)),
        ("a.py", "x = f()  # pyright: ignore[reportCallIssue]", "# pyright: ignore", ("reportCallIssue",)),
        ("a.py", "def f():  # pylint: disable=too-many-locals", "# pylint: disable", ("too-many-locals",)),
        ("a.py", "# ruff: noqa: E501", "# ruff: noqa", ("E501",)),
        ("a.py", "# mypy: ignore-errors", "# mypy: ignore-errors", ()),
        ("a.ts", "// eslint-disable-next-line no-console", "eslint-disable", ("no-console",)),
        ("a.ts", "/* eslint-disable */", "eslint-disable", ()),
        ("a.tsx", "// @ts-ignore", "@ts-ignore", ()),
        ("a.ts", "// @ts-expect-error wrong on purpose", "@ts-expect-error", ()),
        ("a.go", "x := f() //nolint:errcheck", "//nolint", ("errcheck",)),
        ("a.rs", "#[allow(dead_code)]", "#[allow]", ("dead_code",)),
        ("a.rs", "#![allow(clippy::all)]", "#[allow]", ("clippy::all",)),
        # Formatters' own switches: the format check passes a region it was told to leave alone.
        ("a.py", "x = [1,2]  # fmt: skip", "# fmt: off", ()),
        ("a.py", "# fmt: off", "# fmt: off", ()),
        ("a.ts", "// prettier-ignore", "prettier-ignore", ()),
        ("a.vue", "<!-- prettier-ignore-start -->", "prettier-ignore", ()),
        ("a.rs", "#[rustfmt::skip]", "#[rustfmt::skip]", ()),
    ],
)
def test_each_marker_is_found_with_its_codes(path: str, line: str, marker: str, codes: tuple[str, ...]) -> None:
    assert find_markers(path, line) == [(marker, codes)]


def test_markers_are_read_only_in_source_files() -> None:
    assert find_markers("README.md", "use `# noqa` sparingly") == []
    assert find_markers("notes.txt", "// @ts-ignore") == []


def test_added_noqa_without_justification_fails_with_the_line_quoted(calc: Work) -> None:
    calc.write("calc.py", "import os  # noqa: F401\n\n\n" + CALC)
    result = _gate(calc)
    assert result.gate == GateId.CHECKS_WEAKENED
    assert not result.passed
    assert "UNJUSTIFIED calc.py:1: inline suppression `# noqa` of F401: import os  # noqa: F401" in result.evidence
    assert "reviewNote.risks" in result.evidence, "the evidence tells the fixer how to justify one"
    assert result.details["unjustified"] == ["calc.py:1: inline suppression `# noqa` of F401: import os  # noqa: F401"]


def test_a_marker_inside_a_python_string_is_not_a_suppression(calc: Work) -> None:
    calc.write("calc.py", CALC + 'HELP = "append # noqa to silence ruff"\n')
    result = _gate(calc)
    assert result.passed, result.evidence
    assert result.evidence == "no suppression or lint/type-check ignore entry added"


def test_a_moved_suppression_is_not_added(make_work: MakeWork) -> None:
    work = make_work({"calc.py": "import os  # noqa: F401\n" + CALC})
    work.write("calc.py", "\n" + "import os  # noqa: F401\n" + CALC.replace("a + b", "b + a"))
    assert added_suppressions(work.path, work.git.changes(work.base)) == []
    work.write("calc.py", "import os  # noqa: F401\nimport sys  # noqa: F401\n" + CALC)
    added = added_suppressions(work.path, work.git.changes(work.base))
    assert [(w.line, w.codes) for w in added] == [(2, ("F401",))]


def test_justified_suppression_passes_and_is_listed(calc: Work) -> None:
    calc.write("calc.py", "import os  # noqa: F401\n\n\n" + CALC)
    report = _report("calc.py:1 F401: os is re-exported for plugins that import it from here")
    result = _gate(calc, report)
    assert result.passed, result.evidence
    assert "justified   calc.py:1" in result.evidence
    assert result.details["justified"] == ["calc.py:1: inline suppression `# noqa` of F401: import os  # noqa: F401"]
    assert result.details["unjustified"] == []


@pytest.mark.parametrize(
    ("entry", "ok"),
    [
        ("calc.py:1 F401: os is re-exported for plugins", True),
        ("calc.py line 1: the import is re-exported for plugins", True),
        ("calc.py F401 re-exported for plugins", True),
        ("calc.py:3 F401", False),  # no reason
        ("calc.py:7: the import is re-exported for plugins", False),  # another line, no code
        ("other.py:1 F401: os is re-exported for plugins", False),  # another file
        ("calc.py: needed, it is re-exported", False),  # the file alone, but it holds two suppressions
    ],
)
def test_what_counts_as_a_justification(entry: str, ok: bool) -> None:
    first = Weakening("lint/type check", "calc.py", 1, "import os  # noqa: F401", "noqa", ("F401",))
    assert covers(entry, first, alone_in_file=False) is ok


def test_the_file_alone_justifies_its_only_suppression() -> None:
    only = Weakening("lint/type check", "src/calc.py", 4, "x = 1  # type: ignore", "type: ignore", ("type: ignore",))
    assert covers("calc.py: the stub for the C extension is wrong upstream", only, alone_in_file=True)
    assert not covers("calc.py: the stub for the C extension is wrong upstream", only, alone_in_file=False)


def test_each_suppression_needs_its_own_justification(calc: Work) -> None:
    calc.write("calc.py", "import os  # noqa: F401\nimport sys  # noqa: F401\nimport re  # noqa\n" + CALC)
    report = _report("calc.py:1 F401: os is re-exported for plugins", summary="Adds imports")
    judgement = judge_weakenings(added_suppressions(calc.path, calc.git.changes(calc.base)), report)
    assert [w.line for w, _ in judgement.justified] == [1, 2], "one entry naming the code covers that code"
    assert [w.line for w in judgement.unjustified] == [3]


def test_summary_and_signal_risks_are_read_too(calc: Work) -> None:
    calc.write("calc.py", "import os  # noqa: F401\n" + CALC)
    in_summary = AgentReport.from_payload(
        {"reviewNote": {"summary": "Adds add(); calc.py:1 F401 kept because os is re-exported", "risks": []}}
    )
    assert _gate(calc, in_summary).passed
    in_risks = AgentReport.from_payload({"risks": ["calc.py:1 F401: os is re-exported for plugins"]})
    assert _gate(calc, in_risks).passed


# ---------------------------------------------------------------- configuration


def test_ruff_ignore_added_in_pyproject_fails(calc: Work) -> None:
    calc.write("pyproject.toml", PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401", "E501"]\n')
    result = _gate(calc)
    assert not result.passed
    assert 'pyproject.toml:9: ruff ignore += F401: ignore = ["F401", "E501"]' in result.evidence
    assert "pyproject.toml:9: ruff ignore += E501" in result.evidence


def test_ruff_per_file_ignores_justified_by_code_and_glob(calc: Work) -> None:
    calc.write("pyproject.toml", PYPROJECT + '\n[tool.ruff.lint.per-file-ignores]\n"tests/*" = ["S101"]\n')
    report = _report("pyproject.toml S101 tests/*: pytest tests are written with plain assert statements")
    result = _gate(calc, report)
    assert result.passed, result.evidence
    assert "ruff per-file-ignores.tests/* += S101" in result.evidence


@pytest.mark.parametrize(
    ("path", "before", "after", "what"),
    [
        (
            "setup.cfg",
            "[flake8]\nmax-line-length = 100\n",
            "[flake8]\nmax-line-length = 100\nextend-ignore = E203\n",
            "flake8 extend-ignore += E203",
        ),
        (
            "setup.cfg",
            "[flake8]\n",
            "[flake8]\nper-file-ignores =\n    tests/*: S101,E501\n",
            "flake8 per-file-ignores += tests/*: E501",
        ),
        ("mypy.ini", "[mypy]\nstrict = True\n", "[mypy]\nstrict = False\n", "mypy strict = False"),
        ("mypy.ini", "[mypy]\nstrict = True\n", "[mypy]\n", "mypy strict = (removed)"),
        (
            "mypy.ini",
            "[mypy]\n",
            "[mypy]\n\n[mypy-calc.*]\nignore_errors = True\n",
            "mypy overrides.calc.*.ignore_errors = True",
        ),
        (
            "pyproject.toml",
            "[tool.mypy]\nstrict = true\n",
            '[tool.mypy]\nstrict = true\ndisable_error_code = ["arg-type"]\n',
            "mypy disable_error_code += arg-type",
        ),
        (
            "pyproject.toml",
            "[tool.mypy]\n",
            '[tool.mypy]\n\n[[tool.mypy.overrides]]\nmodule = "calc"\nignore_missing_imports = true\n',
            "mypy overrides.calc.ignore_missing_imports = true",
        ),
        (
            ".pylintrc",
            "[MESSAGES CONTROL]\ndisable = C0114\n",
            "[MESSAGES CONTROL]\ndisable = C0114,W0611\n",
            "pylint disable += W0611",
        ),
        (
            ".eslintrc.json",
            '{"rules": {"no-console": "error"}}',
            '{\n  // quiet\n  "rules": {"no-console": "off"},\n}',
            "eslint rules.no-console = off",
        ),
        (".eslintrc.yml", "rules:\n  eqeqeq: error\n", "rules:\n  eqeqeq: 0\n", "eslint rules.eqeqeq = 0"),
        (
            "tsconfig.json",
            '{"compilerOptions": {"strict": true}}',
            '{"compilerOptions": {"strict": false, "skipLibCheck": true}}',
            "tsconfig compilerOptions.strict = false",
        ),
        (
            "tsconfig.json",
            '{"compilerOptions": {}}',
            '{"compilerOptions": {"skipLibCheck": true}}',
            "tsconfig compilerOptions.skipLibCheck = true",
        ),
        (
            "pyrightconfig.json",
            '{"typeCheckingMode": "strict"}',
            '{"typeCheckingMode": "basic"}',
            "pyright typeCheckingMode = basic",
        ),
        (
            ".golangci.yml",
            "linters:\n  enable: [errcheck]\n",
            "linters:\n  disable: [errcheck]\n",
            "golangci linters.disable += errcheck",
        ),
        (
            "Cargo.toml",
            '[package]\nname = "x"\n',
            '[package]\nname = "x"\n\n[lints.clippy]\nunwrap_used = "allow"\n',
            "cargo lints.clippy.unwrap_used = allow",
        ),
        (
            "pyproject.toml",
            "[tool.ruff]\nline-length = 100\n",
            '[tool.ruff]\nline-length = 100\n\n[tool.ruff.format]\nexclude = ["calc.py"]\n',
            "ruff format.exclude += calc.py",
        ),
        (
            "pyproject.toml",
            "[tool.black]\nline-length = 100\n",
            "[tool.black]\nline-length = 100\nextend-exclude = 'calc\\.py'\n",
            "black extend-exclude += calc\\.py",
        ),
        (".prettierignore", "dist\n", "dist\n# new\nsrc/calc.js\n", "prettier ignore += src/calc.js"),
        (
            "rustfmt.toml",
            'edition = "2021"\n',
            'edition = "2021"\nignore = ["src/calc.rs"]\n',
            "rustfmt ignore += src/calc.rs",
        ),
        ("rustfmt.toml", "", "disable_all_formatting = true\n", "rustfmt disable_all_formatting = true"),
    ],
)
def test_configuration_weakenings_per_tool(make_work: MakeWork, path: str, before: str, after: str, what: str) -> None:
    work = make_work({path: before, "calc.py": CALC})
    work.write(path, after)
    result = _gate(work)
    assert not result.passed, result.evidence
    assert what in result.evidence


def test_eslint_flat_config_rule_turned_off(make_work: MakeWork) -> None:
    work = make_work({"eslint.config.js": "export default [{ rules: {\n} }];\n"})
    work.write("eslint.config.js", "export default [{ rules: {\n  'no-unused-vars': 'off',\n} }];\n")
    result = _gate(work)
    assert not result.passed
    assert "eslint.config.js:2: eslint rule no-unused-vars off" in result.evidence


def test_stricter_or_unrelated_configuration_passes(calc: Work) -> None:
    stricter = PYPROJECT.replace("line-length = 100", 'line-length = 100\n\n[tool.ruff.lint]\nselect = ["E", "F", "B"]')
    calc.write("pyproject.toml", stricter + "\n[tool.pytest.ini_options]\ntimeout = 60\n")
    result = _gate(calc, commands=(RUFF,))
    assert result.passed, result.evidence
    assert "nothing hidden" in result.evidence, "configuration changed: ruff re-run with the base's"


def test_select_entry_removed_is_a_weakening(make_work: MakeWork) -> None:
    work = make_work({"ruff.toml": 'select = ["E", "F", "B"]\n', "calc.py": CALC})
    work.write("ruff.toml", 'select = ["E", "F"]\n')
    result = _gate(work)
    assert not result.passed
    assert "ruff select -= B" in result.evidence


def test_unreadable_configuration_is_noted_not_crashed(calc: Work) -> None:
    calc.write("pyproject.toml", "[tool.ruff\nbroken")
    result = _gate(calc)
    assert result.passed
    assert "not read: pyproject.toml: cannot read as pyproject" in result.evidence


# ---------------------------------------------------------------- hidden findings (real ruff and mypy)


def test_findings_hidden_by_the_configuration_are_reported(calc: Work) -> None:
    calc.write("calc.py", "import os\n\n\n" + CALC)
    calc.write("pyproject.toml", PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401"]\n')
    result = _gate(calc, commands=(RUFF,))
    assert not result.passed
    assert "reports 1 finding(s) it now hides:" in result.evidence
    assert "calc.py:1: F401" in result.evidence
    assert list(result.details["hidden"].values()) == [["ruff|calc.py|F401|`os` imported but unused"]]
    assert not (calc.path.parent / "pm-agent-base-config").exists()
    assert [w.path for w in calc.git.worktree_list()] == [str(calc.path)], "the scratch worktree is removed"


def test_a_rule_the_checks_do_not_know_still_shows_as_hidden_findings(make_work: MakeWork) -> None:
    strict = PYPROJECT + '\n[tool.ruff.lint]\nselect = ["E", "F"]\n'
    calc = make_work({"calc.py": CALC, "pyproject.toml": strict})
    calc.write("calc.py", CALC + "X = '" + "x" * 120 + "'\n")
    calc.write("pyproject.toml", strict.replace("line-length = 100", "line-length = 200"))
    result = _gate(calc, commands=(RUFF,))
    assert not result.passed, "a longer line-length hides E501: no rule names it, the hidden finding does"
    assert "E501" in result.evidence
    assert "UNJUSTIFIED pyproject.toml: configuration change hides findings" in result.evidence
    report = _report("pyproject.toml: the project's style guide allows 200 characters per line")
    assert _gate(calc, report, commands=(RUFF,)).passed


def test_justified_configuration_lists_hidden_findings_and_passes(calc: Work) -> None:
    calc.write("calc.py", "import os\n\n\n" + CALC)
    calc.write("pyproject.toml", PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401"]\n')
    report = _report("pyproject.toml F401: imports are re-exported throughout this package")
    result = _gate(calc, report, commands=(RUFF,))
    assert result.passed, result.evidence
    assert "calc.py:1: F401" in result.evidence


def test_mypy_ignore_errors_hides_a_type_error(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC, "mypy.ini": "[mypy]\nstrict = True\n"})
    work.write("calc.py", CALC + "\n\ndef bad() -> int:\n    return 'one'\n")
    work.write("mypy.ini", "[mypy]\nstrict = True\nignore_errors = True\n")
    result = _gate(work, commands=(MYPY,))
    assert not result.passed
    assert "mypy ignore_errors = True" in result.evidence
    assert 'calc.py:6: return-value Incompatible return value type (got "str", expected "int")' in result.evidence


def test_configuration_the_task_creates_is_compared_with_none(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC})
    work.write("calc.py", "import os\n\n\n" + CALC)
    work.write("ruff.toml", 'extend-exclude = ["calc.py"]\n')
    result = _gate(work, commands=(RUFF,))
    assert not result.passed
    assert "ruff extend-exclude += calc.py" in result.evidence
    assert "calc.py:1: F401" in result.evidence


def test_tools_installed_in_the_worktree_run_in_the_scratch_copy_and_survive_it(make_work: MakeWork) -> None:
    work = make_work({"calc.py": CALC, "pyproject.toml": PYPROJECT, ".gitignore": ".venv/\n"})
    lint = work.write(".venv/bin/lint", f"#!/bin/sh\nexec {RUFF}\n")
    lint.chmod(0o755)
    work.write("calc.py", "import os\n\n\n" + CALC)
    work.write("pyproject.toml", PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401"]\n')
    result = _gate(work, commands=(".venv/bin/lint",))
    assert "calc.py:1: F401" in result.evidence, "the base configuration's run used the worktree's .venv"
    assert lint.is_file(), "removing the scratch copy left the real .venv alone"


def test_a_change_outside_the_tools_settings_is_not_re_run(calc: Work) -> None:
    calc.write("pyproject.toml", PYPROJECT.replace('version = "0"', 'version = "0"\ndependencies = ["attrs"]'))
    result = _gate(calc, commands=(RUFF,))
    assert result.passed
    assert result.details["configs"] == [], "a new dependency changes no lint setting: no second run"
    assert result.evidence == "no suppression or lint/type-check ignore entry added"


def test_an_added_suppresswarnings_in_java_fails_until_justified(make_work: MakeWork) -> None:
    source = "package shop;\n\npublic class Cart {\n    java.util.List items() { return null; }\n}\n"
    work = make_work({"src/main/java/shop/Cart.java": source})
    work.write(
        "src/main/java/shop/Cart.java", source.replace("    java", '    @SuppressWarnings("rawtypes")\n    java')
    )
    result = _gate(work)
    assert not result.passed
    quoted = '@SuppressWarnings("rawtypes")'
    assert result.details["unjustified"] == [
        f"src/main/java/shop/Cart.java:4: inline suppression `@SuppressWarnings` of rawtypes: {quoted}"
    ]
    justified = _gate(work, _report("src/main/java/shop/Cart.java:4 rawtypes: the legacy API returns a raw List"))
    assert justified.passed, justified.evidence
