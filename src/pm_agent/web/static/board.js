// Keeps the board current without a reload: follows the run's event stream and, after a burst of events,
// reads the board's JSON and moves, updates or adds cards. Text goes in through textContent only.
(function () {
  "use strict";
  const header = document.getElementById("board-header");
  if (!header) return;
  const run = header.dataset.run;
  const live = document.getElementById("live");
  let pending = null;

  function fmtDuration(s) {
    s = Math.floor(s);
    return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  }
  function usd(v) { return "$" + v.toFixed(4); }
  function setText(root, sel, text) { const el = root.querySelector(sel); if (el) el.textContent = text; }

  function makeCard(card) {
    const a = document.createElement("a");
    a.className = "card tier-" + card.tier;
    a.id = "card-" + card.task_id;
    a.dataset.task = card.task_id;
    a.href = "/runs/" + encodeURIComponent(run) + "/tasks/" + encodeURIComponent(card.task_id);
    const top = document.createElement("div"); top.className = "card-top";
    for (const cls of ["tid", "tier"]) { const s = document.createElement("span"); s.className = cls; top.appendChild(s); }
    const title = document.createElement("div"); title.className = "title";
    const meta = document.createElement("div"); meta.className = "meta";
    for (const cls of ["state", "attempt", "slot", "since", "cost"]) {
      const s = document.createElement("span"); s.className = cls; meta.appendChild(s);
    }
    a.append(top, title, meta);
    return a;
  }

  function render(board) {
    const h = board.header;
    setText(document, "#h-status", h.status);
    setText(document, "#h-slots", h.slots_in_use + "/" + h.max_slots);
    setText(document, "#h-done", h.done + "/" + h.total);
    setText(document, "#h-cost", usd(h.cost_usd));
    setText(document, "#h-esc", String(h.open_escalations));
    for (const column of board.columns) {
      const target = document.getElementById("col-" + column.group);
      if (!target) continue;
      for (const card of column.cards) {
        let el = document.getElementById("card-" + card.task_id);
        if (!el) el = makeCard(card);
        if (el.parentElement !== target) {
          target.appendChild(el);
          el.classList.add("moved");
          setTimeout(() => el.classList.remove("moved"), 1500);
        }
        el.dataset.state = card.state;
        setText(el, ".tid", "task-" + card.task_id);
        setText(el, ".tier", card.tier);
        setText(el, ".title", card.title);
        setText(el, ".state", card.state);
        setText(el, ".attempt", "attempt " + card.attempt);
        setText(el, ".slot", card.slot ? "slot " + card.slot : "");
        const since = el.querySelector(".since");
        if (since) { since.dataset.s = String(card.in_state_s); since.textContent = fmtDuration(card.in_state_s); }
        setText(el, ".cost", usd(card.cost_usd));
      }
    }
    // Counted after every card moved: a card leaving a column is only seen once its new column is handled.
    for (const section of document.querySelectorAll("section.column")) {
      const n = section.querySelector("h2 .n");
      const cards = section.querySelector(".cards");
      if (n && cards) n.textContent = String(cards.children.length);
    }
  }

  async function refresh() {
    pending = null;
    try {
      const res = await fetch("/api/runs/" + encodeURIComponent(run) + "/board", { credentials: "same-origin" });
      if (res.ok) render(await res.json());
    } catch (e) { /* the server is restarting: the stream reconnects and asks again */ }
  }
  function soon() { if (pending === null) pending = setTimeout(refresh, 250); }

  // Time in state ticks between updates, except where nothing moves any more.
  setInterval(function () {
    for (const since of document.querySelectorAll(".cards .since")) {
      const group = since.closest(".column").dataset.group;
      if (group === "done" || group === "failed") continue;
      since.dataset.s = String(Number(since.dataset.s || 0) + 1);
      since.textContent = fmtDuration(Number(since.dataset.s));
    }
  }, 1000);

  // The browser reconnects by itself and sends the last id it saw (Last-Event-ID): nothing is missed.
  const source = new EventSource("/api/runs/" + encodeURIComponent(run) + "/events?after=" + header.dataset.lastEvent);
  source.onopen = function () { live.textContent = "live"; live.classList.add("on"); soon(); };
  source.onerror = function () { live.textContent = "reconnecting…"; live.classList.remove("on"); };
  source.onmessage = function () { soon(); };
})();
