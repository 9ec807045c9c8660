"""signal_back: the one MCP tool agents report through, its payload models, tokens and prompt text.

The checking of each call lives in `pm_agent.signals.desk`; the MCP wiring in `pm_agent.signals.server`
(run as `python -m pm_agent.signals.server`). Neither is imported here, and the exports below load on first
use (`pm_agent._lazy`): the server, one process per agent session, imports only what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pm_agent._lazy import lazy_exports

if TYPE_CHECKING:
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
        required_wire_fields,
        signal_payload,
        target_role_names,
        wire_fields,
    )
    from pm_agent.signals.reading import SignalReading, parse_signal, read_signal, signal_kind
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
    "SignalReading",
    "mcp_config",
    "new_token",
    "parse_signal",
    "read_signal",
    "required_wire_fields",
    "signal_instructions",
    "signal_kind",
    "signal_payload",
    "target_role_names",
    "tool_name",
    "wire_fields",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "pm_agent.signals.instructions": "signal_instructions",
        "pm_agent.signals.models": (
            "SIGNAL_KINDS SIGNAL_MODELS AnySignal CompleteSignal CriterionMapping "
            "NeedsRoleFollowupSignal NeedsUserInputSignal PartiallyCompleteSignal ReviewNote Signal "
            "SignalKind SignalPayloadError required_wire_fields signal_payload target_role_names "
            "wire_fields"
        ),
        "pm_agent.signals.reading": "SignalReading parse_signal read_signal signal_kind",
        "pm_agent.signals.tokens": "DB_ENV RUN_ENV TASK_ENV TOKEN_ENV TOOL_NAME mcp_config new_token tool_name",
    },
)
