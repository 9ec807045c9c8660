// Keeps the inbox current: an escalation answered elsewhere (the terminal, `pm-agent answer`, another page)
// leaves it; a new one reloads the page, unless an answer is being typed.
(function () {
  "use strict";
  const note = document.getElementById("inbox-live");
  async function look() {
    let open;
    try {
      const res = await fetch("/api/escalations", { credentials: "same-origin" });
      if (!res.ok) return;
      open = new Set((await res.json()).map(function (e) { return "esc-" + e.id; }));
    } catch (e) { return; }  // the server is restarting: look again later
    const shown = new Set();
    for (const article of document.querySelectorAll("article.escalation")) {
      shown.add(article.id);
      if (!open.has(article.id)) {
        article.remove();
        if (note) note.textContent = "An escalation was answered elsewhere.";
      }
    }
    const typing = Array.from(document.querySelectorAll("textarea")).some(function (t) { return t.value.trim(); });
    const added = Array.from(open).some(function (id) { return !shown.has(id); });
    if (added && !typing) location.reload();
  }
  setInterval(look, 2000);
})();
