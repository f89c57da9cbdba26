// The dashboard: reads the API every few seconds, draws the runs, what
// needs you, the selected run's plan, the charts and the latest report,
// and sends the same verbs the CLI does. The token comes once from the
// URL (#token=..., as `horizon web` prints it) or the login form, and is
// kept in localStorage.
"use strict";

const TOKEN_KEY = "horizon.token";
const EVERY_MS = 4000;
let selected = null; // the run whose plan is shown
let offline = false;

(function takeToken() {
  const m = location.hash.match(/token=([0-9a-fA-F]+)/);
  if (m) {
    localStorage.setItem(TOKEN_KEY, m[1]);
    history.replaceState(null, "", location.pathname + location.search);
  }
})();

// A run's page is #run=<id>: it can be bookmarked and shared.
function hashRun() {
  const m = location.hash.match(/run=([A-Za-z0-9._-]+)/);
  return m ? m[1] : null;
}
selected = hashRun();
window.addEventListener("hashchange", () => { const id = hashRun(); if (id && id !== selected) select(id); });

function token() { return localStorage.getItem(TOKEN_KEY) || ""; }

async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (token()) headers["Authorization"] = "Bearer " + token();
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch("/api/v1" + path, {
    method: opts.method || "GET", headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  offline = res.headers.get("X-Horizon-Offline") === "1";
  if (res.status === 401) {
    document.getElementById("login").hidden = false;
    throw new Error("the token is missing or wrong");
  }
  const type = res.headers.get("Content-Type") || "";
  const body = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) throw new Error((body && body.error) || res.statusText);
  return body;
}

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v);
  }
  for (const k of kids.flat()) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

function money(v) { return "$" + (v || 0).toFixed(4); }
function when(t) { return t ? new Date(t).toLocaleString() : ""; }

function say(msg, bad) {
  const s = document.getElementById("state");
  s.textContent = msg;
  s.className = bad ? "error" : "muted";
}

// send calls the API for a verb, says the answer in the header and reads
// everything again.
async function send(what, path, opts) {
  try {
    const out = await api(path, opts);
    say(what + ": done");
    return out;
  } catch (e) {
    say(what + ": " + e.message, true);
  } finally {
    refresh();
  }
}

// act sends a verb on a run.
function act(id, verb, body) {
  return send(verb + " " + id, "/runs/" + encodeURIComponent(id) + "/" + verb, { method: "POST", body: body || {} });
}

function raiseCeiling(id, day) {
  const what = day ? "the day's ceiling (all runs, per UTC day)" : "this run's ceiling";
  const v = prompt("Raise " + what + " to how many USD? (0 removes it)");
  if (v === null || v.trim() === "") return;
  const usd = Number(v);
  if (!isFinite(usd) || usd < 0) return say("ceiling: give an amount such as 5 or 12.50", true);
  return act(id, "ceiling", { usd, day: !!day });
}

function approve(id, subject) { return act(id, "approve", { subject }); }
function unblock(id, feature) {
  const note = prompt("Unblock " + (feature || id) + ": what changed? The next attempt reads it.");
  if (note && note.trim()) return act(id, "unblock", { feature, note });
}
function skip(id, feature) {
  const note = prompt("Skip " + feature + " of " + id + ": why is it left out? The handoff shows your note; a running feature is stopped first.");
  if (note === null) return;
  if (!note.trim()) return say("skip " + feature + ": a note is needed (why the feature is left out); nothing was skipped", true);
  return act(id, "skip", { feature, note });
}
function cancelRun(id) {
  if (confirm("Cancel run " + id + "? Its agent session is aborted and nothing more is committed.")) return act(id, "cancel");
}

function drawNeeds(needs) {
  const ul = document.getElementById("needs");
  document.getElementById("needs-count").textContent = needs.length;
  ul.replaceChildren();
  if (!needs.length) ul.append(el("li", { class: "muted" }, "nothing waits for you"));
  for (const n of needs) {
    const li = el("li", { "data-need": n.kind, "data-run": n.run_id },
      el("span", { class: "kind" }, n.kind), " ", el("a", { href: "#", onclick: (e) => { e.preventDefault(); select(n.run_id); } }, n.run_id), " · ", n.what, " ");
    if (n.kind === "approve" && n.supervisor) li.append(el("button", { class: "primary", "data-action": "approve-queued", "data-entry": n.subject, onclick: () => queueVerb(supRepo[n.run_id], n.subject, "approve") }, "Approve " + n.subject));
    else if (n.kind === "approve") li.append(el("button", { class: "primary", "data-action": "approve", "data-run": n.run_id, "data-subject": n.subject, onclick: () => approve(n.run_id, n.subject) }, "Approve " + (n.subject || "")));
    if (n.kind === "blocked") li.append(el("button", { "data-action": "unblock", "data-run": n.run_id, onclick: () => unblock(n.run_id, n.subject) }, "Unblock…"));
    if (n.kind === "blocked" && n.subject) li.append(" ", el("button", { "data-action": "skip", "data-run": n.run_id, "data-feature": n.subject, onclick: () => skip(n.run_id, n.subject) }, "Skip…"));
    if (n.kind === "ceiling") li.append(el("button", { "data-action": "ceiling", "data-run": n.run_id, onclick: () => raiseCeiling(n.run_id, false) }, "Raise ceiling…"), " ",
      el("button", { "data-action": "day-ceiling", "data-run": n.run_id, onclick: () => raiseCeiling(n.run_id, true) }, "Raise day ceiling…"), " ", el("code", {}, n.command));
    ul.append(li);
  }
}

function drawRuns(rows) {
  const tb = document.querySelector("#runs tbody");
  tb.replaceChildren();
  for (const r of rows) {
    const tr = el("tr", { "data-run": r.id, class: r.id === selected ? "selected" : "", onclick: () => select(r.id) },
      el("td", {}, el("code", {}, r.id)),
      el("td", { class: "status " + r.status }, r.status),
      el("td", {}, (r.repo || "").split("/").pop()),
      el("td", { class: "goal", title: r.goal }, r.goal),
      el("td", {}, when(r.started_at)),
      el("td", {}, r.ui ? el("a", { href: r.ui, target: "_blank", rel: "noopener", onclick: (e) => e.stopPropagation() }, "Temporal") : ""));
    tb.append(tr);
  }
  const first = rows.find((r) => r.ui);
  const link = document.getElementById("temporal");
  if (first) { link.href = first.ui.split("/namespaces/")[0]; link.hidden = false; }
  if (!selected && rows.length) select(rows[0].id, true);
}

// count is "1 attempt", "2 attempts".
function count(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

function attemptLine(a) {
  const bits = ["#" + a.n, a.tier, a.applier, a.outcome];
  if (a.gate) bits.push("gate " + a.gate.verdict + (a.gate.receipt_id ? " " + a.gate.receipt_id : ""));
  if (a.audit) bits.push("audit " + a.audit.verdict);
  // What the advisor's watchdog gave the worker: the notes that reached
  // it; the rest (refuted, suppressed, failed) is in the run's JSON.
  const reached = (a.advice || []).filter((r) => r.verdict === "delivered" || r.verdict === "downgraded");
  if (reached.length) bits.push("advisor " + reached.map((r) => r.delivered + ": " + r.note).join("; "));
  bits.push(money(a.usage && a.usage.cost));
  return bits.filter(Boolean).join(" · ");
}

// waits says what a run waits on, each with what lets it go on: an
// outage (nothing to do but wait, or fix the provider), an approval, a
// spend ceiling, a blocker.
function waits(v, needs) {
  const s = v.state, out = [];
  if (s.outage) out.push(el("div", { class: "outage", id: "run-outage" }, el("b", {}, "outage "), s.outage.on, " · ", s.outage.activity,
    " · since ", when(s.outage.since), " · ", count(s.outage.tries, "try"), s.outage.next ? " · next " + when(s.outage.next) : "",
    s.outage.last_error ? el("div", { class: "muted" }, s.outage.last_error) : ""));
  if (s.waiting) out.push(el("div", { id: "run-waiting" }, el("b", {}, "waiting "), s.waiting.summary || (s.waiting.kind + " " + s.waiting.subject)));
  for (const n of needs.filter((n) => n.run_id === s.run_id && !n.supervisor)) {
    if (n.kind === "ceiling") out.push(el("div", { id: "run-ceiling" }, el("b", {}, "ceiling "), n.what));
    if (n.kind === "blocked") out.push(el("div", { class: "blocked" }, el("b", {}, "blocked "), n.what));
    if (n.kind === "stalled") out.push(el("div", {}, el("b", {}, "stalled "), n.what));
  }
  return out;
}

// adviceOf is the advisor's notes that reached the worker, newest first.
function adviceOf(s) {
  const notes = [];
  const add = (feature, attempts) => {
    for (const a of (attempts || []).slice().reverse()) {
      for (const r of a.advice || []) {
        if (r.verdict === "delivered" || r.verdict === "downgraded") notes.push({ feature, severity: r.delivered, note: r.note, evidence: r.evidence });
      }
    }
  };
  if (s.plan) for (const m of s.plan.milestones) for (const f of m.features) add(f.id, f.attempts);
  else add("", s.attempts);
  return notes;
}

let lastNeeds = [];

function drawRun(v) {
  const s = v.state;
  document.getElementById("run").hidden = false;
  document.getElementById("run-id").replaceChildren(el("code", {}, s.run_id), " ",
    v.ui ? el("a", { href: v.ui, target: "_blank", rel: "noopener" }, "in the Temporal UI") : "");
  const summary = [el("div", {}, el("b", {}, "goal "), s.goal),
    el("div", {}, el("b", {}, "status "), el("span", { class: "status " + s.status, id: "run-status" }, s.status), " · ", s.phase || "", " · spent ", money(s.usage && s.usage.cost), ended(s) || v.live ? "" : " · (no worker answered)")];
  if (s.reason) summary.push(el("div", {}, el("b", {}, "reason "), s.reason));
  document.getElementById("run-summary").replaceChildren(...summary);
  document.getElementById("run-waits").replaceChildren(...waits(v, lastNeeds));
  document.getElementById("run-waits").className = "waits";
  const notes = adviceOf(s);
  document.getElementById("run-advice").replaceChildren(...(notes.length ? [el("h3", {}, "Advisor notes"),
    el("ul", {}, notes.map((n) => el("li", {}, el("b", {}, "[" + n.severity + "] "), n.feature ? n.feature + " " : "",
      n.evidence && n.evidence.file ? el("code", {}, n.evidence.file + (n.evidence.line ? ":" + n.evidence.line : "")) : "", " ", n.note)))] : []));

  const actions = document.getElementById("run-actions");
  actions.replaceChildren();
  const open = !ended(s);
  if (s.waiting) actions.append(el("button", { class: "primary", "data-action": "approve", "data-run": s.run_id, "data-subject": s.waiting.subject, onclick: () => approve(s.run_id, s.waiting.subject) }, "Approve " + s.waiting.subject));
  if (open && v.live) {
    actions.append(s.paused
      ? el("button", { "data-action": "resume", onclick: () => act(s.run_id, "resume") }, "Resume")
      : el("button", { "data-action": "pause", onclick: () => act(s.run_id, "pause") }, "Pause"));
    actions.append(el("button", { "data-action": "ceiling", onclick: () => raiseCeiling(s.run_id, false) }, "Raise ceiling…"));
    actions.append(el("button", { "data-action": "day-ceiling", onclick: () => raiseCeiling(s.run_id, true) }, "Raise day ceiling…"));
    actions.append(el("button", { class: "danger", "data-action": "cancel", onclick: () => cancelRun(s.run_id) }, "Cancel…"));
  }

  const plan = document.getElementById("plan");
  plan.replaceChildren();
  const ms = (s.plan && s.plan.milestones) || [];
  for (const m of ms) {
    const fl = el("ul");
    for (const f of m.features) {
      const cost = (f.attempts || []).reduce((t, a) => t + ((a.usage && a.usage.cost) || 0), 0);
      const li = el("li", { "data-feature": f.id },
        el("b", {}, f.id), " ", f.title, " · ", el("span", { class: "status " + f.status }, f.status),
        " · ", count((f.attempts || []).length, "attempt"), " · ", money(cost));
      if (f.blocker) li.append(" · blocker ", f.blocker.type, ": ", f.blocker.evidence, " ",
        el("button", { "data-action": "unblock", onclick: () => unblock(s.run_id, f.id) }, "Unblock…"));
      if (open && skippable(f)) li.append(" ", el("button", { "data-action": "skip", "data-feature": f.id, onclick: () => skip(s.run_id, f.id) }, "Skip…"));
      const at = el("ul", { class: "attempts" }, (f.attempts || []).map((a) => el("li", {}, attemptLine(a))));
      li.append(at);
      const review = reviewOf(f);
      if (review.length) li.append(el("ul", { class: "review", "data-review": f.id }, review.map((r) => el("li", {}, r))));
      fl.append(li);
    }
    plan.append(el("li", { "data-milestone": m.id }, el("b", {}, m.id), " ", m.title, " [", el("span", { class: "status " + m.status }, m.status), "]", fl));
  }
  if (!ms.length) {
    for (const f of v.features || []) plan.append(el("li", { "data-feature": f.feature }, f.title, " · ", f.status, " · ", count(f.attempts, "attempt"), " · ", money(f.cost)));
  }
}

// reviewOf is what the last audit of feature f decided, a line each: its
// per-criterion receipt and each finding's disposition (as `horizon
// status` shows them).
function reviewOf(f) {
  const a = (f.attempts || []).slice().reverse().find((x) => x.audit);
  if (!a) return [];
  const out = [];
  const cs = a.criteria || [];
  if (cs.length) {
    const met = cs.filter((c) => c.status === "met").length;
    const open = cs.filter((c) => c.status === "unmet" || c.status === "unverifiable");
    out.push("attempt " + a.n + " criteria: " + met + "/" + cs.length + " met" + open.map((c) => "; " + c.criterion + " " + c.status + ": " + (c.text || "")).join(""));
  }
  for (const d of a.dispositions || []) out.push("attempt " + a.n + " " + d.disposition + " (" + d.by + "): " + d.subject + " — " + d.rationale);
  return out;
}

// skippable: a feature not yet done can be left out (the run refuses the rest).
function skippable(f) { return !["accepted", "decomposed", "skipped"].includes(f.status); }

function ended(s) { return ["completed", "failed", "cancelled"].includes(s.status); }

async function select(id, quiet) {
  selected = id;
  if (hashRun() !== id) history.replaceState(null, "", "#run=" + id);
  document.querySelectorAll("#runs tbody tr").forEach((tr) => tr.classList.toggle("selected", tr.dataset.run === id));
  try {
    drawRun(await api("/runs/" + encodeURIComponent(id)));
    drawChart("attempts", "/charts/attempts.svg?run=" + encodeURIComponent(id));
  } catch (e) {
    if (!quiet) say("run " + id + ": " + e.message, true);
  }
}

async function drawChart(name, path) {
  try {
    document.getElementById("chart-" + name).innerHTML = await api(path);
  } catch (e) {
    document.getElementById("chart-" + name).textContent = name + ": " + e.message;
  }
}

async function drawReport() {
  try {
    const r = await api("/reports/latest");
    document.getElementById("report-date").textContent = r.date;
    document.getElementById("report").replaceChildren(...markdown(r.markdown));
  } catch (e) {
    document.getElementById("report").replaceChildren(el("p", { class: "muted" }, e.message));
  }
}

// markdown renders the daily report's Markdown: headings, lists, tables,
// paragraphs, `code` and **bold**. Built from DOM nodes, never from HTML
// strings: the report quotes goals and model output.
function markdown(md) {
  const inline = (text) => {
    const out = [];
    for (const part of text.split(/(`[^`]+`|\*\*[^*]+\*\*)/)) {
      if (part.startsWith("`") && part.endsWith("`") && part.length > 1) out.push(el("code", {}, part.slice(1, -1)));
      else if (part.startsWith("**") && part.endsWith("**") && part.length > 3) out.push(el("b", {}, part.slice(2, -2)));
      else if (part) out.push(part);
    }
    return out;
  };
  const nodes = [];
  let list = null, table = null, para = [];
  const flush = () => {
    if (para.length) nodes.push(el("p", {}, inline(para.join(" "))));
    para = []; list = null; table = null;
  };
  for (const line of (md || "").split("\n")) {
    const h = line.match(/^(#{1,4})\s+(.*)$/);
    const li = line.match(/^\s*[-*]\s+(.*)$/);
    if (h) { flush(); nodes.push(el("h" + Math.min(h[1].length + 1, 4), {}, inline(h[2]))); continue; }
    if (/^\s*\|.*\|\s*$/.test(line)) {
      if (/^\s*\|[\s:|-]+\|\s*$/.test(line)) continue; // the header rule
      const cells = line.trim().slice(1, -1).split("|").map((c) => c.trim());
      if (!table) { flush(); table = el("table"); nodes.push(table); table.append(el("tr", {}, cells.map((c) => el("th", {}, inline(c))))); }
      else table.append(el("tr", {}, cells.map((c) => el("td", {}, inline(c)))));
      continue;
    }
    if (li) {
      if (!list) { const keep = list; flush(); list = keep || el("ul"); nodes.push(list); }
      list.append(el("li", {}, inline(li[1])));
      continue;
    }
    if (!line.trim()) { flush(); continue; }
    if (list || table) flush();
    para.push(line.trim());
  }
  flush();
  return nodes;
}

// supRepo maps a supervisor's ID to its repository, for the verbs that
// name a supervisor by its repository.
const supRepo = {};
// drafts keeps what a person types into a panel's form across redraws.
const drafts = {};

function queueVerb(repo, entry, verb) {
  if (!repo) return say("approve " + entry + ": the supervisor's repository is not known yet; try again", true);
  const q = "?repo=" + encodeURIComponent(repo);
  if (verb === "remove") {
    if (!confirm("Remove " + entry + " from the queue?")) return;
    return send("remove " + entry, "/queue/" + encodeURIComponent(entry) + q, { method: "DELETE" });
  }
  return send(verb + " " + entry, "/queue/" + encodeURIComponent(entry) + "/" + verb, { method: "POST", body: { repo } });
}

function supervisorVerb(repo, verb) {
  if (verb === "stop" && !confirm("Stop the supervisor of " + repo + "? Its runs go on.")) return;
  return send("supervisor " + verb, "/supervisors/" + verb, { method: "POST", body: { repo } });
}

function line(label, ...kids) { return el("div", {}, el("b", {}, label + " "), ...kids); }

async function drawSupervisors() {
  const box = document.getElementById("supervisors");
  let sups;
  try {
    sups = await api("/supervisors");
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, e.message));
    return;
  }
  if (!sups.length) {
    box.replaceChildren(el("p", { class: "muted" }, "no supervisor runs; ", el("code", {}, "horizon supervisor start --repo DIR"), " starts one for a repository"));
    return;
  }
  const panels = [];
  for (const s of sups) {
    supRepo[s.id] = s.repo;
    const q = "?repo=" + encodeURIComponent(s.repo);
    // One read of the supervisor serves its state, schedules and queue.
    const [view, roadmap] = await Promise.all([api("/supervisor" + q).catch(() => null), api("/roadmap" + q).catch(() => null)]);
    const queue = (view && view.queue) || [];
    const st = (view && view.supervisor) || s;
    const p = el("div", { class: "panel", "data-supervisor": s.repo });
    p.append(el("h3", {}, s.repo, " ", el("span", { class: "status " + st.status }, st.status), " ", el("span", { class: "muted" }, "autonomy " + st.autonomy + " · base " + st.base)));
    const acts = el("div", { class: "actions" });
    acts.append(st.status === "paused"
      ? el("button", { "data-action": "supervisor-resume", onclick: () => supervisorVerb(s.repo, "resume") }, "Resume")
      : el("button", { "data-action": "supervisor-pause", onclick: () => supervisorVerb(s.repo, "pause") }, "Pause"));
    acts.append(el("button", { class: "danger", "data-action": "supervisor-stop", onclick: () => supervisorVerb(s.repo, "stop") }, "Stop…"));
    p.append(acts);
    const w = el("div", { class: "waits" });
    if (st.outage) w.append(el("div", { class: "outage" }, el("b", {}, "outage "), st.outage.on || "", " · ", st.outage.activity || "", st.outage.last_error ? " · " + st.outage.last_error : ""));
    if (st.waiting) w.append(line("waiting", st.waiting, st.waiting_since ? " (since " + when(st.waiting_since) + ")" : ""));
    if (st.retrying) w.append(el("div", { class: "outage" }, el("b", {}, "retrying "), st.retrying));
    if (st.blocker) w.append(el("div", { class: "blocked" }, el("b", {}, "blocked "), st.blocker.reason || st.blocker.lift || ""));
    if (st.roadmap_error) w.append(el("div", { class: "outage" }, el("b", {}, "roadmap "), "waits for a fix on " + st.base + ": " + st.roadmap_error));
    p.append(w);
    for (const sc of (view && view.schedules) || []) {
      p.append(line("schedule", el("code", {}, sc.cron), " ", sc.time_zone, " · next ", (sc.next && sc.next.length) ? when(sc.next[0]) : "-", sc.paused ? " · paused" : ""));
    }
    const qt = el("table", { class: "queue" }, el("tr", {}, el("th", {}, "queue"), el("th", {}, "kind"), el("th", {}, "goal"), el("th", {})));
    for (const e of queue) {
      const b = el("td", {});
      if (e.waits_for_approval) b.append(el("button", { class: "primary", "data-action": "approve-queued", "data-entry": e.id, onclick: () => queueVerb(s.repo, e.id, "approve") }, "Approve"));
      if (e.position > 1) b.append(el("button", { "data-action": "queue-top", "data-entry": e.id, onclick: () => queueVerb(s.repo, e.id, "move") }, "To the top"));
      b.append(el("button", { class: "danger", "data-action": "queue-remove", "data-entry": e.id, onclick: () => queueVerb(s.repo, e.id, "remove") }, "Remove…"));
      qt.append(el("tr", { "data-entry": e.id }, el("td", {}, e.id), el("td", {}, e.kind), el("td", { class: "goal", title: e.goal }, e.goal), b));
    }
    if (!queue.length) qt.append(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "the queue is empty")));
    p.append(qt);
    const add = el("form", { class: "form", "data-form": "queue-add" },
      el("input", { name: "goal", placeholder: "a goal for this repository", size: 50, required: true, oninput: (ev) => { drafts[s.repo] = ev.target.value; } }),
      el("button", { type: "submit" }, "Add to the queue"));
    add.elements.goal.value = drafts[s.repo] || "";
    add.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const goal = add.elements.goal.value.trim();
      if (goal) { drafts[s.repo] = ""; send("queue add", "/queue", { method: "POST", body: { repo: s.repo, goal } }); }
    });
    p.append(add);
    if (roadmap && roadmap.found) {
      const ul = el("ul", { class: "roadmap" });
      for (const it of roadmap.items || []) {
        ul.append(el("li", { "data-item": it.item }, el("span", { class: "status " + it.state }, it.state), " ", it.title,
          it.run_id ? [" · ", el("a", { href: "#run=" + it.run_id }, it.run_id)] : "", it.detail ? el("span", { class: "muted" }, " · " + it.detail) : ""));
      }
      p.append(el("div", {}, el("b", {}, "roadmap "), roadmap.file), ul);
    }
    panels.push(p);
  }
  // A redraw must not take the cursor from a person typing a goal.
  const typing = document.activeElement && document.activeElement.closest && document.activeElement.closest("[data-supervisor]");
  const typingRepo = typing && typing.dataset.supervisor;
  box.replaceChildren(...panels);
  if (typingRepo) {
    const input = box.querySelector('[data-supervisor="' + CSS.escape(typingRepo) + '"] input[name=goal]');
    if (input) { input.focus(); input.setSelectionRange(input.value.length, input.value.length); }
  }
}

async function drawLoopsAndTasks() {
  const [loops, tasks] = await Promise.all([api("/loops").catch(() => []), api("/tasks").catch(() => [])]);
  const lb = document.querySelector("#loops tbody");
  lb.replaceChildren(...(loops.length ? loops.map((l) => el("tr", { "data-loop": l.loop }, el("td", {}, el("code", {}, l.loop)),
    el("td", { class: "status " + l.status }, l.status + (l.paused ? " (" + l.paused + ")" : "")), el("td", {}, l.role || ""), el("td", {}, l.activations),
    el("td", {}, money(l.cost)), el("td", {}, when(l.started_at)))) : [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "no loops; `horizon loop` starts one"))]));
  const tb = document.querySelector("#tasks tbody");
  tb.replaceChildren(...(tasks.length ? tasks.map((t) => el("tr", { "data-task": t.id }, el("td", {}, el("code", {}, t.id)),
    el("td", { class: "status " + t.status }, t.status), el("td", {}, t.specialist || ""), el("td", { class: "goal", title: t.prompt }, t.prompt || ""))) :
    [el("tr", {}, el("td", { colspan: 4, class: "muted" }, "no tasks; `horizon task run` starts one"))]));
}

document.getElementById("start-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = e.target.elements;
  const body = { repo: f.repo.value.trim(), goal: f.goal.value.trim() };
  if (f.autonomy.value) body.autonomy = f.autonomy.value;
  if (f.budget_time.value.trim()) body.budget_time = f.budget_time.value.trim();
  if (f.budget_spend.value) body.budget_spend = Number(f.budget_spend.value);
  if (f.single.checked) body.single = true;
  const st = await send("start", "/runs", { method: "POST", body });
  if (st && st.run_id) { f.goal.value = ""; select(st.run_id); }
});

let ticks = 0;
async function refresh() {
  try {
    const [runs, needs] = await Promise.all([api("/runs"), api("/needs")]);
    lastNeeds = needs;
    drawRuns(runs);
    drawNeeds(needs);
    await drawSupervisors();
    if (selected) await select(selected, true);
    if (ticks % 2 === 0) drawLoopsAndTasks();
    if (ticks++ % 5 === 0) {
      drawChart("spend", "/charts/spend.svg?days=14");
      drawChart("landed", "/charts/landed.svg?days=14");
      if (!selected) drawChart("attempts", "/charts/attempts.svg"); // the newest run's, or none yet
      drawReport();
    }
    say((offline ? "offline: the last data, from " : "updated ") + new Date().toLocaleTimeString());
    document.getElementById("login").hidden = true;
  } catch (e) {
    say(e.message, true);
  }
}

document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem(TOKEN_KEY, document.getElementById("token").value.trim());
  refresh();
});

if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
refresh();
setInterval(refresh, EVERY_MS);
