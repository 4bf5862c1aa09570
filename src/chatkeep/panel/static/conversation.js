// The conversation: bubbles, attachment chips, streaming turns, edit & resend, regenerate, retry,
// stop, the archive ("earlier messages"), usage and cost, and scrolling.
// User text is set with textContent; assistant replies use the server-sanitized Markdown `html`.
//
// Rendering: `state.views[i]` is the view of live entry i, once the page has it: the first load
// brings the last TAIL entries, earlier ones arrive a page at a time as the user scrolls up
// (`/api/history?from=i&to=j`). Only the nodes in or near the viewport are in the DOM
// (window.js): spacers stand for the rest. After a turn the page asks the server only for the
// entries from the first one the turn could change (`/api/history?from=i`) and replaces just
// those nodes; when the live window moved entries to the archive meanwhile (indices shifted) it
// loads the tail again. The session's usage line comes from the server's per-provider totals
// (`usage`), so it covers entries the page has not loaded.

import { ApiError, api, authHeaders, el, notice, showError } from "./api.js";
import {
  assistantBubble,
  chip,
  hooks,
  onCodeCopy,
  renderUsageTotals as showUsageTotals,
  userBubble,
} from "./bubbles.js";
import { fmt } from "./format.js";
import { renderMath } from "./math.js";
import { parseEvents, showStats } from "./stream.js";
import { loadVersions, versionSwitcher } from "./versions.js";
import { WindowedList } from "./window.js";

export const TAIL = 60; // entries of the first load
const PAGE = 100; // entries per page fetched while scrolling up

const state = {
  views: [], // sparse: views the page has not loaded yet are holes
  usage: null, // per-provider usage totals from the server, else computed from `views`
  generation: 0, // bumped whenever `views` changes: answers to older page requests are dropped
  pages: new Set(), // pages being fetched
  busy: false,
  turn: null,
  controller: null,
  settings: {},
  archived: 0,
  archiveStart: 0,
  failure: null, // {message, hint} of the last failed turn, shown on the unanswered question
  session: null,
  stick: true, // the user is at the bottom: follow new content
  stopping: false, // the user pressed Stop during the current turn
  stopped: new Set(), // indices of replies the user stopped on this page ("stopped", not "cut off")
};

const NEAR_BOTTOM_PX = 48;

export function setSettings(settings) {
  state.settings = settings || {};
  renderUsageTotals();
  // a reply's cost comes from its provider card's prices: the drawn replies follow them
  if (win && state.views.length) win.refreshAll();
}

export function isBusy() {
  return state.busy;
}

function scroller() {
  return document.getElementById("conversation");
}

function messages() {
  return document.getElementById("messages");
}

// -- scrolling -------------------------------------------------------------------------------

function atBottom() {
  const box = scroller();
  return box.scrollHeight - box.scrollTop - box.clientHeight < NEAR_BOTTOM_PX;
}

let win = null;

// The windowed list of the live conversation (created on first use, once the DOM is there).
function list() {
  if (!win) {
    win = new WindowedList({
      scroller: scroller(),
      list: messages(),
      render: (i) => {
        prefetchAround(i);
        return state.views[i] ? nodeFor(state.views[i]) : null;
      },
      missing: requestPage,
      stuck: () => state.stick,
    });
  }
  return win;
}

export function scrollToEnd() {
  const box = scroller();
  list().showEnd();
  box.scrollTop = box.scrollHeight;
  state.stick = true;
  updateJump();
}

// Live entry i scrolled into view (a search hit, search.js): its node once its data is there,
// or null when there is no such entry.
export async function revealEntry(i) {
  if (!(i >= 0 && i < state.views.length)) return null;
  for (let tries = 0; tries < 50; tries++) {
    state.stick = false;
    updateJump();
    const node = list().reveal(i);
    if (node && !node.dataset.placeholder) {
      node.scrollIntoView({ block: "center" });
      return node;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

function updateJump() {
  document.getElementById("jump-latest").hidden = state.stick;
}

function followIfStuck() {
  if (state.stick) scrollToEnd();
}

export function setupScrolling() {
  const box = scroller();
  // The view follows new content until the user scrolls up; reaching the bottom follows again
  // (content growing below, or the composer growing, does not stop it).
  let lastTop = box.scrollTop;
  box.addEventListener("scroll", () => {
    if (atBottom()) state.stick = true;
    else if (box.scrollTop < lastTop) state.stick = false;
    lastTop = box.scrollTop;
    updateJump();
  });
  document.getElementById("jump-latest").addEventListener("click", () => {
    scrollToEnd();
    document.getElementById("message").focus();
  });
  // An image that finishes loading while the user is at the bottom keeps them there.
  box.addEventListener("load", (e) => e.target.tagName === "IMG" && followIfStuck(), true);
  messages().addEventListener("click", onCodeCopy);
  document.getElementById("earlier-list").addEventListener("click", onCodeCopy);
  document.getElementById("load-earlier").addEventListener("click", loadEarlier);
}

function renderUsageTotals() {
  showUsageTotals(state.usage || state.views.filter(Boolean));
}

// -- the session name and usage ----------------------------------------------------------------

export function setSession(current) {
  state.session = current || null;
  const name = document.getElementById("session-name");
  name.textContent = state.session ? state.session.name || "(unnamed session)" : "Unsaved conversation";
  name.classList.toggle("unsaved", !state.session);
  document.title = state.session ? `${state.session.name} — chatkeep` : "chatkeep";
}

export function currentSession() {
  return state.session;
}

function lastMessageIndex() {
  for (let k = state.views.length - 1; k >= 0; k -= 1) {
    const v = state.views[k];
    if (!v) return -1; // not loaded: the tail held only attachments
    if (v.kind !== "attachment") return k;
  }
  return -1;
}

function unansweredQuestion() {
  const k = lastMessageIndex();
  const v = k >= 0 ? state.views[k] : null;
  return v && v.role === "user" && !v.unanswered ? v : null;
}

// A failed turn whose stream dropped after some text: the engine keeps that text as an
// interrupted reply; it is shown as cut off, and its question carries the error with Retry.
function cutOffQuestion() {
  const k = lastMessageIndex();
  if (k < 0 || !state.failure || state.busy) return null;
  const reply = state.views[k];
  if (reply.role !== "assistant" || !reply.interrupted) return null;
  for (let j = k - 1; j >= 0; j--) {
    const v = state.views[j];
    if (!v) return null;
    if (v.kind !== "attachment" && v.role === "user") return v;
  }
  return null;
}

function nodeFor(view, { readOnly = false } = {}) {
  if (view.kind === "attachment") return chip(view, readOnly);
  const last = !readOnly && view === state.views[lastMessageIndex()];
  const cut = readOnly ? null : cutOffQuestion();
  if (view.role === "user") {
    const bubble = userBubble(view, { readOnly, unanswered: (last && !state.busy) || view === cut });
    const versions = readOnly ? null : versionSwitcher(view.index);
    if (versions) bubble.querySelector(".actions")?.prepend(versions);
    return bubble;
  }
  return assistantBubble(view, {
    isLast: last,
    readOnly,
    cutOff: last && cut !== null,
    stopped: state.stopped.has(view.index),
  });
}

function emptyNote() {
  return el("p", { className: "empty muted", text: "No messages yet. Attach a page or say hello." });
}

// -- rendering -------------------------------------------------------------------------------

// Show a new history: `views` are the views of its entries from `start` (default: the first
// view's index) to the end; `length` (default: start + views) is its number of entries, `usage`
// the server's usage totals (default: computed from `views` when they are all of them, else
// the totals shown so far — an attachment or its undo changes no usage).
export function renderHistory(views, { archived, start, length, usage, versions = true } = {}) {
  views = views || [];
  const first = start ?? (views.length ? views[0].index : 0);
  state.views = new Array(length ?? first + views.length);
  views.forEach((v, k) => (state.views[first + k] = v));
  state.usage = usage || (first === 0 ? null : state.usage);
  state.generation += 1;
  state.pages.clear();
  if (archived !== undefined) setArchived(archived);
  const box = messages();
  box.replaceChildren();
  list().reset(state.views.length);
  if (!state.views.length) box.append(emptyNote());
  renderUsageTotals();
  scrollToEnd();
  if (versions) refreshVersions(); // a new history: which turns have earlier versions
}

// Replace the nodes from index `start` on with `views` (the server's views of entries[start:]).
function applyTail(start, views, usage) {
  const box = messages();
  box.querySelectorAll(".transient, .empty").forEach((n) => n.remove());
  // The previous last message loses its Regenerate / Retry controls: redraw it.
  const prev = lastMessageIndex();
  setTail(start, views);
  if (prev >= 0 && prev < start) list().refresh(prev);
  if (usage) state.usage = usage;
  if (!state.views.length) box.append(emptyNote());
  renderUsageTotals();
  list().layout();
}

// `views` replace the entries from `start` on (their nodes go; new ones are drawn when shown).
function setTail(start, views) {
  const next = state.views.slice(0, start);
  next.length = start;
  views.forEach((v, k) => (next[start + k] = v));
  state.views = next;
  state.generation += 1;
  state.pages.clear();
  list().splice(start, next.length);
}

async function refreshFrom(start) {
  const before = state.archived;
  const data = await api("GET", `/api/history?from=${Math.max(0, start)}`);
  if (data.archived !== before) {
    // The live window moved entries to the archive: indices shifted, draw the tail again.
    await reloadHistory(data);
  } else {
    applyTail(data.start, data.history, data.usage);
  }
  setSession(data.session);
  followIfStuck();
  refreshVersions(); // an edit or regenerate adds an earlier version (not awaited)
}

// Ask which turns have earlier versions, then redraw those questions' switchers.
export async function refreshVersions() {
  const changed = await loadVersions();
  for (const i of changed) if (i < state.views.length && state.views[i]) list().refresh(i);
}

function showTail(data) {
  const { archived, start, length, usage } = data;
  renderHistory(data.history, { archived, start, length, usage });
}

export async function reloadHistory(known = null) {
  const data = known && known.start === 0 ? known : await api("GET", `/api/history?tail=${TAIL}`);
  showTail(data);
  setSession(data.session);
}

// Drawing entry i asks for the pages a quarter of a page before and after it, so they are there
// before the user (or the focus moving with Tab) reaches them; the first load's tail is longer
// than that, so it asks for nothing more until the user scrolls.
function prefetchAround(i) {
  for (const j of [i - PAGE / 4, i + PAGE / 4]) {
    if (j >= 0 && j < state.views.length && !state.views[j]) requestPage(j);
  }
}

// The views of the page holding entry i (asked for when it is about to scroll into view).
async function requestPage(i) {
  const page = Math.floor(i / PAGE);
  if (state.pages.has(page)) return;
  state.pages.add(page);
  const generation = state.generation;
  try {
    const data = await api("GET", `/api/history?from=${page * PAGE}&to=${(page + 1) * PAGE}`);
    if (generation !== state.generation) return; // the history changed meanwhile: asked again
    if (data.archived !== state.archived) {
      if (!state.busy) await reloadHistory();
      return;
    }
    data.history.forEach((v) => {
      if (v.index < state.views.length && !state.views[v.index]) state.views[v.index] = v;
    });
    list().loaded();
  } catch (err) {
    state.pages.delete(page);
    showError(err);
  }
}

// -- the archive -----------------------------------------------------------------------------

function setArchived(count) {
  state.archived = count || 0;
  state.archiveStart = state.archived;
  document.getElementById("earlier-list").replaceChildren();
  updateEarlier();
}

function updateEarlier() {
  const box = document.getElementById("earlier");
  const button = document.getElementById("load-earlier");
  box.hidden = state.archived === 0;
  button.hidden = state.archiveStart === 0;
  button.textContent = `Show earlier messages (${fmt(state.archiveStart)} in the archive)`;
}

async function loadEarlier() {
  const box = scroller();
  const list = document.getElementById("earlier-list");
  try {
    const data = await api("GET", `/api/archive?before=${state.archiveStart}&limit=30`);
    const fromBottom = box.scrollHeight - box.scrollTop;
    list.prepend(...data.entries.map((v) => nodeFor(v, { readOnly: true })));
    state.archiveStart = data.start;
    updateEarlier();
    box.scrollTop = box.scrollHeight - fromBottom; // keep what the user was reading in place
    if (state.archiveStart === 0) list.querySelector(".bubble, .chip")?.setAttribute("tabindex", "-1");
  } catch (err) {
    showError(err);
  }
}

// -- actions ---------------------------------------------------------------------------------

async function undoAttach(attachId) {
  try {
    const data = await api("DELETE", `/api/attachments/${encodeURIComponent(attachId)}`);
    showTail(data);
  } catch (err) {
    showError(err);
  }
}

function startEdit(bubble, view) {
  if (state.busy) return;
  const area = el("textarea", { className: "edit-area", rows: 3, "aria-label": "Edited message" });
  area.value = view.text || "";
  const cancel = () => list().refresh(view.index);
  area.addEventListener("keydown", (e) => e.key === "Escape" && cancel());
  const box = el(
    "div",
    { className: "edit-box" },
    area,
    el(
      "div",
      { className: "actions" },
      el("button", {
        type: "button",
        className: "primary resend",
        text: "Send edited",
        onclick: () => {
          // Everything from this message on is replaced by the new turn (one bubble per send).
          streamTurn("/api/chat/edit", { index: view.index, text: area.value }, {
            echo: { text: area.value, images: view.images },
            from: view.index,
          });
        },
      }),
      el("button", { type: "button", text: "Cancel", onclick: cancel }),
    ),
  );
  bubble.replaceChildren(box);
  area.focus();
}

function lastUserView() {
  for (let k = state.views.length - 1; k >= 0; k -= 1) {
    const v = state.views[k];
    if (!v) return null;
    if (v.role === "user" && v.kind !== "attachment") return v;
  }
  return null;
}

function regenerate() {
  const question = lastUserView();
  if (!question) return;
  streamTurn("/api/chat/regenerate", {}, { echo: { text: question.text, images: question.images }, from: question.index });
}

// Regenerate on an earlier reply (SPEC §3.5): an edit & resend of its question with the same
// text; the question and everything after it are replaced, and kept as an earlier version.
function regenerateAt(replyIndex) {
  const k = state.views.findIndex((v) => v.index === replyIndex);
  for (let j = k - 1; j >= 0; j -= 1) {
    const v = state.views[j];
    if (!v || v.kind === "attachment" || v.role !== "user") continue;
    streamTurn("/api/chat/edit", { index: v.index, text: v.text }, { echo: { text: v.text, images: v.images }, from: v.index });
    return;
  }
}

// Whether `text` (with no images) is the unanswered last question: sending it again is a Retry.
export function isUnansweredText(text) {
  const q = unansweredQuestion();
  return Boolean(q && !(q.images || []).length && q.text === text);
}

// Retry answers the unanswered last question in place (SPEC §3.5): its bubble stays, no echo.
// Once it is answered, the composer's kept draft of that question goes (SPEC §11), so Enter
// cannot ask it a second time.
export async function retry() {
  const question = unansweredQuestion() || cutOffQuestion();
  if (!question) return null;
  const result = await streamTurn("/api/chat/regenerate", {}, { from: question.index + 1, keep: question.index });
  const box = document.getElementById("message");
  if (result.ok && box.value === question.text) {
    box.value = "";
    box.dispatchEvent(new Event("input"));
  }
  return result;
}

function setBusy(busy) {
  state.busy = busy;
  document.getElementById("send").hidden = busy;
  document.getElementById("stop").hidden = !busy;
  document.body.classList.toggle("busy", busy);
}

export async function stopTurn() {
  state.stopping = true;
  try {
    if (state.turn) await api("POST", "/api/chat/stop", { turn: state.turn });
    else if (state.controller) state.controller.abort();
  } catch (err) {
    showError(err);
  }
}

// The index from which a new send can change the history: a failed question right before it is
// reused by the engine when the same text is sent again (SPEC §3.5).
export function sendStart() {
  const q = unansweredQuestion();
  return q ? q.index : state.views.length;
}

// Run one streamed turn. `echo` is the user's bubble to show while the reply streams; `from` is
// the first history index the turn can change (nodes from there on are replaced when it ends);
// `keep` the index of a question bubble that stays (Retry). Resolves to
// {ok, refused, error}: `refused` = the server turned the request down before writing anything.
export async function streamTurn(path, body, { echo = null, from = null, keep = null } = {}) {
  if (state.busy) return { ok: false, refused: true };
  const start = from === null ? state.views.length : from;
  setBusy(true);
  state.failure = null;
  state.stopping = false;
  const box = messages();
  box.querySelector(".empty")?.remove();
  // The entries from `start` on are replaced by the turn: their nodes go until it ends (and come
  // back when the server refused it). A kept question is drawn again, without its failure.
  const replaced = state.views.slice(start);
  setTail(start, []);
  if (keep !== null && keep < start) list().refresh(keep);
  if (echo) {
    const bubble = userBubble({ text: echo.text, images: echo.images || [] });
    bubble.classList.add("transient");
    box.append(bubble);
  }
  // Only the reply being written is a live region; aria-busy holds announcements until it ends.
  const md = el("div", { className: "md pending", text: "…", "aria-live": "polite", "aria-busy": "true" });
  const live = el("div", { className: "bubble assistant streaming transient" }, md);
  box.append(live);
  scrollToEnd();
  state.controller = new AbortController();
  const result = { ok: false, refused: false, error: null };
  let partial = false;
  let rescued = false;
  announce("");
  try {
    const res = await fetch(path, {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
      signal: state.controller.signal,
    });
    if (!res.ok) {
      let data = null;
      try {
        data = await res.json();
      } catch {
        data = null;
      }
      result.refused = true;
      throw new ApiError(res.status, data);
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      buffer = parseEvents(buffer, (event, data) => {
        if (event === "start") state.turn = data.turn;
        else if (event === "thinking") {
          if (md.classList.contains("pending")) md.textContent = `thinking… (${fmt(data.chars)} characters)`;
        } else if (event === "delta") {
          const stick = state.stick;
          md.classList.remove("pending");
          md.innerHTML = data.html; // server-sanitized Markdown
          renderMath(md);
          partial = data.chars > 0;
          if (stick) scrollToEnd();
        } else if (event === "notice") {
          notice(data.message);
          if (/trimmed/.test(data.message)) rescued = true;
        } else if (event === "done") {
          result.ok = true;
          result.interrupted = Boolean(data.interrupted);
          showStats(data);
          const warnings = data.warnings || [];
          if (warnings.length) notice(warnings[warnings.length - 1], { kind: "warn" });
        } else if (event === "error") {
          result.error = new ApiError(data.status, data);
        }
      });
    }
    if (!result.ok && !result.error) {
      result.error = new Error("the reply stream ended before the reply was complete");
    }
  } catch (err) {
    if (err && err.name === "AbortError") result.error = new Error("the request was cancelled");
    else result.error = err;
  } finally {
    state.turn = null;
    state.controller = null;
    setBusy(false);
  }
  md.setAttribute("aria-busy", "false");
  if (result.refused) {
    // Nothing was written: take the echo back and tell why (the composer restores the draft).
    applyTail(start, replaced);
    redrawLast();
    showError(result.error);
    return result;
  }
  if (result.error) {
    const err = result.error;
    state.failure = { message: err.message || String(err), hint: err.hint || "" };
  }
  try {
    // A rescue rewrote earlier attachments (their chips now say "trimmed"): redraw from the top.
    await refreshFrom(rescued ? 0 : start);
  } catch (err) {
    showError(err);
  }
  if (result.ok && result.interrupted) {
    // A stopped reply reads "stopped"; one the provider cut short (the stream ended without its
    // end marker) reads "cut off" and offers Retry, never Regenerate as if it were complete.
    const k = lastMessageIndex();
    if (k >= 0 && state.views[k].role === "assistant" && state.stopping) {
      state.stopped.add(state.views[k].index);
      redrawLast();
    }
  }
  // An error, a stop, a cut-short reply or a rescue is shown where the user is looking: the view
  // follows it even if they had scrolled up, and the live region says what happened.
  const stoppedByUser = result.ok && result.interrupted && state.stopping;
  const outcome = result.error
    ? `The send failed: ${result.error.message || result.error}`
    : stoppedByUser
      ? "The reply was stopped; what arrived is kept."
      : result.ok && result.interrupted
        ? "The reply was cut off; what arrived is kept. Retry asks for a full one."
        : rescued
          ? "An attachment was trimmed to fit the model's context, and the question was sent again."
          : "";
  if (result.error && partial && unansweredQuestion()) {
    // The stream dropped mid-reply: keep what arrived on screen, marked as interrupted.
    live.classList.remove("streaming");
    live.classList.add("interrupted", "partial");
    live.removeAttribute("aria-live");
    live.append(el("div", { className: "actions" }, el("span", { className: "meta", text: "interrupted — the reply was cut off" })));
    // after the question, which is the last entry: at the end of the list
    messages().append(live);
  }
  if (outcome) {
    scrollToEnd();
    announce(outcome);
  } else followIfStuck();
  return result;
}

function announce(text) {
  const status = document.getElementById("turn-status");
  if (status) status.textContent = text;
}

function redrawLast() {
  const k = lastMessageIndex();
  if (k >= 0) list().refresh(k);
}

Object.assign(hooks, {
  providers: () => state.settings.providers,
  failure: () => state.failure,
  undo: undoAttach,
  edit: startEdit,
  retry,
  regenerate,
  regenerateAt,
});
