"""Listeners: the terminal, the tests and (later) the web page subscribe to the same run events."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from rich.console import Console


class Listener(Protocol):
    """Receives every notable thing the PM loop does, as it happens."""

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """One event: a short kind (`task.moved`, `session.started`, ...) and a line for people."""


_STYLES = {
    "task": "cyan",
    "session": "blue",
    "gate": "yellow",
    "commit": "green",
    "escalation": "bold magenta",
    "report": "bold",
    "run": "bold green",
    "slots": "dim",
    "final": "bold cyan",
}


@dataclass
class ConsoleListener:
    """Prints each event as one timestamped line; multi-line reports as blocks."""

    console: Console = field(default_factory=lambda: Console(soft_wrap=True, highlight=False))
    started: float = field(default_factory=time.monotonic)

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Print the event."""
        elapsed = time.monotonic() - self.started
        style = _STYLES.get(kind.split(".", 1)[0], "")
        stamp = f"[dim]{int(elapsed // 60):02d}:{elapsed % 60:04.1f}[/]"
        if "\n" in message:
            self.console.print(f"{stamp} [{style}]{kind}[/]" if style else f"{stamp} {kind}")
            self.console.print(message, markup=False)
        elif style:
            self.console.print(f"{stamp} [{style}]{kind:<20}[/] ", end="")
            self.console.print(message, markup=False)
        else:
            self.console.print(f"{stamp} {kind:<20} ", end="")
            self.console.print(message, markup=False)


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
