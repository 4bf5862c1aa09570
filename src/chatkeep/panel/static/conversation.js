// The conversation: bubbles, attachment chips, streaming turns, edit & resend, regenerate, stop.
// User text is set with textContent; assistant replies use the server-sanitized Markdown `html`.

import { ApiError, api, authHeaders, el, imageUrl, isHttpUrl, notice, showError } from "./api.js";

const state = { history: [], busy: false, turn: null, controller: null, settings: {} };

export function setSettings(settings) {
  state.settings = settings || {};
}

export function isBusy() {
  return state.busy;
}

function main() {
  return document.getElementById("conversation");
}

function scrollToEnd() {
  const box = main();
  box.scrollTop = box.scrollHeight;
}

function chip(view) {
  const a = view.attachment || {};
  const video = view.videoSrc && isHttpUrl(view.videoSrc.url) ? view.videoSrc.url : "";
  const bits = [`${(a.chars || 0).toLocaleString()} chars`];
  if (a.images) bits.push(`${a.images} image${a.images === 1 ? "" : "s"}`);
  if (a.summarized) bits.push("condensed");
  const link = video || (isHttpUrl(a.url) ? a.url : "");
  return el(
    "div",
    { className: "chip", dataset: { index: view.index, attachId: view.attachId || "" } },
    el("span", { className: "chip-icon", text: video ? "▶" : "📎" }),
    el("span", { className: "chip-title", text: a.title || a.url || "attachment" }),
    link
      ? el("a", { className: "chip-url", href: link, target: "_blank", rel: "noopener noreferrer", text: link })
      : a.url
        ? el("span", { className: "chip-url", text: a.url })
        : null,
    el("span", { className: "chip-meta", text: bits.join(", ") }),
    view.attachId
      ? el("button", {
          type: "button",
          className: "chip-undo",
          title: "Remove this attachment",
          text: "Undo",
          onclick: () => undoAttach(view.attachId),
        })
      : null,
  );
}

function images(list) {
  if (!list || !list.length) return null;
  return el(
    "div",
    { className: "bubble-images" },
    list.map((img) => {
      const src = img.src.startsWith("data:") ? img.src : imageUrl(img.src);
      const title = img.width ? `${img.width}×${img.height} ${img.mime || ""}` : img.mime || "";
      return el("a", { href: src, target: "_blank", rel: "noopener noreferrer" }, el("img", { src, alt: "image you sent", title }));
    }),
  );
}

function userBubble(view) {
  const text = el("div", { className: "text", text: view.text || "" });
  const bubble = el(
    "div",
    { className: "bubble user", dataset: { index: view.index } },
    text,
    images(view.images),
  );
  if (view.index !== undefined && !state.busy) {
    bubble.append(
      el(
        "div",
        { className: "actions" },
        el("button", { type: "button", className: "edit", text: "Edit", onclick: () => startEdit(bubble, view) }),
      ),
    );
  }
  return bubble;
}

function assistantBubble(view, isLast) {
  const body = el("div", { className: "md" });
  body.innerHTML = view.html || ""; // server-sanitized Markdown (markdown-it-py, html off)
  const meta = [];
  if (view.provider) meta.push([view.provider.name, view.provider.model].filter(Boolean).join(" · "));
  if (view.interrupted) meta.push("stopped");
  const bubble = el(
    "div",
    { className: "bubble assistant", dataset: { index: view.index } },
    body,
    el(
      "div",
      { className: "actions" },
      meta.length ? el("span", { className: "meta", text: meta.join(" — ") }) : null,
      el("button", {
        type: "button",
        className: "copy",
        text: "Copy",
        onclick: () => navigator.clipboard && navigator.clipboard.writeText(view.text || ""),
      }),
      isLast && !state.busy
        ? el("button", { type: "button", className: "regenerate", text: "Regenerate", onclick: regenerate })
        : null,
    ),
  );
  return bubble;
}

export function renderHistory(history) {
  state.history = history || [];
  const box = main();
  box.replaceChildren();
  const lastAssistant = state.history.map((v) => v.role).lastIndexOf("assistant");
  for (const [pos, view] of state.history.entries()) {
    if (view.kind === "attachment") box.append(chip(view));
    else if (view.role === "user") box.append(userBubble(view));
    else box.append(assistantBubble(view, pos === lastAssistant));
  }
  if (!state.history.length) {
    box.append(el("p", { className: "empty muted", text: "No messages yet. Attach a page or say hello." }));
  }
  scrollToEnd();
}

export async function reloadHistory() {
  const data = await api("GET", "/api/history");
  renderHistory(data.history);
}

async function undoAttach(attachId) {
  try {
    const data = await api("DELETE", `/api/attachments/${encodeURIComponent(attachId)}`);
    renderHistory(data.history);
  } catch (err) {
    showError(err);
  }
}

function startEdit(bubble, view) {
  if (state.busy) return;
  const area = el("textarea", { className: "edit-area", rows: 3 });
  area.value = view.text || "";
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
          let node = bubble.nextSibling;
          while (node) {
            const next = node.nextSibling;
            node.remove();
            node = next;
          }
          bubble.remove();
          streamTurn("/api/chat/edit", { index: view.index, text: area.value }, { text: area.value, images: view.images });
        },
      }),
      el("button", { type: "button", text: "Cancel", onclick: () => renderHistory(state.history) }),
    ),
  );
  bubble.replaceChildren(box);
  area.focus();
}

function regenerate() {
  if (state.busy) return;
  const box = main();
  const bubbles = [...box.children];
  // Drop the last question and its answer from view; the new turn redraws them.
  const lastUser = bubbles.map((n) => n.classList.contains("user")).lastIndexOf(true);
  let echo = null;
  if (lastUser >= 0) {
    const index = Number(bubbles[lastUser].dataset.index);
    const view = state.history.find((v) => v.index === index);
    echo = view ? { text: view.text, images: view.images } : null;
    bubbles.slice(lastUser).forEach((n) => n.remove());
  }
  streamTurn("/api/chat/regenerate", {}, echo);
}

function setBusy(busy) {
  state.busy = busy;
  document.getElementById("send").hidden = busy;
  document.getElementById("stop").hidden = !busy;
  document.body.classList.toggle("busy", busy);
}

export async function stopTurn() {
  try {
    if (state.turn) await api("POST", "/api/chat/stop", { turn: state.turn });
    else if (state.controller) state.controller.abort();
  } catch (err) {
    showError(err);
  }
}

function parseEvents(buffer, handle) {
  let start = 0;
  let end;
  while ((end = buffer.indexOf("\n\n", start)) >= 0) {
    const block = buffer.slice(start, end);
    start = end + 2;
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length) handle(event, JSON.parse(data.join("\n")));
  }
  return buffer.slice(start);
}

// Run one streamed turn; `echo` is the user's bubble to show while the reply streams.
export async function streamTurn(path, body, echo) {
  if (state.busy) return false;
  setBusy(true);
  const box = main();
  box.querySelector(".empty")?.remove();
  if (echo) box.append(userBubble({ text: echo.text, images: echo.images || [] }));
  const md = el("div", { className: "md pending", text: "…" });
  const live = el("div", { className: "bubble assistant streaming" }, md);
  box.append(live);
  scrollToEnd();
  state.controller = new AbortController();
  let ok = false;
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
        else if (event === "delta") {
          md.classList.remove("pending");
          md.innerHTML = data.html; // server-sanitized Markdown
          scrollToEnd();
        } else if (event === "notice") notice(data.message);
        else if (event === "done") {
          ok = true;
          showStats(data);
          for (const w of data.warnings || []) notice(w, { kind: "warn" });
        } else if (event === "error") {
          showError(new ApiError(data.status, data));
        }
      });
    }
  } catch (err) {
    if (!(err && err.name === "AbortError")) showError(err);
  } finally {
    state.turn = null;
    state.controller = null;
    setBusy(false);
    try {
      await reloadHistory();
    } catch (err) {
      showError(err);
    }
  }
  return ok;
}

function showStats(done) {
  const s = done.stats || {};
  const line = document.getElementById("last-stats");
  if (!s.bytes) {
    line.textContent = "";
    return;
  }
  const kb = (s.bytes / 1024).toFixed(1);
  const parts = [`last request ${kb} KB`, `${s.images || 0} images`, `~${s.estTokens || 0} tokens`];
  if (s.prefixBytes) parts.push(`${Math.round((s.prefixRatio || 0) * 100)}% prefix reused`);
  if (done.interrupted) parts.push("stopped");
  line.textContent = parts.join(" · ");
}
