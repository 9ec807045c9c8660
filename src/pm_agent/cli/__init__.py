"""The pm-agent command line: parse arguments, call the library, print.

One module per command group: `views` (plan, status, reports, log), `workflow` (check, show), `setup`
(init), `runs` (run, resume, escalations, answer, demo); `commands` registers them on the Typer app of
`app` (with the shared options and error handling). `console` holds the listener that prints a run's
events: nothing outside this package prints.
"""

from __future__ import annotations


def main() -> None:
    """Console-script entry point (`pm-agent`, `python -m pm_agent`)."""
    import sys

    from pm_agent.cli import fastpath

    code = fastpath.run(sys.argv[1:])  # plain `status` and `log` skip building the Typer app
    if code is not None:
        raise SystemExit(code)
    # Imported here so that `import pm_agent.cli` stays cheap and no package module imports it back.
    from pm_agent.cli.commands import app

    app()
