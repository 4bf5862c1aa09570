// What a streamed turn looks like: the echo of the question, the reply being written (the only
// live region while it streams), the Send/Stop buttons, the status line's figures, the edit box
// of a question, and the sentence the live region says when a turn ends. Drawing only: the
// decisions are turn.js's.

import { el } from "./api.js";
import { userBubble } from "./bubbles.js";
import { fmt } from "./format.js";
import { renderMath } from "./math.js";

function messages() {
  return document.getElementById("messages");
}

export function showBusy(busy) {
  document.getElementById("send").hidden = busy;
  document.getElementById("stop").hidden = !busy;
  document.body.classList.toggle("busy", busy);
}

export function announce(text) {
  const status = document.getElementById("turn-status");
  if (status) status.textContent = text;
}

// The nodes of one turn at the end of the conversation: `echo` (the question, while the reply
// streams) and the reply, "…" until its first text.
export class TurnView {
  constructor(echo) {
    const box = messages();
    box.querySelector(".empty")?.remove();
    if (echo) {
      const bubble = userBubble({ text: echo.text, images: echo.images || [] });
      bubble.classList.add("transient");
      box.append(bubble);
    }
    // Only the reply being written is a live region; aria-busy holds announcements until it ends.
    this.md = el("div", { className: "md pending", text: "…", "aria-live": "polite", "aria-busy": "true" });
    this.live = el("div", { className: "bubble assistant streaming transient" }, this.md);
    box.append(this.live);
  }

  thinking(chars) {
    if (this.md.classList.contains("pending")) this.md.textContent = `thinking… (${fmt(chars)} characters)`;
  }

  // A "delta" event's data: `html` is the reply so far, server-sanitized Markdown.
  delta(data) {
    this.md.classList.remove("pending");
    this.md.innerHTML = data.html; // server-sanitized Markdown
    renderMath(this.md);
  }

  ended() {
    this.md.setAttribute("aria-busy", "false");
  }

  // The stream dropped mid-reply: what arrived stays on screen, marked as interrupted, after
  // the question (the last entry: at the end of the list).
  keepInterrupted() {
    const live = this.live;
    live.classList.remove("streaming");
    live.classList.add("interrupted", "partial");
    live.removeAttribute("aria-live");
    live.append(el("div", { className: "actions" }, el("span", { className: "meta", text: "interrupted — the reply was cut off" })));
    messages().append(live);
  }
}

// The status line: the figures of the request just sent.
export function showStats(done) {
  const s = done.stats || {};
  const line = document.getElementById("last-stats");
  if (!s.bytes) {
    line.textContent = "";
    return;
  }
  const kb = (s.bytes / 1024).toFixed(1);
  const parts = [`last request ${kb} KB`, `${s.images || 0} images`, `~${fmt(s.estTokens)} tokens`];
  if (s.prefixBytes) parts.push(`${Math.round((s.prefixRatio || 0) * 100)}% prefix reused`);
  if (done.interrupted) parts.push("stopped");
  line.textContent = parts.join(" · ");
}

// A question's edit box in place of its bubble: `send(text)` on "Send edited", `cancel()` on
// Cancel or Esc.
export function showEditBox(bubble, text, { send, cancel }) {
  const area = el("textarea", { className: "edit-area", rows: 3, "aria-label": "Edited message" });
  area.value = text;
  area.addEventListener("keydown", (e) => e.key === "Escape" && cancel());
  const box = el(
    "div",
    { className: "edit-box" },
    area,
    el(
      "div",
      { className: "actions" },
      el("button", { type: "button", className: "primary resend", text: "Send edited", onclick: () => send(area.value) }),
      el("button", { type: "button", text: "Cancel", onclick: cancel }),
    ),
  );
  bubble.replaceChildren(box);
  area.focus();
}

// What the live region says when a turn ends ("" when it ended as expected).
export function outcomeText({ error, stoppedByUser, cutShort, rescued }) {
  if (error) return `The send failed: ${error.message || error}`;
  if (stoppedByUser) return "The reply was stopped; what arrived is kept.";
  if (cutShort) return "The reply was cut off; what arrived is kept. Retry asks for a full one.";
  if (rescued) return "An attachment was trimmed to fit the model's context, and the question was sent again.";
  return "";
}
