"""The web dashboard (`pm-agent web`, `pm-agent run --web`): a run's board, task evidence, inbox and reports.

Needs the `web` extra (FastAPI, Jinja2, uvicorn). `app.create_app(repo_dir, token)` builds the app;
`server` serves it in the foreground or in a thread beside a run.
"""
