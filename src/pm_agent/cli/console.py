"""The terminal's run listener: each event the PM loop emits, printed as one timestamped line."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

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
    _styled: bool = field(init=False, default=True)

    def __post_init__(self) -> None:
        self._styled = self.console.is_terminal

    def emit(self, kind: str, message: str, **data: Any) -> None:
        """Print the event."""
        elapsed = time.monotonic() - self.started
        stamp = f"{int(elapsed // 60):02d}:{elapsed % 60:04.1f}"
        if not self._styled:
            # Piped or logged: rich's rendering (markup, wrapping, emoji codes) costs more per line than the
            # loop's own bookkeeping and shows nothing without a terminal, so the same text goes out as written.
            head = f"{stamp} {kind}\n" if "\n" in message else f"{stamp} {kind:<20} "
            self.console.file.write(f"{head}{message}\n")
            self.console.file.flush()
            return
        style = _STYLES.get(kind.split(".", 1)[0], "")
        stamp = f"[dim]{stamp}[/]"
        if "\n" in message:
            self.console.print(f"{stamp} [{style}]{kind}[/]" if style else f"{stamp} {kind}")
            self.console.print(message, markup=False)
        elif style:
            self.console.print(f"{stamp} [{style}]{kind:<20}[/] ", end="")
            self.console.print(message, markup=False)
        else:
            self.console.print(f"{stamp} {kind:<20} ", end="")
            self.console.print(message, markup=False)
