// Solace's web console: plain script over the JSON API of `solace serve`, no build step.
// The admin token comes from a #token= fragment (removed from the address bar at once)
// or the paste box, and lives only in this tab's sessionStorage: never a cookie, never
// a query string. Every server-supplied string is put in the page as text, never HTML.
"use strict";

const TOKEN_KEY = "solace.token";
// The toggle's next move from each state: grey -> teal -> red -> grey.
const NEXT_MOVE = { "not-in-memory": "promote", "promoted": "deprecate", "deprecated": "demote" };
const SYMBOL = { "not-in-memory": "-", "promoted": "M", "deprecated": "D" };
let currentMemory = null;

const $ = (sel) => document.querySelector(sel);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// -- auth and the API ------------------------------------------------------------------

function takeFragmentToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, "", location.pathname);
  }
}

const token = () => sessionStorage.getItem(TOKEN_KEY) || "";

class ApiError extends Error {
  constructor(status, error, detail) {
    super(`${status} ${error}: ${detail}`);
    this.status = status; this.error = error; this.detail = detail;
  }
}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + token() };
  const init = { method, headers };
  if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, data.error || "error", data.detail || r.statusText);
  return data;
}

function showError(err) {
  const bar = $("#error-bar");
  bar.textContent = err instanceof ApiError ? `${err.error}: ${err.detail}` : String(err);
  bar.hidden = false;
  if (err instanceof ApiError && err.status === 401) setAuth(false, "token refused");
}

function clearError() { $("#error-bar").hidden = true; }

function setAuth(ok, text) {
  const s = $("#auth-status");
  s.textContent = text; s.className = ok ? "ok" : "bad";
}

// Run an action; show its error in the bar instead of failing silently.
const guarded = (fn) => async (...args) => {
  try { await fn(...args); } catch (err) { showError(err); }
};

// -- topics, the toggle and the memory prefix --------------------------------------------

async function loadTopics() {
  const { topics } = await api("GET", "/topics");
  const rows = [];
  for (const session of [...new Set(topics.map((t) => t.session_id))]) {  // topics per session
    rows.push(el("tr", { class: "session-row", dataset: { sessionId: session } },
      el("th", { colspan: 6 }, `session ${session}`)));
    rows.push(...topics.filter((t) => t.session_id === session).map(topicRow));
  }
  $("#topics-table tbody").replaceChildren(...rows);
  const pick = $("#notes-topic"), was = pick.value;
  pick.replaceChildren(...topics.map((t) => el("option", { value: t.topic_id }, t.title || t.topic_id)));
  if (was && topics.some((t) => t.topic_id === was)) pick.value = was;
  await Promise.all([loadPrefix(), loadNotes()]);
}

function topicRow(t) {
  const toggle = el("button", {
    type: "button", class: `toggle state-${t.state}`, dataset: { state: t.state },
    title: `${t.state}: click to ${NEXT_MOVE[t.state]}`, "aria-label": `memory state ${t.state}`,
    onclick: guarded(async () => {
      await api("POST", `/topics/${encodeURIComponent(t.topic_id)}/curate`, { action: NEXT_MOVE[t.state] });
      clearError();
      await loadTopics();
    }),
  }, SYMBOL[t.state]);
  const flags = [t.keep_in_memory_manually_set ? "keep: user" : "", t.deprecated_manually_set ? "deprecated: user" : ""]
    .filter(Boolean).join(", ") || "none";
  const action = el("select", { class: "agent-action" },
    ...["promote", "demote", "deprecate"].map((a) => el("option", { value: a }, a)));
  const message = el("span", { class: "guard-message", role: "status" });
  const tryIt = el("button", {
    type: "button", class: "agent-try",
    onclick: guarded(async () => {
      const r = await api("POST", `/topics/${encodeURIComponent(t.topic_id)}/agent-curate`, { action: action.value });
      await loadTopics();
      const row = document.querySelector(`tr[data-topic-id="${CSS.escape(t.topic_id)}"] .guard-message`);
      row.textContent = r.ok ? `agent ${action.value}: done (${r.topic.state})` : `agent refused: ${r.message}`;
      row.classList.toggle("ok", r.ok);
    }),
  }, "Agent");
  return el("tr", { dataset: { topicId: t.topic_id, state: t.state }, class: t.active ? "active" : "" },
    el("td", {}, toggle),
    el("td", { class: "title" }, t.title || "(untitled)", el("div", { class: "muted" }, t.summary)),
    el("td", { class: "muted" }, t.topic_id),
    el("td", {}, t.messages),
    el("td", { class: "flags" }, flags),
    el("td", {}, action, " ", tryIt, message));
}

async function loadPrefix() {
  const p = await api("GET", "/context/memory");
  $("#memory-prefix").textContent = p.text || "(empty: no topic is in memory)";
  $("#memory-prefix-tokens").textContent = `${p.tokens} tokens` + (p.dropped.length ? `, ${p.dropped.length} dropped (FIFO)` : "");
}

// -- durable facts and notes -----------------------------------------------------------

async function loadFacts() {
  const { facts } = await api("GET", "/facts");
  $("#durable-facts").replaceChildren(...facts.map((f) => el("li", { dataset: { key: f.key } },
    el("b", {}, f.key), " = ", f.value, " ",
    el("button", { type: "button", class: "unset-fact", onclick: guarded(async () => {
      await api("DELETE", `/facts/${encodeURIComponent(f.key)}`); await loadFacts();
    }) }, "delete"))));
  if (!facts.length) $("#durable-facts").append(el("li", { class: "muted" }, "no durable facts"));
}

async function loadNotes() {
  const id = $("#notes-topic").value;
  $("#notes-text").textContent = id ? (await api("GET", `/topics/${encodeURIComponent(id)}/notes`)).notes || "(no notes)" : "(no topic)";
}

// -- fact memory -------------------------------------------------------------------------

async function loadMemoryIds() {
  const { ids } = await api("GET", "/memory");
  $("#memory-ids").replaceChildren(...ids.map((id) => el("button", {
    type: "button", class: "memory-id", dataset: { memoryId: id }, onclick: guarded(() => openMemory(id)),
  }, id)));
  if (!ids.length) $("#memory-ids").append(el("span", { class: "muted" }, "none yet"));
}

async function openMemory(id) {
  currentMemory = id;
  $("#memory-current").textContent = id;
  $("#consolidate").disabled = false;
  const all = $("#memory-all").checked ? "?all=true" : "";
  const { facts } = await api("GET", `/memory/${encodeURIComponent(id)}/facts${all}`);
  $("#memory-facts tbody").replaceChildren(...facts.map((f) => el("tr", { dataset: { factId: f.id, status: f.status } },
    el("td", { class: `status-${f.status}` }, f.status),
    el("td", { class: "fact-text" }, f.text),
    el("td", {}, f.class),
    el("td", {}, f.importance),
    el("td", {}, f.mentions),
    el("td", { class: "muted" }, f.id),
    el("td", {}, f.status === "deleted" ? "" : el("button", { type: "button", class: "delete-fact", onclick: guarded(async () => {
      if (!confirm(`Delete this fact for good?\n\n${f.text}`)) return;
      await api("DELETE", `/memory/${encodeURIComponent(id)}/facts/${encodeURIComponent(f.id)}`);
      await openMemory(id);
    }) }, "delete")))));
}

async function consolidate() {
  const { compactions } = await api("POST", `/memory/${encodeURIComponent(currentMemory)}/consolidate`);
  const out = $("#consolidate-result");
  out.hidden = false;
  out.textContent = compactions.length
    ? compactions.map((c) => `${c.accepted ? "accepted" : "refused"} (${c.reason}) ${c.tokens_before} -> ${c.tokens_after} tokens ${c.detail}`).join("\n")
    : "nothing to compact";
  await openMemory(currentMemory);
}

// -- the fade view -----------------------------------------------------------------------

function rungs(map) {
  const entries = Object.entries(map || {}).sort(([a], [b]) => Number(a) - Number(b));
  return entries.length ? entries.map(([r, n]) => `r${r}: ${n}`).join("  ") : "-";
}

function spark(samples, budget) {
  const ns = "http://www.w3.org/2000/svg", w = 100, h = 20;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`); svg.setAttribute("class", "spark");
  svg.setAttribute("preserveAspectRatio", "none");
  const top = Math.max(budget, ...samples, 1);
  const limit = document.createElementNS(ns, "line");
  const y = (v) => (h - (v / top) * (h - 1)).toFixed(2);
  limit.setAttribute("x1", 0); limit.setAttribute("x2", w); limit.setAttribute("y1", y(budget)); limit.setAttribute("y2", y(budget));
  const line = document.createElementNS(ns, "polyline");
  const step = samples.length > 1 ? w / (samples.length - 1) : 0;
  line.setAttribute("points", samples.map((v, i) => `${(i * step).toFixed(2)},${y(v)}`).join(" "));
  svg.append(limit, line);
  return svg;
}

async function loadFade() {
  const agents = await api("GET", "/inspect");
  const rows = Object.entries(agents).map(([name, s]) => {
    // The server keeps each agent's working tokens after every change (fade_history:
    // [time, tokens, budget] points, oldest first), so the line starts before the page.
    const hist = (s.fade_history || []).map((p) => p[1]);
    if (!hist.length) hist.push(s.working_tokens);
    const pct = s.budget_tokens ? Math.min(100, (100 * s.working_tokens) / s.budget_tokens) : 0;
    const bar = el("span", {}); bar.style.width = `${pct}%`;
    return el("tr", { dataset: { agent: name } },
      el("td", {}, name),
      el("td", {}, el("div", { class: "meter" + (pct >= 100 ? " full" : "") }, bar),
        el("span", { class: "tokens" }, `${s.working_tokens} / ${s.budget_tokens}`)),
      el("td", {}, spark(hist, s.budget_tokens)),
      el("td", { class: "working-rungs" }, rungs(s.working_by_rung)),
      el("td", { class: "longterm-rungs" }, rungs(s.longterm_by_rung)),
      el("td", {}, s.fade_paused_since ? "since " + new Date(s.fade_paused_since * 1000).toISOString() : "no"));
  });
  $("#fade-table tbody").replaceChildren(...rows);
}

// -- the recall playground ---------------------------------------------------------------

const num = (x) => Number(x).toFixed(3);

async function recall(ev) {
  ev.preventDefault();
  const body = { query: $("#recall-query").value, agent: $("#recall-agent").value, k: Number($("#recall-k").value) || 10 };
  const { hits } = await api("POST", "/recall", body);
  $("#event-view").hidden = true;
  $("#recall-hits tbody").replaceChildren(...hits.map((h, i) => el("tr", { class: "hit", dataset: { rung: h.rung } },
    el("td", {}, i + 1),
    el("td", { class: "rung" }, `${h.rung} (${h.tier})`),
    el("td", { class: "score" }, num(h.score)),
    el("td", { class: "parts muted" }, [h.relevance, h.lexical, h.recency, h.emotion, h.tags, h.context].map(num).join(" / ")),
    el("td", { class: "date" }, h.date),
    el("td", { class: "speakers" }, h.speakers.join(", ")),
    el("td", { class: "hit-text" }, h.text),
    el("td", {}, ...h.entry_ids.map((id) => el("button", { type: "button", class: "show-event", dataset: { entryId: id },
      onclick: guarded(() => showEvent(id)) }, `#${id}`))))));
  if (!hits.length) $("#recall-hits tbody").append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "no hits")));
}

async function showEvent(id) {
  const e = await api("GET", `/events/${id}`);
  $("#event-id").textContent = `#${e.entry_id}`;
  $("#event-meta").textContent = `${e.date} · ${e.speaker} · ${e.kind} (appended by ${e.agent})`;
  $("#event-text").textContent = e.text;
  $("#event-view").hidden = false;
}

// -- the substrate -----------------------------------------------------------------------

async function verify() {
  const box = $("#verify-status");
  box.textContent = "verifying…"; box.className = "muted";
  const v = await api("GET", "/substrate/verify");
  box.className = v.ok ? "ok" : "bad";
  box.textContent = v.ok
    ? `verified: ${v.frames} frames in ${v.segments} segments (${v.bytes} bytes), last id ${v.last_id}, anchor at ${v.anchored_id ?? "none yet"}, ${v.seconds} s`
    : `FAILED ${v.error}: ${v.detail}`;
}

// -- start -------------------------------------------------------------------------------

async function loadAll() {
  if (!token()) { setAuth(false, "no token: paste one or open /#token=…"); return; }
  try {
    await Promise.all([loadTopics(), loadFacts(), loadMemoryIds(), loadFade()]);
    setAuth(true, "token accepted");
    clearError();
    await verify();
  } catch (err) { showError(err); }
}

function wire() {
  $("#auth").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = $("#token-input").value.trim();
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    $("#token-input").value = "";
    loadAll();
  });
  $("#topics-refresh").addEventListener("click", guarded(loadTopics));
  $("#notes-topic").addEventListener("change", guarded(loadNotes));
  $("#fact-form").addEventListener("submit", guarded(async (ev) => {
    ev.preventDefault();
    await api("PUT", `/facts/${encodeURIComponent($("#fact-key").value)}`, { value: $("#fact-value").value });
    $("#fact-form").reset(); await loadFacts();
  }));
  $("#note-form").addEventListener("submit", guarded(async (ev) => {
    ev.preventDefault();
    const id = $("#notes-topic").value;
    if (!id) throw new Error("no topic to add a note to");
    await api("POST", `/topics/${encodeURIComponent(id)}/notes`, { text: $("#note-text").value });
    $("#note-form").reset(); await loadNotes();
  }));
  $("#memory-pick").addEventListener("submit", guarded(async (ev) => { ev.preventDefault(); await openMemory($("#memory-id").value); }));
  $("#memory-all").addEventListener("change", guarded(async () => { if (currentMemory) await openMemory(currentMemory); }));
  $("#remember-form").addEventListener("submit", guarded(async (ev) => {
    ev.preventDefault();
    if (!currentMemory) throw new Error("open a memory id first");
    await api("POST", `/memory/${encodeURIComponent(currentMemory)}/remember`, { text: $("#remember-text").value });
    $("#remember-form").reset(); await Promise.all([openMemory(currentMemory), loadMemoryIds()]);
  }));
  $("#consolidate").addEventListener("click", guarded(consolidate));
  $("#fade-refresh").addEventListener("click", guarded(loadFade));
  setInterval(() => { if ($("#fade-auto").checked && token()) loadFade().catch(showError); }, 5000);
  $("#recall-form").addEventListener("submit", guarded(recall));
  $("#event-close").addEventListener("click", () => { $("#event-view").hidden = true; });
  $("#verify").addEventListener("click", guarded(verify));
}

takeFragmentToken();
document.addEventListener("DOMContentLoaded", () => { wire(); loadAll(); });
