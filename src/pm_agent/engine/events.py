"""Listeners: the terminal, the tests and (later) the web page subscribe to the same run events.

The library prints nothing: the terminal's listener is `pm_agent.cli.console.ConsoleListener`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class Listener(Protocol):
    """Receives every notable thing the PM loop does, as it happens."""

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """One event: a short kind (`task.moved`, `session.started`, ...) and a line for people."""


@dataclass
class RecordingListener:
    """Keeps every event in memory (tests, the demo's summary)."""

    events: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Remember the event."""
        self.events.append((kind, message, data))

    def kinds(self) -> list[str]:
        """The kinds in order."""
        return [kind for kind, _, _ in self.events]


@dataclass
class Fanout:
    """Sends each event to several listeners."""

    listeners: list[Listener]

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Forward to every listener."""
        for listener in self.listeners:
            listener.emit(kind, message, **data)
