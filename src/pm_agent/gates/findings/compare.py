"""The ratchet: compare a command's current run with its baseline run, and render findings for evidence.

Rules, in order: a current exit 0 passes (`clean`); an output that cannot be parsed is judged by its
exit code, which must equal the baseline's non-zero one (`exit-status`); otherwise the finding sets are
compared as multisets of keys (`findings`) and any new finding fails. Findings of one key are paired
on the same line first, then in order, so a duplicate added below old ones is the one reported new.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict, deque
from collections.abc import Sequence

from pm_agent.gates.findings._common import Raw
from pm_agent.gates.findings.models import MAX_FINDINGS, Finding, Ratchet, finding_key
from pm_agent.gates.findings.select import ParseResult, run_parsers, to_finding


def _key(raw: Raw) -> str:
    return finding_key(raw.tool, raw.path, raw.code, raw.message, raw.test_id)


def _strip_common_dir(parses: Sequence[ParseResult]) -> None:
    """Without a root, make absolute paths relative to the deepest directory they all share."""
    dirs = {posixpath.dirname(r.path) for p in parses for r in p.raws if r.path and r.path.startswith("/")}
    if not dirs:
        return
    common = posixpath.commonpath(sorted(dirs))
    if common == "/":
        return
    prefix = common + "/"
    for parse in parses:
        parse.raws = [
            r._replace(
                path=r.path[len(prefix) :] if r.path and r.path.startswith(prefix) else r.path,
                message=r.message.replace(prefix, ""),
            )
            for r in parse.raws
        ]


def _match(base: Sequence[Raw], cur: Sequence[Raw]) -> tuple[list[Raw], list[Raw], list[Raw]]:
    """(new, preexisting, fixed): multiset difference by key, same-line pairs first, then in order."""
    base_by_key: dict[str, list[int]] = defaultdict(list)
    for i, raw in enumerate(base):
        base_by_key[_key(raw)].append(i)
    cur_by_key: dict[str, list[int]] = defaultdict(list)
    for i, raw in enumerate(cur):
        cur_by_key[_key(raw)].append(i)
    base_taken = [False] * len(base)
    cur_matched = [False] * len(cur)
    for key, cur_ids in cur_by_key.items():
        base_ids = base_by_key.get(key)
        if not base_ids:
            continue
        by_line: dict[int | None, deque[int]] = defaultdict(deque)
        for b in base_ids:
            by_line[base[b].line].append(b)
        for c in cur_ids:
            same = by_line.get(cur[c].line)
            if same:
                base_taken[same.popleft()] = cur_matched[c] = True
        rest_base = deque(b for b in base_ids if not base_taken[b])
        for c in cur_ids:
            if not cur_matched[c] and rest_base:
                base_taken[rest_base.popleft()] = cur_matched[c] = True
    new = [r for i, r in enumerate(cur) if not cur_matched[i]]
    pre = [r for i, r in enumerate(cur) if cur_matched[i]]
    fixed = [r for i, r in enumerate(base) if not base_taken[i]]
    return new, pre, fixed


def _models(raws: Sequence[Raw]) -> tuple[Finding, ...]:
    return tuple(to_finding(r) for r in raws[:MAX_FINDINGS])


def _exit_status(why: str, baseline_exit: int, current_exit: int, parser: str | None) -> Ratchet:
    passed = baseline_exit != 0 and current_exit == baseline_exit
    verdict = "no worse than the baseline" if passed else "worse than the baseline"
    explanation = f"rule exit-status ({why}): exit {current_exit}, baseline exit {baseline_exit}: {verdict}"
    return Ratchet(passed=passed, rule="exit-status", explanation=explanation, parser=parser)


def ratchet(
    command: str,
    baseline_output: str,
    baseline_exit: int,
    current_output: str,
    current_exit: int,
    *,
    root: str | None = None,
    baseline_root: str | None = None,
) -> Ratchet:
    """Compare a command's current run with its baseline run.

    `root` is the directory the current run happened in, `baseline_root` the baseline's (defaults to
    `root`); without either, absolute paths are made relative to the directory they all share.
    """
    base = run_parsers(command, baseline_output, baseline_exit, baseline_root or root)
    cur = run_parsers(command, current_output, current_exit, root)
    if root is None and baseline_root is None:
        _strip_common_dir((base, cur))
    if current_exit == 0:
        fixed = base.raws if baseline_exit != 0 and base.parser is not None else []
        explanation = "rule clean: exit 0"
        if baseline_exit != 0 and base.parser is not None:
            explanation += f" (baseline exit {baseline_exit}; {len(fixed)} baseline findings fixed)"
        elif baseline_exit != 0:
            explanation += f" (baseline exit {baseline_exit}, its output not parsed)"
        return Ratchet(
            passed=True,
            rule="clean",
            fixed=_models(fixed),
            fixed_count=len(fixed),
            explanation=explanation,
            parser=cur.parser,
        )
    if cur.parser is None:
        return _exit_status(f"current output not parsed: {cur.note}", baseline_exit, current_exit, None)
    if cur.capped or base.capped:
        return _exit_status("too many findings to compare", baseline_exit, current_exit, cur.parser)
    if baseline_exit != 0 and base.parser is None:
        return _exit_status(f"baseline output not parsed: {base.note}", baseline_exit, current_exit, cur.parser)
    # A clean baseline (exit 0) has no findings to keep: everything the current run reports is new.
    new, pre, fixed = _match(base.raws if baseline_exit != 0 else [], cur.raws)
    counts = f"{len(new)} new, {len(pre)} pre-existing, {len(fixed)} fixed"
    read_as = cur.parser if base.parser in (None, cur.parser) else f"{cur.parser}; baseline read as {base.parser}"
    verdict = "fails on the new findings" if new else "nothing new"
    explanation = f"rule findings ({read_as}): {counts}; exit {current_exit}, baseline exit {baseline_exit}: {verdict}"
    return Ratchet(
        passed=not new,
        rule="findings",
        new=_models(new),
        preexisting=_models(pre),
        fixed=_models(fixed),
        new_count=len(new),
        preexisting_count=len(pre),
        fixed_count=len(fixed),
        explanation=explanation,
        parser=cur.parser,
    )


def render_finding(finding: Finding) -> str:
    """One line: `path:line: code message`, or `FAILED test-id - message` for a test."""
    if finding.test_id is not None:
        head = f"{finding.code} {finding.test_id}" if finding.code else finding.test_id
        return f"{head} - {finding.message}" if finding.message else head
    where = finding.path or ""
    if where and finding.line is not None:
        where += f":{finding.line}"
    text = f"{finding.code} {finding.message}" if finding.code else finding.message
    return f"{where}: {text}" if where else text


def render_findings(findings: Sequence[Finding], limit: int = 30) -> list[str]:
    """At most `limit` lines, then "... and N more"."""
    lines = [render_finding(f) for f in findings[: max(limit, 0)]]
    if len(findings) > limit:
        lines.append(f"... and {len(findings) - max(limit, 0)} more")
    return lines


__all__ = ["ratchet", "render_finding", "render_findings"]
