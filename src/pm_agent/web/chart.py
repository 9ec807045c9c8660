"""A horizontal bar chart as plain numbers for an inline SVG (no chart library, no script)."""

from __future__ import annotations

from dataclasses import dataclass

from pm_agent.web.models import CostLine

WIDTH = 360  # the longest bar, in SVG units
ROW = 22


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its length and where it sits."""

    label: str
    value: str
    width: float
    y: int


@dataclass(frozen=True)
class Chart:
    """The bars and the SVG's height."""

    bars: list[Bar]
    height: int


def bar_chart(lines: list[CostLine]) -> Chart:
    """Cost per line, bars scaled to the largest (tokens when nothing cost money, as with a local model)."""
    by_cost = any(line.cost_usd > 0 for line in lines)

    def value(line: CostLine) -> float:
        return line.cost_usd if by_cost else float(line.input_tokens + line.output_tokens)

    top = max((value(line) for line in lines), default=0.0) or 1.0
    bars = [
        Bar(
            label=line.key,
            value=f"${line.cost_usd:.4f}" if by_cost else f"{line.input_tokens + line.output_tokens} tokens",
            width=round(WIDTH * value(line) / top, 1),
            y=i * ROW,
        )
        for i, line in enumerate(lines)
    ]
    return Chart(bars=bars, height=max(ROW, len(bars) * ROW))
