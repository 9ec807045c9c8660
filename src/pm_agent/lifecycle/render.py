"""Readable views of a workflow, for `pm-agent workflow show`."""

from __future__ import annotations

from pm_agent.lifecycle.workflow import Workflow


def workflow_rows(wf: Workflow) -> list[tuple[str, str, str]]:
    """One (state, owner, next states) row per state, in the workflow's order.

    The owner column reads "(waiting)" for waiting states and "(terminal)" for
    terminal ones; the next column lists the states comma-separated, or "-".
    """
    rows: list[tuple[str, str, str]] = []
    for state, spec in wf.states.items():
        owner = spec.owner or ("(terminal)" if spec.terminal else "(waiting)" if spec.waiting else "(none)")
        following = ", ".join(s.value for s in wf.next_states(state)) or "-"
        rows.append((state.value, owner, following))
    return rows


def describe_workflow(wf: Workflow, *, width: int = 100) -> str:
    """A plain-text table of `wf`: state, owner, next states (wrapped to `width` columns)."""
    rows = workflow_rows(wf)
    header = ("state", "owner", "next states")
    state_w = max(len(r[0]) for r in [header, *rows])
    owner_w = max(len(r[1]) for r in [header, *rows])
    indent = state_w + owner_w + 4
    room = max(width - indent, 20)
    lines = [f"{header[0]:<{state_w}}  {header[1]:<{owner_w}}  {header[2]}", "-" * min(width, indent + room)]
    for state, owner, following in rows:
        chunks = _wrap(following.split(", "), room)
        lines.append(f"{state:<{state_w}}  {owner:<{owner_w}}  {chunks[0]}")
        lines.extend(" " * indent + chunk for chunk in chunks[1:])
    return "\n".join(lines)


def _wrap(items: list[str], room: int) -> list[str]:
    """Comma-joined `items` split into lines of at most `room` characters (a long item gets its own line)."""
    out: list[str] = []
    line = ""
    for item in items:
        candidate = f"{line}, {item}" if line else item
        if line and len(candidate) + 1 > room:
            out.append(line + ",")
            line = item
        else:
            line = candidate
    out.append(line)
    return out
