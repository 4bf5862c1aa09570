// A streamed turn's state: send, edit & resend, regenerate, Retry and Stop. It asks stream.js
// for the events, decides what they mean for the conversation (store.js's state, the history
// drawn by conversation.js) and has turn-view.js draw them.

import { ApiError, api, notice, showError } from "./api.js";
import {
  applyTail,
  cutOffQuestion,
  followIfStuck,
  lastMessageIndex,
  redraw,
  redrawLast,
  refreshFrom,
  scrollToEnd,
  setTail,
  unansweredQuestion,
} from "./conversation.js";
import { state, subscribe } from "./store.js";
import { openStream, readEvents } from "./stream.js";
import { TurnView, announce, outcomeText, showBusy, showEditBox, showStats } from "./turn-view.js";

function setBusy(busy) {
  state.busy = busy;
  showBusy(busy);
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
  // The entries from `start` on are replaced by the turn: their nodes go until it ends (and come
  // back when the server refused it). A kept question is drawn again, without its failure.
  const replaced = state.views.slice(start);
  setTail(start, []);
  if (keep !== null && keep < start) redraw(keep);
  const view = new TurnView(echo);
  scrollToEnd();
  state.controller = new AbortController();
  const result = { ok: false, refused: false, error: null };
  let partial = false;
  let rescued = false;
  announce("");
  try {
    const res = await openStream(path, body, state.controller.signal);
    for await (const { event, data } of readEvents(res)) {
      if (event === "start") state.turn = data.turn;
      else if (event === "thinking") view.thinking(data.chars);
      else if (event === "delta") {
        const stick = state.stick;
        view.delta(data);
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
    }
    if (!result.ok && !result.error) {
      result.error = new Error("the reply stream ended before the reply was complete");
    }
  } catch (err) {
    result.refused = Boolean(err && err.refused);
    if (err && err.name === "AbortError") result.error = new Error("the request was cancelled");
    else result.error = err;
  } finally {
    state.turn = null;
    state.controller = null;
    setBusy(false);
  }
  view.ended();
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
  const cutShort = result.ok && result.interrupted && !state.stopping;
  const outcome = outcomeText({ error: result.error, stoppedByUser, cutShort, rescued });
  if (result.error && partial && unansweredQuestion()) view.keepInterrupted();
  if (outcome) {
    scrollToEnd();
    announce(outcome);
  } else followIfStuck();
  return result;
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
  const k = state.views.findIndex((v) => v && v.index === replyIndex);
  for (let j = k - 1; j >= 0; j -= 1) {
    const v = state.views[j];
    if (!v || v.kind === "attachment" || v.role !== "user") continue;
    streamTurn("/api/chat/edit", { index: v.index, text: v.text }, { echo: { text: v.text, images: v.images }, from: v.index });
    return;
  }
}

// Edit & resend: everything from this message on is replaced by the new turn (one bubble per send).
function startEdit(bubble, view) {
  if (state.busy) return;
  showEditBox(bubble, view.text || "", {
    send: (text) =>
      streamTurn("/api/chat/edit", { index: view.index, text }, { echo: { text, images: view.images }, from: view.index }),
    cancel: () => redraw(view.index),
  });
}

// The bubbles' buttons (store.js actions).
export function setupTurns() {
  subscribe("retry", retry);
  subscribe("regenerate", regenerate);
  subscribe("regenerate-at", ({ index }) => regenerateAt(index));
  subscribe("edit", ({ bubble, view }) => startEdit(bubble, view));
}
