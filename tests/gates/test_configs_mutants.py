"""Reading configuration files where a one-token change would go unnoticed: JSON with comments, mypy overrides.

Written against mutmut's survivors (make mutation).
"""

from __future__ import annotations

import pytest

from pm_agent.gates.configs import config_format, is_lint_config, read_settings


def test_json_strings_keep_comment_markers_escaped_quotes_and_empty_values() -> None:
    text = (
        '{"a": "http://x/*y*/", // a comment\n'
        ' "b": "say \\"hi\\" // not a comment", /* a block\n comment */ "c": "",\n'
        ' "d": [1,], "e": "\\\\"} // a last comment without a newline'
    )
    assert read_settings("tsconfig.json", text) == {
        ("tsconfig", "a"): "http://x/*y*/",
        ("tsconfig", "b"): 'say "hi" // not a comment',
        ("tsconfig", "c"): "",
        ("tsconfig", "d"): [1],
        ("tsconfig", "e"): "\\",
    }


def test_a_comment_at_the_very_end_and_an_unclosed_block() -> None:
    assert read_settings("pyrightconfig.json", '{"strict": ["src"]}//') == {("pyright", "strict"): ["src"]}
    assert read_settings("pyrightconfig.json", '{"strict": ["src"]} /* open') == {("pyright", "strict"): ["src"]}


def test_an_unterminated_string_is_unreadable_not_a_crash() -> None:
    with pytest.raises(ValueError, match=r"tsconfig\.json: cannot read as tsconfig"):
        read_settings("tsconfig.json", '{"compilerOptions": {"strict": "open')


def test_mypy_overrides_in_pyproject() -> None:
    text = (
        "[tool.mypy]\n"
        'overrides = ["not a table", {module = "a", ignore_errors = true}, {ignore_missing_imports = true},'
        ' {module = ["b", "c.*"], strict = false}]\n'
    )
    assert read_settings("pyproject.toml", text) == {
        ("mypy", "overrides", "a", "ignore_errors"): True,
        ("mypy", "overrides", "*", "ignore_missing_imports"): True,  # no module: every module
        ("mypy", "overrides", "b", "strict"): False,
        ("mypy", "overrides", "c.*", "strict"): False,
    }


PYPROJECT_TOOLS = """\
[tool.ruff]
line-length = 100
ignore = ["E2"]
[tool.ruff.lint]
ignore = ["E1"]
[tool.pylint]
jobs = 2
[tool.pylint.main]
ignore = ["x"]
[tool.pylint."messages control"]
disable = ["C0114"]
[tool.pyright]
strict = ["src"]
[tool.flake8]
ignore = "E1"
[tool.black]
line-length = 1
[tool.pytest]
minversion = "6"
[tool.pytest.ini_options]
addopts = "-q"
"""
SETUP_CFG = """\
[flake8]
ignore = E1
[flake8]
select = F
[MyPy]
strict = True
[mypy-pkg.*]
Ignore_Errors = True
[tool:pytest]
addopts = -q
[pylint.messages]
disable = C1
[other]
x = 1
"""


@pytest.mark.parametrize(
    ("path", "text", "settings"),
    [
        ("pyproject.toml", 'tool = "x"\n', {}),
        ("pyproject.toml", '[project]\nname = "x"\n', {}),
        ("pyproject.toml", "[tool]\nruff = 1\nmypy = 2\npylint = 3\npyright = 4\npytest = 5\n", {}),
        (
            "pyproject.toml",
            PYPROJECT_TOOLS,
            {
                ("ruff", "line-length"): 100,
                ("ruff", "ignore"): ["E1"],  # lint.ignore is ignore
                ("pylint", "jobs"): 2,
                ("pylint", "ignore"): ["x"],
                ("pylint", "disable"): ["C0114"],
                ("pyright", "strict"): ["src"],
                ("flake8", "ignore"): "E1",
                ("black", "line-length"): 1,  # read for its excludes (a format check's weakening)
                ("pytest", "minversion"): "6",
                ("pytest", "addopts"): "-q",
            },
        ),
        ("pyproject.toml", "[tool.pytest]\nx = 1\n", {("pytest", "x"): 1}),
        ("pyproject.toml", "[tool.mypy]\nstrict = true\n", {("mypy", "strict"): True}),
        ("pyproject.toml", "[tool.ruff]\nignore = []\n", {("ruff", "ignore"): []}),
        (
            "setup.cfg",
            SETUP_CFG,
            {
                ("flake8", "ignore"): "E1",
                ("flake8", "select"): "F",
                ("mypy", "strict"): "True",
                ("mypy", "overrides", "pkg.*", "Ignore_Errors"): "True",
                ("pytest", "addopts"): "-q",
                ("pylint", "disable"): "C1",
            },
        ),
        ("tox.ini", "[pytest]\naddopts = -q %(x)s\n", {("pytest", "addopts"): "-q %(x)s"}),
        (
            ".pylintrc",
            "[MAIN]\njobs = 2\n[MESSAGES CONTROL]\ndisable = C1\n",
            {("pylint", "jobs"): "2", ("pylint", "disable"): "C1"},
        ),
        ("pylintrc", "[MAIN]\njobs = 2\n", {("pylint", "jobs"): "2"}),
        (".eslintrc", "rules:\n  eqeqeq: 0\n", {("eslint", "rules", "eqeqeq"): 0}),
        (".eslintrc", '  {"rules": {"eqeqeq": 0}}', {("eslint", "rules", "eqeqeq"): 0}),
        (".eslintrc", '\n  {\n  // quiet\n  "rules": {"eqeqeq": 0},\n}', {("eslint", "rules", "eqeqeq"): 0}),
        (".golangci.json", '{"run": {"timeout": 1e3}}', {("golangci", "run", "timeout"): 1000.0}),  # JSON, not YAML
        (".eslintrc.yml", "", {}),
        (".eslintrc.yaml", "rules:\n  a: 0\n", {("eslint", "rules", "a"): 0}),
        (".eslintrc.json", "", {}),
        (
            ".eslintrc.json",
            '{"overrides": [{"files": ["*.ts"], "rules": {"a": "off"}}]}',
            {("eslint", "overrides", "0", "files"): ["*.ts"], ("eslint", "overrides", "0", "rules", "a"): "off"},
        ),
        (".eslintignore", "# comment\ndist/\n\n  build/  \n", {("eslint", "ignorePatterns"): ["dist/", "build/"]}),
        (
            "package.json",
            '{"name": "x", "eslintConfig": {"rules": {"eqeqeq": "off"}}}',
            {("eslint", "rules", "eqeqeq"): "off"},
        ),
        ("package.json", '{"name": "x"}', {}),
        ("package.json", "[1]", {}),
        ("package.json", "", {}),
        (".golangci.yml", "linters:\n  disable: [errcheck]\n", {("golangci", "linters", "disable"): ["errcheck"]}),
        (".golangci.yaml", "run:\n  skip-dirs: [x]\n", {("golangci", "run", "skip-dirs"): ["x"]}),
        (".golangci.yml", "", {}),
        (".golangci.toml", "[linters]\ndisable = ['errcheck']\n", {("golangci", "linters", "disable"): ["errcheck"]}),
        (
            ".golangci.json",
            '{"linters": {"disable": ["errcheck"]}}',
            {("golangci", "linters", "disable"): ["errcheck"]},
        ),
        (
            "Cargo.toml",
            '[lints.clippy]\nunwrap_used = "allow"\n',
            {("cargo", "lints", "clippy", "unwrap_used"): "allow"},
        ),
        (
            "Cargo.toml",
            '[workspace.lints.rust]\nunsafe_code = "allow"\n',
            {("cargo", "lints", "rust", "unsafe_code"): "allow"},
        ),
        ("Cargo.toml", "workspace = 1\n", {}),
        ("Cargo.toml", '[package]\nname = "x"\n', {}),
        ("tsconfig.json", "", {}),
        (
            "tsconfig.base.json",
            '{"compilerOptions": {"strict": true}}',
            {("tsconfig", "compilerOptions", "strict"): True},
        ),
        ("jsconfig.json", '{"compilerOptions": {"checkJs": true}}', {("tsconfig", "compilerOptions", "checkJs"): True}),
        ("pyrightconfig.json", '{"strict": ["src"]}', {("pyright", "strict"): ["src"]}),
        ("ruff.toml", '[lint]\nignore = ["E1"]\n', {("ruff", "ignore"): ["E1"]}),
        (".ruff.toml", 'ignore = ["E1"]\n', {("ruff", "ignore"): ["E1"]}),
        ("mypy.ini", "[mypy]\nstrict = True\n", {("mypy", "strict"): "True"}),
        (".mypy.ini", "[mypy]\nstrict = True\n", {("mypy", "strict"): "True"}),
        (".flake8", "[flake8]\nignore = E1\n", {("flake8", "ignore"): "E1"}),
        ("sub/pytest.ini", "[pytest]\naddopts = -q\n", {("pytest", "addopts"): "-q"}),
        ("README.md", "x = 1", {}),
        ("sub/dir/pyproject.toml", None, {}),
    ],
)
def test_read_settings_of_each_format(path: str, text: str | None, settings: dict[tuple[str, ...], object]) -> None:
    assert read_settings(path, text) == settings


@pytest.mark.parametrize(
    ("path", "text"),
    [("setup.cfg", "no section\n"), (".eslintrc.yml", "rules: [a"), ("Cargo.toml", "[lints"), ("package.json", "{")],
)
def test_unreadable_files_raise_value_error_naming_the_format(path: str, text: str) -> None:
    with pytest.raises(ValueError, match=r"cannot read as "):
        read_settings(path, text)


@pytest.mark.parametrize(
    ("path", "kind", "lint"),
    [
        ("a/pyproject.toml", "pyproject", True),
        ("tsconfig.app.json", "tsconfig", True),
        ("setup.cfg", "ini", True),
        ("pytest.ini", "ini", False),  # configures only the test runner
        ("x/pytest.ini", "ini", False),
        ("eslint.config.mjs", None, True),  # flat configs: not parsed, still lint configuration
        ("eslint.config.ts", None, True),
        ("eslint.config.json", None, False),
        ("myeslint.config.js", None, False),
        ("Makefile", None, False),
    ],
)
def test_config_format_and_is_lint_config(path: str, kind: str | None, lint: bool) -> None:
    assert config_format(path) == kind
    assert is_lint_config(path) is lint


@pytest.mark.parametrize(
    ("text", "settings"),
    [
        (
            '{"a": "say \\" // not a comment", "b": 1}',
            {("tsconfig", "a"): 'say " // not a comment', ("tsconfig", "b"): 1},
        ),
        ('{"a": 1 /*/ "b": 2 */}', {("tsconfig", "a"): 1}),  # `/*/` opens a comment, it does not close one
        ('{"a": 1 /**/, "b": 2}', {("tsconfig", "a"): 1, ("tsconfig", "b"): 2}),
        ('{"a": 1, /* c */"b": 2}', {("tsconfig", "a"): 1, ("tsconfig", "b"): 2}),
        ('{/* one */ "a": 1, /* two */ "b": 2}', {("tsconfig", "a"): 1, ("tsconfig", "b"): 2}),
    ],
)
def test_comments_and_strings_next_to_each_other(text: str, settings: dict[tuple[str, ...], object]) -> None:
    assert read_settings("tsconfig.json", text) == settings


def test_a_mypy_override_section_without_a_mypy_section() -> None:
    assert read_settings("mypy.ini", "[mypy-pkg.*]\nignore_errors = True\n") == {
        ("mypy", "overrides", "pkg.*", "ignore_errors"): "True"
    }
