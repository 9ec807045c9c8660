"""The pm-agent command line: parse arguments, call the library, print."""

from __future__ import annotations

import typer

app = typer.Typer(help="pm-agent: an autonomous project manager for AI coding agents.", no_args_is_help=True)


def main() -> None:
    """Console-script entry point."""
    app()
