"""Checks before any agent starts: what the repository is set up to run, and how it runs on the baseline."""
