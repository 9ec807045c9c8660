"""Answers in: new comments on the run's issues become answers to its open escalations.

A reply on a task's issue answers that task's open escalation (the newest, if several); `/answer <id> <text>`
on the run issue answers escalation <id>. Only answerers count (the configured logins, or else anyone with
write access): any other comment on the run's issues is recorded as `github.comment_ignored` and nothing else
happens, since an answer is an instruction to agents. pm-agent's own comments (they carry its marker) are
skipped. The answer is stored by `Store.answer_escalation`, the path `pm-agent answer` and the terminal take,
so it is taken once whichever channel is first; a later GitHub answer is refused and told so on GitHub.

Where the poll stands (the `since` of the last comment read and the ids read at that instant) is bridge state
in the store, so a restarted bridge neither loses nor re-reads a comment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, timedelta

from pm_agent.errors import StoreError
from pm_agent.github import render
from pm_agent.github import rows as R
from pm_agent.github.api import Comment, GitHubApi
from pm_agent.store import EscalationStatus, SqliteStore
from pm_agent.store.outbox import Outbox

_ANSWER = re.compile(r"^\s*/answer\s+#?(\d+)\s+(.+)$", re.DOTALL)

IGNORED = "github.comment_ignored"
"""A comment by someone who is not an answerer: recorded, never acted on."""
UNUSED = "github.comment_unused"
"""An answerer's comment that answers nothing (no open escalation, no `/answer` on the run issue)."""
TAKEN = "github.answer"
"""An answer taken from a GitHub comment."""
REFUSED = "github.answer_refused"
"""An answer that came after the escalation was answered elsewhere."""


@dataclass
class AnswerPoller:
    """Reads new comments of one run's issues and answers escalations with the answerers' ones."""

    api: GitHubApi
    store: SqliteStore
    run_id: str
    answerers: Sequence[str] = ()
    outbox: Outbox = field(init=False)
    _can_answer: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.store.engine, self.store.now)

    @property
    def _state_key(self) -> str:
        return f"poll:{self.run_id}"

    def poll(self) -> int:
        """One conditional request for new comments; how many answers were taken."""
        state = self.outbox.get_state(self._state_key) or {}
        since, seen = state.get("since") or self._run_start(), set(state.get("seen", []))
        comments = self.api.new_comments(since)
        if not comments:
            return 0
        issues = self._issues()
        taken = 0
        for comment in sorted(comments, key=lambda c: (c.created_at, c.id)):
            if comment.id in seen or (since is not None and comment.created_at < since):
                continue
            taken += self._handle(comment, issues)
            # Saved after each comment: a crash re-reads at most the comment in hand, whose answer is taken once.
            if comment.created_at != since:
                since, seen = comment.created_at, set()
            seen.add(comment.id)
            self.outbox.set_state(self._state_key, {"since": since, "seen": sorted(seen)})
        return taken

    def _run_start(self) -> str:
        """No comment before the run can answer it: the first poll starts there (a minute early, for clock skew)."""
        start = self.store.get_run(self.run_id).created_at - timedelta(minutes=1)
        return start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _issues(self) -> dict[int, str | None]:
        """Issue number -> task id (None: the run issue), for the issues this run created or took."""
        prefix = f"issue:{self.run_id}:"
        found: dict[int, str | None] = {int(n): key[len(prefix) :] for key, n in self.outbox.states(prefix).items()}
        run_issue = self.outbox.get_state(R.run_issue_key(self.run_id))
        if run_issue is not None:
            found[int(run_issue)] = None
        return found

    def _is_answerer(self, login: str) -> bool:
        if self.answerers:
            return login in self.answerers
        if login not in self._can_answer:
            self._can_answer[login] = self.api.can_answer(login)
        return self._can_answer[login]

    def _record(self, kind: str, comment: Comment, task_id: str | None, **extra: object) -> None:
        payload = {"comment_id": comment.id, "author": comment.author, "issue": comment.issue_number,
                   "url": comment.html_url, **extra}  # fmt: skip
        self.store.append_event(self.run_id, kind, payload, task_id=task_id)

    def _handle(self, comment: Comment, issues: dict[int, str | None]) -> int:
        if comment.issue_number not in issues or render.is_ours(comment.body):
            return 0  # not this run's issue, or pm-agent's own comment
        task_id = issues[comment.issue_number]
        if not self._is_answerer(comment.author):
            self._record(IGNORED, comment, task_id)
            return 0
        target, text = self._target(comment, task_id)
        if target is None:
            self._record(UNUSED, comment, task_id)
            return 0
        try:
            self.store.answer_escalation(target, text)
        except StoreError as exc:  # answered meanwhile through another channel: the first answer stands
            self._record(REFUSED, comment, task_id, escalation_id=target, error=str(exc))
            key = f"refused:{self.run_id}:{comment.id}"
            payload = {"issue": comment.issue_number, "escalation_id": target, "author": comment.author}
            self.outbox.add(self.run_id, [R.Row(key, R.REFUSED, payload)])
            return 0
        self._record(TAKEN, comment, task_id, escalation_id=target)
        return 1

    def _target(self, comment: Comment, task_id: str | None) -> tuple[int | None, str]:
        """The escalation the comment answers, and the answer's text."""
        match = _ANSWER.match(comment.body)
        if match is not None:
            esc_id, text = int(match.group(1)), match.group(2).strip()
            try:
                esc = self.store.get_escalation(esc_id)
            except StoreError:
                return None, text
            return (esc_id if esc.run_id == self.run_id else None), text
        if task_id is None:
            return None, comment.body  # on the run issue only `/answer` answers
        asked = [e for e in self.store.list_escalations(self.run_id) if e.task_id == task_id]
        open_ones = [e for e in asked if e.status is EscalationStatus.OPEN]
        # None open but one asked before: the reply came late, and is refused (and told so) as a duplicate.
        chosen = open_ones[-1] if open_ones else (asked[-1] if asked else None)
        return (chosen.id if chosen else None), comment.body.strip()
