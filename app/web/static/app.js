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

// act sends a verb and reads everything again; the answer is said in the header.
async function act(id, verb, body) {
  try {
    await api("/runs/" + encodeURIComponent(id) + "/" + verb, { method: "POST", body: body || {} });
    say(verb + " " + id + ": done");
  } catch (e) {
    say(verb + " " + id + ": " + e.message, true);
  }
  refresh();
}

function approve(id, subject) { return act(id, "approve", { subject }); }
function unblock(id, feature) {
  const note = prompt("Unblock " + (feature || id) + ": what changed? The next attempt reads it.");
  if (note && note.trim()) return act(id, "unblock", { feature, note });
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
    if (n.kind === "approve") li.append(el("button", { class: "primary", "data-action": "approve", "data-run": n.run_id, "data-subject": n.subject, onclick: () => approve(n.run_id, n.subject) }, "Approve " + (n.subject || "")));
    if (n.kind === "blocked") li.append(el("button", { "data-action": "unblock", "data-run": n.run_id, onclick: () => unblock(n.run_id, n.subject) }, "Unblock…"));
    if (n.kind === "ceiling") li.append(el("code", {}, n.command));
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

function drawRun(v) {
  const s = v.state;
  document.getElementById("run").hidden = false;
  document.getElementById("run-id").replaceChildren(el("code", {}, s.run_id), " ",
    v.ui ? el("a", { href: v.ui, target: "_blank", rel: "noopener" }, "in the Temporal UI") : "");
  const summary = [el("div", {}, el("b", {}, "goal "), s.goal),
    el("div", {}, el("b", {}, "status "), el("span", { class: "status " + s.status, id: "run-status" }, s.status), " · ", s.phase || "", " · spent ", money(s.usage && s.usage.cost), v.live ? "" : " · (no worker answered)")];
  if (s.waiting) summary.push(el("div", { id: "run-waiting" }, el("b", {}, "waiting "), s.waiting.summary || (s.waiting.kind + " " + s.waiting.subject)));
  if (s.reason) summary.push(el("div", {}, el("b", {}, "reason "), s.reason));
  document.getElementById("run-summary").replaceChildren(...summary);

  const actions = document.getElementById("run-actions");
  actions.replaceChildren();
  const open = s.status === "running" || s.status === "blocked" || (!["completed", "failed", "cancelled"].includes(s.status));
  if (s.waiting) actions.append(el("button", { class: "primary", "data-action": "approve", "data-run": s.run_id, "data-subject": s.waiting.subject, onclick: () => approve(s.run_id, s.waiting.subject) }, "Approve " + s.waiting.subject));
  if (open && v.live) {
    actions.append(s.paused
      ? el("button", { "data-action": "resume", onclick: () => act(s.run_id, "resume") }, "Resume")
      : el("button", { "data-action": "pause", onclick: () => act(s.run_id, "pause") }, "Pause"));
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
      const at = el("ul", { class: "attempts" }, (f.attempts || []).map((a) => el("li", {}, attemptLine(a))));
      li.append(at);
      fl.append(li);
    }
    plan.append(el("li", { "data-milestone": m.id }, el("b", {}, m.id), " ", m.title, " [", el("span", { class: "status " + m.status }, m.status), "]", fl));
  }
  if (!ms.length) {
    for (const f of v.features || []) plan.append(el("li", { "data-feature": f.feature }, f.title, " · ", f.status, " · ", count(f.attempts, "attempt"), " · ", money(f.cost)));
  }
}

async function select(id, quiet) {
  selected = id;
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
    document.getElementById("report").textContent = r.markdown;
  } catch (e) {
    document.getElementById("report").textContent = e.message;
  }
}

let ticks = 0;
async function refresh() {
  try {
    const [runs, needs] = await Promise.all([api("/runs"), api("/needs")]);
    drawRuns(runs);
    drawNeeds(needs);
    if (selected) await select(selected, true);
    if (ticks++ % 5 === 0) {
      drawChart("spend", "/charts/spend.svg?days=14");
      drawChart("landed", "/charts/landed.svg?days=14");
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
