"""The command that runs only a task's test files: `command_for_test_files`, one way per test runner.

Each runner is told about files in its own words: pytest and the JavaScript runners take the paths (`python -m
unittest discover` too, without `discover`), Django's `manage.py test` the modules' dotted names, go test the files'
packages, cargo test an integration test's target, gradle a `--tests` class filter on the test task of the file's
project, maven surefire's `-Dtest`; after a `cd backend &&`, the paths from backend/. A runner pm-agent cannot
point at files (`make test`, `tox`, a script of the project's own, a file outside any source root) runs its whole
suite, which holds them: a path added to such a command would be read as a target, a task or a package (`gradle
test a/BTest.java`: "Task 'a/BTest.java' not found"; `go test ./... a_test.go`: "named files must be .go files").
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path, PurePosixPath

_PATHLIKE = re.compile(r"[/\\]|\.py$|::")
# Runners that take test files as arguments (the package managers pass them on to the script's runner).
_TAKES_PATHS = frozenset(
    {
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "npx",
        "jest",
        "vitest",
        "mocha",
        "ava",
        "rspec",
        "rails",
        "deno",
        "mix",
        "phpunit",
        "pest",
    }
)
_WHOLE = ""  # a narrower's answer for a file its runner cannot be pointed at: the whole suite
# src/<source set>/<language>/<package path>/<Class>.<ext>: a JVM test class's source root.
_JVM_SOURCES = frozenset({"java", "kotlin", "groovy", "scala"})


# A slot's command over several projects (`pm-agent init` where the projects live in folders of the top): each
# project's run from its folder in a subshell, every one even when one before failed, and a failure's status kept.
_JOINED = re.compile(r"status=0; ((?:\(cd (?:'[^']*'|[^\s']+) && .+?\) \|\| status=\$\?; )+)exit \$status")
_JOINED_PART = re.compile(r"\(cd ('[^']*'|[^\s']+) && (.+?)\) \|\| status=\$\?; ")


def joined_command(parts: Sequence[tuple[str, str]]) -> str:
    """One command from each folder's: `cd <folder> && <command>` for one; for several, each in a subshell from its
    folder, all of them run (a failing project hides no other's failures), the command failing if one did."""
    if len(parts) == 1:
        return f"cd {shlex.quote(parts[0][0])} && {parts[0][1]}"
    body = "".join(f"(cd {shlex.quote(folder)} && {command}) || status=$?; " for folder, command in parts)
    return f"status=0; {body}exit $status"


def joined_parts(command: str) -> list[tuple[str, str]] | None:
    """(folder, command) of each project of a `joined_command` of several; None for any other command."""
    found = _JOINED.fullmatch(command)
    if found is None:
        return None
    return [(shlex.split(folder)[0], part) for folder, part in _JOINED_PART.findall(found.group(1))]


def _narrow_joined(parts: list[tuple[str, str]], files: Sequence[str], worktree: Path | str | None) -> str:
    """The projects that hold `files`, each narrowed to its own files; every project's whole suite when a file is
    in none of their folders."""
    mine: dict[int, list[str]] = {}
    for file in files:
        at = next((i for i, (folder, _) in enumerate(parts) if posixpath.normpath(file).startswith(f"{folder}/")), None)
        if at is None:
            return joined_command(parts)
        mine.setdefault(at, []).append(file)
    narrowed = []
    for i in sorted(mine):
        folder, command = parts[i]
        cd = f"cd {shlex.quote(folder)} && "  # narrowed as `cd <folder> && <command>` alone, which keeps its `cd`
        narrowed.append((folder, command_for_test_files(cd + command, mine[i], worktree).removeprefix(cd)))
    return joined_command(narrowed)


def command_for_test_files(test_command: str, files: Sequence[str], worktree: Path | str | None = None) -> str:
    """The command that runs only `files` with the environment's test runner; `test_command` itself when the
    runner cannot be pointed at files. A `{files}` placeholder in `test_command` is replaced by the paths.

    Only the command's last part is narrowed (`composer install && phpunit`: phpunit), the rest kept as written;
    a last part that pipes or redirects its output is not narrowed."""
    quoted = _quoted(files)
    if "{files}" in test_command:
        return test_command.replace("{files}", quoted)
    parts = joined_parts(test_command)
    if parts is not None:
        return _narrow_joined(parts, files, worktree)
    prefix, last = _last_part(test_command)
    folder = _folder(prefix)
    if folder is None:
        return test_command  # a `cd` pm-agent cannot follow: where the files are from there is unclear
    if folder:
        # `cd backend && pytest -q`: the runner takes paths from backend/, the files are the worktree's.
        moved = [posixpath.relpath(f, folder) for f in files]
        if any(m.startswith("../") or m == ".." for m in moved):
            return test_command  # a file outside the folder the command tests
        files, quoted = moved, _quoted(moved)
        worktree = Path(worktree) / folder if worktree is not None else None
    try:
        tokens = shlex.split(last)
    except ValueError:
        return f"{test_command} {quoted}"
    if any(t.lstrip("0123456789").startswith(("|", "&", ">", "<")) for t in tokens):
        return test_command  # a pipe, a redirection or a background job: where the files would go is unclear
    names = [PurePosixPath(t).name for t in tokens]
    for narrow in _NARROWERS:
        command = narrow(tokens, names, files, worktree)
        if command is not None:
            return f"{prefix}{command}" if command else test_command
    return test_command


def _last_part(command: str) -> tuple[str, str]:
    """(everything up to the last `&&`, `||` or `;` with a space after it, the command after it); ("", command)
    when there is none or the split falls inside quotes."""
    at, op = max((command.rfind(op), op) for op in ("&&", "||", ";"))
    if at < 0:
        return "", command
    head, tail = command[: at + len(op)], command[at + len(op) :].strip()
    try:
        shlex.split(head)
    except ValueError:
        return "", command
    return f"{head} ", tail


def _folder(prefix: str) -> str | None:
    """The folder, relative to the worktree, that the commands of `prefix` leave the last part in ("": the worktree)
    through their `cd`s; None for a `cd` pm-agent cannot follow (an absolute path, `~`, `-`, a variable, none)."""
    lexer = shlex.shlex(prefix, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return None
    folder, command = "", []
    for word in [*words, ";"]:
        if word not in ("&&", "||", ";", "&", "|"):
            command.append(word)
            continue
        if command[:1] == ["cd"]:
            target = command[1] if len(command) == 2 else ""
            if not target or target == "-" or target.startswith(("/", "~", "$")) or "$" in target:
                return None
            folder = posixpath.normpath(posixpath.join(folder, target))
            if folder == ".":
                folder = ""
            elif folder.startswith(".."):
                return None
        command = []
    return folder


def _pytest(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """pytest: path arguments after the runner dropped (the contract's whole suite is not run twice), files added."""
    runner = next((i for i, name in enumerate(names) if name in ("pytest", "py.test")), None)
    if runner is None:
        return None
    kept = tokens[: runner + 1]
    for token in tokens[runner + 1 :]:
        if token.startswith("-") or not _looks_like_path(token, worktree):
            kept.append(token)
    return f"{shlex.join(kept)} {_quoted(files)}".strip()


def _looks_like_path(token: str, worktree: Path | str | None) -> bool:
    if _PATHLIKE.search(token):
        return True
    return worktree is not None and (Path(worktree) / token).exists()


def _appended(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """The JavaScript runners, rspec and `python -m unittest`: the paths after the command."""
    unittest = next((i for i, pair in enumerate(pairwise(tokens)) if pair == ("-m", "unittest")), None)
    if unittest is None and not _TAKES_PATHS.intersection(names):
        return None
    if unittest is not None and tokens[unittest + 2 : unittest + 3] == ["discover"]:
        # `unittest discover -s mkdocs -p '*tests.py'` reads paths after it as its start folder and pattern: the
        # files go to unittest itself, which takes them as paths, with discover's output flags kept.
        kept = [t for t in tokens[unittest + 3 :] if t in _UNITTEST_FLAGS]
        tokens = [*tokens[: unittest + 2], *kept]
    return f"{shlex.join(tokens)} {_quoted(files)}"


# Flags `unittest discover` and `unittest <paths>` both take (no value).
_UNITTEST_FLAGS = frozenset({"-v", "--verbose", "-q", "--quiet", "-f", "--failfast", "-b", "--buffer", "-c", "--catch"})


def _django(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """Django's `manage.py test`: the files as dotted module labels (`polls/tests.py` -> `polls.tests`); its runner
    refuses a file path ("One of the test labels is a path to a file"). Labels already given are dropped, as
    pytest's paths are (the whole suite is not run twice); a file outside a module path runs the whole suite."""
    at = next((i for i, pair in enumerate(pairwise(names)) if pair == ("manage.py", "test")), None)
    if at is None:
        return None
    labels = [_module(f) for f in files]
    if any(label is None for label in labels):
        return _WHOLE
    kept, rest = tokens[: at + 2], tokens[at + 2 :]
    i = 0
    while i < len(rest):
        token, value = rest[i], rest[i + 1] if i + 1 < len(rest) else None
        i += 1
        if not token.startswith("-"):
            continue  # a label of the command's own
        kept.append(token)
        optional = token in ("--parallel", "--shuffle") and value is not None and (value.isdigit() or value == "auto")
        if value is not None and (token in _DJANGO_VALUED or optional):
            kept.append(value)
            i += 1
    return shlex.join([*kept, *(label for label in labels if label is not None)])


# `manage.py test`'s options that take a value (`-v 2`): the value is not a label.
_DJANGO_VALUED = frozenset(
    {
        "-v",
        "--verbosity",
        "--settings",
        "--pythonpath",
        "--testrunner",
        "-t",
        "--top-level-directory",
        "-p",
        "--pattern",
        "--tag",
        "--exclude-tag",
        "-k",
        "--durations",
    }
)


def _module(path: str) -> str | None:
    """`polls/tests.py` -> `polls.tests`; None for a path that is not a module importable from the root."""
    parts = PurePosixPath(path).with_suffix("").parts if path.endswith(".py") else ()
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def _jvm_class(path: str) -> tuple[str, str] | None:
    """(project directory, fully qualified class) of a unit test source (`app/src/test/java/demo/CartTest.java` ->
    (`app`, `demo.CartTest`)); None for any other file. Only the `test` source set: the test task and surefire run
    it, and a filter naming a class of another (src/androidTest, src/integrationTest) would find no tests."""
    parts = PurePosixPath(path).parts
    for i in range(len(parts) - 3):
        if parts[i] == "src" and parts[i + 1] == "test" and parts[i + 2] in _JVM_SOURCES:
            package = [*parts[i + 3 : -1], PurePosixPath(parts[-1]).stem]
            return "/".join(parts[:i]), ".".join(package)
    return None


def _jvm_classes(files: Sequence[str]) -> list[tuple[str, str]] | None:
    """`_jvm_class` of every file, or None when one of them is none."""
    classes = [_jvm_class(f) for f in files]
    return None if any(c is None for c in classes) else [c for c in classes if c is not None]


def _gradle(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """gradle's test task of each file's project (`:app:test`, the root's `:test`) with a `--tests` filter per class:
    a filter on every project's test task would fail the projects that have no such class."""
    if not {"gradle", "gradlew"}.intersection(names) or "test" not in tokens:
        return None
    classes = _jvm_classes(files)
    if classes is None:
        return _WHOLE
    by_project: dict[str, list[str]] = {}
    for project, name in classes:
        by_project.setdefault(project, []).append(name)
    tasks: list[str] = []
    for project, names_ in by_project.items():
        tasks.append(":" + project.replace("/", ":") + ":test" if project else ":test")
        for name in names_:
            tasks += ["--tests", name]
    at = tokens.index("test")
    return shlex.join([*tokens[:at], *tasks, *tokens[at + 1 :]])


def _maven(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """maven's test phase with surefire's `-Dtest` (simple class names); a module without them is not a failure."""
    if not {"mvn", "mvnw"}.intersection(names) or "test" not in tokens:
        return None
    classes = _jvm_classes(files)
    if classes is None:
        return _WHOLE
    simple = ",".join(dict.fromkeys(name.rsplit(".", 1)[-1] for _, name in classes))
    # Both names of the switch: surefire 2.22 on reads the first, older ones the second.
    options = [f"-Dtest={simple}", "-Dsurefire.failIfNoSpecifiedTests=false", "-DfailIfNoTests=false"]
    return shlex.join([*tokens, *options])


def _go(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """go test of the files' packages (`./pkg/`) in place of the command's package patterns."""
    at = next((i for i in range(len(tokens) - 1) if names[i] == "go" and tokens[i + 1] == "test"), None)
    if at is None:
        return None
    if not all(f.endswith(".go") for f in files):
        return _WHOLE
    folders = (str(PurePosixPath(f).parent) for f in files)
    packages = list(dict.fromkeys("." if folder == "." else f"./{folder}" for folder in folders))
    rest = [t for t in tokens[at + 2 :] if not _go_package(t)]
    return shlex.join([*tokens[: at + 2], *rest, *packages])


def _go_package(token: str) -> bool:
    """A package pattern of go test (`./...`, `.`, `./pkg`, `example.com/m/...`), not a flag or a flag's value."""
    return not token.startswith("-") and (token == "." or token.startswith(("./", "../")) or "/" in token)


def _cargo(tokens: list[str], names: list[str], files: Sequence[str], worktree: Path | str | None) -> str | None:
    """cargo test of the integration test targets (`tests/api.rs` -> `--test api`), of the workspace member that holds
    them (`-p shop-core`); files of several crates, or not integration tests: the whole suite."""
    at = next((i for i in range(len(tokens) - 1) if names[i] == "cargo" and tokens[i + 1] == "test"), None)
    if at is None:
        return None
    crates = {_crate(f, worktree) for f in files}
    if len(crates) != 1 or None in crates:
        return _WHOLE
    package = crates.pop()
    end = tokens.index("--") if "--" in tokens else len(tokens)  # the test binary's own arguments stay last
    head = [t for t in tokens[:end] if not package or t not in ("--workspace", "--all")]
    select = ["-p", package] if package else []
    targets = [t for f in files for t in ("--test", PurePosixPath(f).stem)]
    return shlex.join([*head, *select, *targets, *tokens[end:]])


def _crate(path: str, worktree: Path | str | None) -> str | None:
    """The package an integration test file (`tests/x.rs`, `crates/core/tests/x.rs`) belongs to: "" for the root's,
    the member's [package] name, None for any other file or a member whose Cargo.toml cannot be read."""
    parts = PurePosixPath(path).parts
    if len(parts) < 2 or parts[-2] != "tests" or not parts[-1].endswith(".rs"):
        return None
    if len(parts) == 2:
        return ""
    if worktree is None:
        return None
    try:
        manifest = tomllib.loads((Path(worktree).joinpath(*parts[:-2]) / "Cargo.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    name = manifest.get("package", {}).get("name")
    return name if isinstance(name, str) else None


def _quoted(files: Sequence[str]) -> str:
    return " ".join(shlex.quote(f) for f in files)


# Each: (tokens, their program names, files, worktree) -> the narrowed command, _WHOLE, or None (not its runner).
_NARROWERS: tuple[Callable[[list[str], list[str], Sequence[str], Path | str | None], str | None], ...] = (
    _pytest,
    _django,
    _gradle,
    _maven,
    _go,
    _cargo,
    _appended,
)


__all__ = ["command_for_test_files", "joined_command", "joined_parts"]
