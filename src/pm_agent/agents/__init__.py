"""Agent runtime: run agent CLIs as child processes, watch them, route on their signals.

- `base`: the `AgentRunner` seam, `AgentSession`, `AgentEvent`, `Outcome`, `SessionLimits`
- `claude`: Claude Code (`claude -p ... --output-format stream-json`); `command`: any CLI from a template
- `process`: spawning in a process group with a parent-death signal, bounded NDJSON reading
- `monitor`: records every line, kills stuck sessions, ends sessions after routing signals, crash and
  VCS-tampering verdicts, what the confinement refused and what got out of the worktree anyway
- `confine`: the Claude Code settings that keep a session in its worktree; `guard_hook`: their
  PreToolUse hook (a standalone script, standard library only)
- `session`: one session end to end (`start_session`, `resume_session`) and the routing prompts
- `slots`: N concurrent sessions, each task in its own git worktree
- `factory`: the runner named by the configuration

The exports load on first use (`pm_agent._lazy`): importing `pm_agent.agents.base` does not import the
slot pool, the command runner and the rest of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from pm_agent.agents.base import (
        AgentEvent,
        AgentRunner,
        AgentSession,
        Confinement,
        Denial,
        EventKind,
        Outcome,
        SessionLimits,
        SessionRequest,
        StopReason,
    )
    from pm_agent.agents.claude import ClaudeRunner, bundled_claude, find_claude
    from pm_agent.agents.command import CommandRunner
    from pm_agent.agents.factory import RUNNERS, limits_from_config, runner_from_config
    from pm_agent.agents.monitor import MonitorResult, SessionMonitor
    from pm_agent.agents.session import (
        AgentHost,
        SessionResult,
        answer_prompt,
        continuation_prompt,
        followup_done_prompt,
        resume_session,
        start_session,
    )
    from pm_agent.agents.slots import Slot, SlotPool, SlotRun, Worktree, Worktrees

__all__ = [
    "RUNNERS",
    "AgentEvent",
    "AgentHost",
    "AgentRunner",
    "AgentSession",
    "ClaudeRunner",
    "CommandRunner",
    "Confinement",
    "Denial",
    "EventKind",
    "MonitorResult",
    "Outcome",
    "SessionLimits",
    "SessionMonitor",
    "SessionRequest",
    "SessionResult",
    "Slot",
    "SlotPool",
    "SlotRun",
    "StopReason",
    "Worktree",
    "Worktrees",
    "answer_prompt",
    "bundled_claude",
    "continuation_prompt",
    "find_claude",
    "followup_done_prompt",
    "limits_from_config",
    "resume_session",
    "runner_from_config",
    "start_session",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.agents.base": (
            "AgentEvent AgentRunner AgentSession Confinement Denial EventKind Outcome SessionLimits "
            "SessionRequest StopReason"
        ),
        "pm_agent.agents.claude": "ClaudeRunner bundled_claude find_claude",
        "pm_agent.agents.command": "CommandRunner",
        "pm_agent.agents.factory": "RUNNERS limits_from_config runner_from_config",
        "pm_agent.agents.monitor": "MonitorResult SessionMonitor",
        "pm_agent.agents.session": (
            "AgentHost SessionResult answer_prompt continuation_prompt followup_done_prompt resume_session "
            "start_session"
        ),
        "pm_agent.agents.slots": "Slot SlotPool SlotRun Worktree Worktrees",
    },
)
