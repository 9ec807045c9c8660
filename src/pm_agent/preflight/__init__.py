"""Preflight: what pm-agent can run in a repository before a run starts (`detect` for pm-agent init)."""
