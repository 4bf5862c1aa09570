// The conversation: the live history drawn as bubbles and attachment chips, the archive
// ("earlier messages"), usage and cost, scrolling, and undoing an attachment. Its state is
// store.js's `state`; a streamed turn (turn.js) redraws it through the functions exported here.
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

import { api, el, showError } from "./api.js";
import { assistantBubble, chip, onCodeCopy, renderUsageTotals as showUsageTotals, userBubble } from "./bubbles.js";
import { fmt } from "./format.js";
import { state, subscribe } from "./store.js";
import { loadVersions, versionSwitcher } from "./versions.js";
import { WindowedList } from "./window.js";

export const TAIL = 60; // entries of the first load
const PAGE = 100; // entries per page fetched while scrolling up


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

export function followIfStuck() {
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
  subscribe("undo", ({ attachId }) => undoAttach(attachId));
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

export function lastMessageIndex() {
  for (let k = state.views.length - 1; k >= 0; k -= 1) {
    const v = state.views[k];
    if (!v) return -1; // not loaded: the tail held only attachments
    if (v.kind !== "attachment") return k;
  }
  return -1;
}

export function unansweredQuestion() {
  const k = lastMessageIndex();
  const v = k >= 0 ? state.views[k] : null;
  return v && v.role === "user" && !v.unanswered ? v : null;
}

// A failed turn whose stream dropped after some text: the engine keeps that text as an
// interrupted reply; it is shown as cut off, and its question carries the error with Retry.
export function cutOffQuestion() {
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
export function applyTail(start, views, usage) {
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
export function setTail(start, views) {
  const next = state.views.slice(0, start);
  next.length = start;
  views.forEach((v, k) => (next[start + k] = v));
  state.views = next;
  state.generation += 1;
  state.pages.clear();
  list().splice(start, next.length);
}

export async function refreshFrom(start) {
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

// -- undo and the questions a send reuses ---------------------------------------------------------------------------------

async function undoAttach(attachId) {
  try {
    const data = await api("DELETE", `/api/attachments/${encodeURIComponent(attachId)}`);
    showTail(data);
  } catch (err) {
    showError(err);
  }
}

// Whether `text` (with no images) is the unanswered last question: sending it again is a Retry.
export function isUnansweredText(text) {
  const q = unansweredQuestion();
  return Boolean(q && !(q.images || []).length && q.text === text);
}

// The index from which a new send can change the history: a failed question right before it is
// reused by the engine when the same text is sent again (SPEC §3.5).
export function sendStart() {
  const q = unansweredQuestion();
  return q ? q.index : state.views.length;
}

export function redrawLast() {
  const k = lastMessageIndex();
  if (k >= 0) list().refresh(k);
}

// Entry i drawn again (its data or its state changed).
export function redraw(i) {
  list().refresh(i);
}
