"""Lines of a Files list that are no plain entry: a kind word with a qualifier (`Possibly create:`, `Modify (only if
...):`), files the task only reads (`Read:`, `Reference:`), an area label before its paths (`Backend: \\`a.py\\``),
`No code changes`; whatever else is prose, kept in the description with a warning (task_body.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pm_agent.plan import fields
from pm_agent.plan.models import ExpectedFiles

__all__ = ["FileProse", "read_file_prose"]

# Labels of files the task reads, checks or leaves as they are: the agent sees the line in the description, and
# no file is expected to change.
# fmt: off
_READ_WORDS = frozenset({
    "read", "reads", "read-only", "readonly", "reference", "references", "ref", "refs", "context", "see", "consult",
    "inspect", "review", "study", "existing", "unchanged", "untouched", "keep", "preserve", "check", "verify", "参考",
    "阅读",
})
# fmt: on
# `No code changes`, `None`, `(none)`, `N/A`, `Nothing to change`: the task names no file, as it says.
_NO_FILES = re.compile(r"^[(\[]?\s*(?:no|none|n/?a|nothing|无)(?:\b|$)", re.IGNORECASE)
# An area label before the paths the task changes there (`Backend: \`app/api.py\``, `Web app:`, `CI config:`): its
# words all name areas (a verb such as `Keep:` or a phrase such as `Candidate scenarios:` says something else).
# fmt: off
_AREA_WORDS = frozenset({
    "backend", "frontend", "front-end", "back-end", "server", "client", "api", "web", "ui", "app", "apps", "mobile",
    "ios", "android", "desktop", "database", "db", "schema", "config", "configuration", "settings", "infra",
    "infrastructure", "ci", "cd", "deploy", "deployment", "docs", "documentation", "styles", "css", "shared", "core",
    "common", "lib", "library", "cli", "worker", "workers", "scripts", "migrations", "models", "services",
    "components", "hooks", "types", "utils", "helpers", "routes", "views", "templates", "assets", "i18n", "locales",
    "side", "code", "files", "layer", "module", "package",
})
# fmt: on
_AREA_NAMES = frozenset({"side", "code", "files", "layer", "module", "package", "app"})  # no area on their own
# Verbs of a Files list besides the kind words of labels.py, each a change of that kind (`Rewrite: \`a.md\``).
_MORE_KINDS = {"rewrite": "modify", "refactor": "modify", "extend": "modify", "replace": "modify"}
_KIND_NAMES = {"create": "Create", "modify": "Modify", "delete": "Delete", "test": "Test"}
# A qualifier saying the file stays out of the repository: pm-agent looks for expected files in commits.
_UNCOMMITTED = re.compile(r"\b(?:not committed|uncommitted|temp|temporary|scratch|throwaway)\b", re.IGNORECASE)
_WORDS = re.compile(r"[\w-]+")
_PARENS = re.compile(r"[(（]([^()（）]*)[)）]")


@dataclass(frozen=True)
class FileProse:
    """What an unread Files-list line says: whether the description keeps it, and the warning, if one is due."""

    keep: bool
    warning: str | None = None


def read_file_prose(files: ExpectedFiles, text: str, code: tuple[str, ...]) -> FileProse:
    """Read a Files-list line `fields.add_file_entry` refused (`text` with ASCII colons) into `files`."""
    stripped = text.strip().lstrip("*_").strip()  # not its end: a path may end with `*` (`scripts/*`)
    if _NO_FILES.match(stripped):
        return FileProse(keep=True)  # `No code changes in this task`: nothing to expect, the agent reads it
    label, sep, rest = stripped.partition(":")
    label = label.strip().strip("*_`").strip()
    if not sep or not label or "`" in label:
        return _unread(text)
    qualifiers = [q.strip() for q in _PARENS.findall(label)]
    bare = _PARENS.sub(" ", label)
    words = [word.lower() for word in _WORDS.findall(bare)]
    said = " ".join([*words, *(q.lower() for q in qualifiers)])
    if words and (words[0] in _READ_WORDS or "read only" in said or "read-only" in said):
        return FileProse(keep=True)  # `Read: \`docs/api.md\``: the task reads it; nothing to expect
    kinds = {kind for word in words if (kind := _kind(word)) is not None}
    if len(kinds) > 1 and "test" in kinds:
        kinds = {"test"}  # `New tests:`, `Create test:`: test files, as `Test:` names them
    if len(kinds) == 1 and len(words) <= 6:
        kind = kinds.pop()
        found = _paths(kind, rest, code)
        if not found.all_paths():
            return _unread(text)
        others = [word for word in _WORDS.findall(bare) if _kind(word.lower()) != kind]
        qualifier = ", ".join(part for part in (" ".join(others), *qualifiers) if part)
        if _UNCOMMITTED.search(qualifier):
            said = f"{label!r} ({', '.join(found.all_paths())}) names no file of the repository"
            return FileProse(keep=True, warning=f"{said}: no file expected, kept in the description")
        _merge(files, found)
        if not qualifier:
            return FileProse(keep=False)  # `Rewrite: \`a.md\``: a plain entry
        read = f"{_KIND_NAMES[kind]} {', '.join(found.all_paths())}"
        warning = f"{label!r} read as {read}; the qualifier ({qualifier!r}) is kept in the description"
        return FileProse(keep=True, warning=warning)
    if not kinds and not qualifiers and _is_area(words) and (found := _paths("modify", rest, code)).all_paths():
        _merge(files, found)
        return FileProse(keep=False)  # `Backend: \`app/api.py\``: an area, then the paths the task changes there
    return _unread(text)


def _kind(word: str) -> str | None:
    return fields.FILE_KINDS.get(word) or _MORE_KINDS.get(word)


def _is_area(words: list[str]) -> bool:
    """Whether a label's (lowercased) words name an area of the code: `backend`, `web app`, `ci config`."""
    return 0 < len(words) <= 3 and set(words) <= _AREA_WORDS and not set(words) <= _AREA_NAMES


def _paths(kind: str, rest: str, code: tuple[str, ...]) -> ExpectedFiles:
    """The paths `rest` starts with as `kind` entries (read by fields.add_file_entry); none when one holds a space:
    with a label this loose, that is a command (`Test command: pytest tests/`)."""
    found = ExpectedFiles()
    if not fields.add_file_entry(found, f"{kind}:{rest}", code) or any(" " in p for p in found.all_paths()):
        return ExpectedFiles()
    return found


def _merge(files: ExpectedFiles, found: ExpectedFiles) -> None:
    for kind in ("create", "modify", "delete", "test"):
        for path in getattr(found, kind):
            fields.add_path(files, kind, path)
    files.modify_ranges.update(found.modify_ranges)


def _unread(text: str) -> FileProse:
    said = text.strip()
    return FileProse(keep=True, warning=f"{said!r} in the Files list is not read as a file: kept in the description")
