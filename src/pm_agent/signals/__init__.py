"""signal_back: the one MCP tool agents report through, its payload models, tokens and prompt text.

The MCP server itself lives in `pm_agent.signals.server` (run as `python -m pm_agent.signals.server`);
it is not imported here, so importing the models does not pull in the `mcp` SDK.
"""

from __future__ import annotations

from pm_agent.signals.instructions import signal_instructions
from pm_agent.signals.models import (
    SIGNAL_KINDS,
    SIGNAL_MODELS,
    AnySignal,
    CompleteSignal,
    CriterionMapping,
    NeedsRoleFollowupSignal,
    NeedsUserInputSignal,
    PartiallyCompleteSignal,
    ReviewNote,
    Signal,
    SignalKind,
    SignalPayloadError,
    parse_signal,
    required_wire_fields,
    signal_payload,
    target_role_names,
    wire_fields,
)
from pm_agent.signals.tokens import (
    DB_ENV,
    RUN_ENV,
    TASK_ENV,
    TOKEN_ENV,
    TOOL_NAME,
    mcp_config,
    new_token,
    tool_name,
)

__all__ = [
    "DB_ENV",
    "RUN_ENV",
    "SIGNAL_KINDS",
    "SIGNAL_MODELS",
    "TASK_ENV",
    "TOKEN_ENV",
    "TOOL_NAME",
    "AnySignal",
    "CompleteSignal",
    "CriterionMapping",
    "NeedsRoleFollowupSignal",
    "NeedsUserInputSignal",
    "PartiallyCompleteSignal",
    "ReviewNote",
    "Signal",
    "SignalKind",
    "SignalPayloadError",
    "mcp_config",
    "new_token",
    "parse_signal",
    "required_wire_fields",
    "signal_instructions",
    "signal_payload",
    "target_role_names",
    "tool_name",
    "wire_fields",
]
