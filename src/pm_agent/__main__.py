"""`python -m pm_agent`: the same command line as `pm-agent`."""

from pm_agent.cli import main

main()
