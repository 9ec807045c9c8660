"""Secrets check: detect-secrets (default plugins and filters) on the lines the change adds.

Each changed file is scanned whole (so the plugins see its type and context); only findings on added
lines are reported, as type and `file:line`. The secret itself is never put in evidence or details, and
each value found is remembered (`pm_agent.redaction.remember_secret`), so a transcript or output that
shows it later is stored redacted. detect-secrets keeps global settings, so scans are serialised by a lock,
and they are configured once for the process (`_configure`).
"""

from __future__ import annotations

import threading
from pathlib import Path

from pm_agent.gates.common import changes_for, is_ignored_path
from pm_agent.gates.models import GateId, GateResult
from pm_agent.redaction import remember_secret
from pm_agent.vcs import ChangeSet

_LOCK = threading.Lock()
_configured = False


def _configure() -> None:
    """detect-secrets' default plugins and filters, set once (call with _LOCK held).

    Its `default_settings()` sets the same configuration, and on entry and on exit clears every plugin and filter
    cache and re-imports their modules: about 3.5 ms of CPU for each file scanned (the loop benchmark's profile),
    for a configuration that never changes here. Nothing else in pm-agent configures detect-secrets' global
    settings: redaction uses its plugin classes directly."""
    global _configured
    if _configured:
        return
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline

    cache_bust()  # what default_settings() does first: plugins and filters are looked up afresh
    kinds: dict[str, type] = get_mapping_from_secret_type_to_class()
    plugins = [{"name": kind.__name__} for kind in kinds.values()]
    configure_settings_from_baseline({"plugins_used": plugins})
    _configured = True


def prepare() -> None:
    """Import and configure detect-secrets ahead of the first scan (the loop does it in the background while the
    first agents work): its imports, requests' among them, take ~90 ms of CPU, which the first tasks' gates
    would otherwise spend between their signal and the next dispatch."""
    from detect_secrets.core.scan import scan_file  # noqa: F401

    with _LOCK:
        _configure()


def find_secrets(file: Path, lines: set[int]) -> list[tuple[int, str]]:
    """(line, secret type) for detect-secrets findings in `file` on one of `lines`, sorted."""
    from detect_secrets.core.scan import scan_file  # imported on use: it pulls in requests

    found: set[tuple[int, str]] = set()
    with _LOCK:
        _configure()
        for secret in scan_file(str(file)):
            if secret.line_number in lines:
                found.add((secret.line_number, str(secret.type)))
                if secret.secret_value:
                    remember_secret(secret.secret_value, str(secret.type))
    return sorted(found)


def check_secrets(worktree: Path | str, base: str, *, changes: ChangeSet | None = None) -> GateResult:
    """Potential secrets on added lines, reported as `file:line: type` (never the value)."""
    root = Path(worktree)
    change = changes_for(root, base, changes)
    findings: list[dict[str, str | int]] = []
    scanned = 0
    for path, added in sorted(change.added.items()):
        file = root / path
        if is_ignored_path(path) or not added or not file.is_file():
            continue
        scanned += 1
        for line, kind in find_secrets(file, {n for n, _ in added}):
            findings.append({"path": path, "line": line, "type": kind})
    if findings:
        by_place: dict[str, list[str]] = {}
        for f in findings:
            by_place.setdefault(f"{f['path']}:{f['line']}", []).append(str(f["type"]))
        lines = [f"{len(by_place)} added line(s) look like they hold a secret:"]
        lines += [f"  {place}: {', '.join(kinds)}" for place, kinds in by_place.items()]
        lines.append("  move secrets to the environment or a secret store; never commit them")
        evidence = "\n".join(lines)
    else:
        evidence = f"no secrets found on added lines ({scanned} file(s) scanned)"
    return GateResult(
        gate=GateId.SECRETS,
        passed=not findings,
        evidence=evidence,
        details={"findings": findings, "files_scanned": scanned},
    )


__all__ = ["check_secrets", "find_secrets"]
