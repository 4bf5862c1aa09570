// Building the conversation's nodes: user bubbles, replies (with usage and cost), attachment
// chips, the failure box with Retry, copy buttons. Stored text goes in with textContent only;
// a reply's `html` is the server-sanitized Markdown. A button's click is an action dispatched
// on the store (store.js), heard by the module that does it.

import { el, imageUrl, isHttpUrl, openModal, showError } from "./api.js";
import { fmt } from "./format.js";
import { renderMath } from "./math.js";
import { dispatch, state } from "./store.js";

function priceOf(view) {
  const cards = state.settings.providers || {};
  const card = view.provider && cards[view.provider.name];
  const prices = card && card.prices;
  return prices && typeof prices === "object" ? prices : null;
}

// Cost in currency units: `input` counts every prompt token, cached or written or not (§6.4).
function costOf(usage, prices) {
  const plain = Math.max(0, (usage.input || 0) - (usage.cachedRead || 0) - (usage.cacheWrite || 0));
  const total =
    plain * (prices.input || 0) +
    (usage.cachedRead || 0) * (prices.cachedRead ?? prices.input ?? 0) +
    (usage.cacheWrite || 0) * (prices.cacheWrite ?? prices.input ?? 0) +
    (usage.output || 0) * (prices.output || 0);
  return total / 1e6;
}

function money(x) {
  if (x === 0) return "$0";
  return x < 0.01 ? `$${x.toFixed(4)}` : `$${x.toFixed(3)}`;
}

function usageText(usage, cost) {
  const bits = [`${fmt(usage.input)} in`];
  // the cache-hit share: what the provider read from its prompt cache, of the input
  if (usage.cachedRead) bits.push(`${fmt(usage.cachedRead)} cached (${Math.round((100 * usage.cachedRead) / Math.max(1, usage.input))}%)`);
  if (usage.cacheWrite) bits.push(`${fmt(usage.cacheWrite)} cache write`);
  bits.push(`${fmt(usage.output)} out`);
  if (cost !== null) bits.push(money(cost));
  return bits.join(" · ");
}

export function renderUsageTotals(views) {
  const line = document.getElementById("session-usage");
  if (!line) return;
  const total = { input: 0, cachedRead: 0, cacheWrite: 0, output: 0 };
  let cost = 0;
  let priced = false;
  let turns = 0;
  for (const v of views) {
    if (!v.usage) continue;
    turns += 1;
    for (const k of Object.keys(total)) total[k] += Number(v.usage[k] || 0);
    const prices = priceOf(v);
    if (prices) {
      priced = true;
      cost += costOf(v.usage, prices);
    }
  }
  line.textContent = turns ? `Session: ${usageText(total, priced ? cost : null)}` : "";
}

// -- building nodes ----------------------------------------------------------------------------

function fileName(url) {
  const path = String(url || "").replace(/\\/g, "/").split("?")[0];
  return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || "file";
}

export function chip(view, readOnly) {
  const a = view.attachment || {};
  const video = view.videoSrc && isHttpUrl(view.videoSrc.url) ? view.videoSrc.url : "";
  // An attachment an overflow rescue trimmed says so, with the size it had and the size kept.
  const trimmed = a.trimmed && typeof a.trimmed === "object" ? a.trimmed : null;
  const bits = [trimmed ? `${fmt(trimmed.keptChars)} of ${fmt(trimmed.originalChars)} chars kept` : `${fmt(a.chars)} chars`];
  if (a.images) bits.push(`${a.images} image${a.images === 1 ? "" : "s"}`);
  if (a.summarized) bits.push("condensed");
  const web = video || (isHttpUrl(a.url) ? a.url : "");
  // A local file (an upload's temporary path) shows its file name only.
  const local = !web && a.url ? fileName(a.url) : "";
  return el(
    "div",
    { className: "chip", dataset: { index: view.index, attachId: view.attachId || "" } },
    el("span", { className: `chip-icon ${video ? "video" : "page"}`, "aria-hidden": "true" }),
    el("span", { className: "chip-title", text: a.title || local || web || "attachment" }),
    web
      ? el("a", { className: "chip-url", href: web, target: "_blank", rel: "noopener noreferrer", text: web })
      : local && local !== a.title
        ? el("span", { className: "chip-url", text: local })
        : null,
    trimmed
      ? el("span", {
          className: "chip-trimmed",
          text: "trimmed",
          title: "Trimmed to fit the model's context window; the whole text is kept in the store",
        })
      : null,
    el("span", { className: "chip-meta", text: bits.join(", ") }),
    view.attachId && !readOnly
      ? el("button", {
          type: "button",
          className: "chip-undo",
          "aria-label": `Undo attachment ${a.title || local || web || ""}`.trim(),
          text: "Undo",
          onclick: () => dispatch("undo", { attachId: view.attachId }),
        })
      : null,
  );
}

export function images(list) {
  if (!list || !list.length) return null;
  return el(
    "div",
    { className: "bubble-images" },
    list.map((img, i) => {
      const src = img.src.startsWith("data:") ? img.src : imageUrl(img.src);
      const title = img.width ? `${img.width}×${img.height} ${img.mime || ""}` : img.mime || "";
      // Known sizes reserve the space before the pixels arrive, so the scroll position holds.
      // A click opens the lightbox (the link still works for a new tab with a middle click).
      const alt = `image you sent (${title.trim() || "image"})`;
      return el(
        "a",
        {
          href: src,
          target: "_blank",
          rel: "noopener noreferrer",
          "aria-label": `Open image ${i + 1}`,
          "aria-haspopup": "dialog",
          onclick: (e) => {
            if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            openLightbox(src, alt, e.currentTarget);
          },
        },
        el("img", { src, alt, title, width: img.width, height: img.height }),
      );
    }),
  );
}

// The lightbox: a modal <dialog> with the image at full size; Esc or Close shuts it and the
// focus goes back to the image link that opened it.
export function openLightbox(src, alt, opener) {
  const dialog = document.getElementById("lightbox");
  const frame = document.getElementById("lightbox-frame");
  if (!dialog.dataset.wired) {
    dialog.dataset.wired = "1";
    document.getElementById("lightbox-close").addEventListener("click", () => dialog.close());
    // a click on the backdrop (outside the dialog's box) closes it too
    dialog.addEventListener("click", (e) => e.target === dialog && dialog.close());
    // the image is in the page only while the lightbox is open
    dialog.addEventListener("close", () => frame.replaceChildren());
  }
  frame.replaceChildren(el("img", { id: "lightbox-image", src, alt }));
  document.getElementById("lightbox-open").href = src;
  openModal(dialog, document.getElementById("lightbox-close"), opener);
}

// A long user message (over FOLD_CHARS characters or FOLD_LINES lines) is shown folded, with
// "Show more"; the whole text is still there (copy and edit take all of it).
export const FOLD_CHARS = 1200;
export const FOLD_LINES = 20;

function userText(text) {
  const box = el("div", { className: "text", text });
  const long = text.length > FOLD_CHARS || text.split("\n").length > FOLD_LINES;
  if (!long) return box;
  box.classList.add("folded");
  box.id = `user-text-${Math.random().toString(36).slice(2, 10)}`;
  const toggle = el("button", {
    type: "button",
    className: "fold-toggle",
    text: "Show more",
    "aria-expanded": "false",
    "aria-controls": box.id,
  });
  toggle.addEventListener("click", () => {
    const folded = box.classList.toggle("folded");
    toggle.textContent = folded ? "Show more" : "Show less";
    toggle.setAttribute("aria-expanded", String(!folded));
  });
  return [box, toggle];
}

export function failureBox(message, hint) {
  return el(
    "div",
    { className: "bubble-error", role: "alert" },
    el("span", { className: "msg", text: message }),
    hint ? el("span", { className: "hint", text: hint }) : null,
    el("button", { type: "button", className: "retry primary", text: "Retry", onclick: () => dispatch("retry") }),
  );
}

export function userBubble(view, { readOnly = false, unanswered = false } = {}) {
  const bubble = el(
    "div",
    { className: `bubble user${readOnly ? " archived" : ""}`, dataset: { index: view.index } },
    userText(view.text || ""),
    images(view.images),
  );
  const copy = el("button", { type: "button", className: "copy", text: "Copy", "aria-label": "Copy message" });
  copy.addEventListener("click", () => copyText(view.text || "", copy));
  const editable = view.index !== undefined && !readOnly;
  bubble.append(
    el(
      "div",
      { className: "actions" },
      copy,
      editable
        ? el("button", {
            type: "button",
            className: "edit",
            text: "Edit",
            "aria-label": "Edit and resend this message",
            onclick: () => dispatch("edit", { bubble, view }),
          })
        : null,
    ),
  );
  if (view.unanswered) {
    // A question a failed send left behind when a different one was asked (SPEC §3.5): it is
    // kept and shown, and no request sends it.
    bubble.classList.add("left-out");
    bubble.append(
      el("p", {
        className: "left-out-note meta",
        text: "Not answered — this question failed and is left out of what the model sees. Edit to ask it again.",
      }),
    );
  } else if (unanswered) {
    const f = state.failure;
    bubble.classList.add("failed");
    bubble.append(
      f ? failureBox(f.message, f.hint) : failureBox("No reply to this message yet.", ""),
    );
  }
  return bubble;
}

export function stripThought(text) {
  return String(text || "").replace(/^\s*<think>[\s\S]*?(?:<\/think>|$)/, "").trimStart();
}

export async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    const old = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => (button.textContent = old), 1500);
  } catch (err) {
    showError(new Error(`could not copy: ${err.message || err}`));
  }
}

export function onCodeCopy(e) {
  const button = e.target.closest(".code-copy");
  if (!button) return;
  const pre = button.closest(".code-block")?.querySelector("pre");
  if (pre) copyText(pre.textContent, button);
}

function usageLine(view) {
  if (!view.usage) return null;
  const prices = priceOf(view);
  const cost = prices ? costOf(view.usage, prices) : null;
  return el("div", { className: "usage", text: usageText(view.usage, cost) });
}

// What a reply kept beside its text and never sends (SPEC §14): its reasoning and the tools it
// called with their results, folded; plain text only (textContent), whatever the source held.
function keptAside(view) {
  const folds = [];
  if (typeof view.reasoning === "string" && view.reasoning) {
    folds.push(
      el("details", { className: "aside reasoning" }, el("summary", { text: "Reasoning" }), el("div", { className: "aside-text", text: view.reasoning })),
    );
  }
  const calls = Array.isArray(view.toolCalls) ? view.toolCalls : [];
  const results = Array.isArray(view.toolResult) ? view.toolResult : [];
  if (calls.length || results.length) {
    const rows = [];
    for (const c of calls) rows.push(el("div", { className: "aside-text", text: `${c.name || "tool"}(${c.arguments || ""})` }));
    for (const r of results) rows.push(el("div", { className: "aside-text result", text: `${r.name ? `${r.name} → ` : "→ "}${r.content || ""}` }));
    const label = calls.length ? `Tool calls (${calls.length})` : `Tool results (${results.length})`;
    folds.push(el("details", { className: "aside tools" }, el("summary", { text: label }), ...rows));
  }
  return folds;
}

export function assistantBubble(view, { isLast = false, readOnly = false, cutOff = false, stopped = false } = {}) {
  const body = el("div", { className: "md" });
  body.innerHTML = view.html || ""; // server-sanitized Markdown (markdown-it-py, html off)
  renderMath(body);
  const meta = [];
  if (view.provider) meta.push([view.provider.name, view.provider.model].filter(Boolean).join(" · "));
  // An interrupted reply is incomplete: "stopped" when the user stopped it on this page, "cut
  // off" otherwise (a dropped or cut-short stream); the last one offers Retry, not Regenerate.
  const incomplete = Boolean(view.interrupted) && !stopped;
  if (cutOff || incomplete) meta.push("interrupted — the reply was cut off");
  else if (view.interrupted) meta.push("stopped");
  const copy = el("button", { type: "button", className: "copy", text: "Copy", "aria-label": "Copy reply" });
  copy.addEventListener("click", () => copyText(stripThought(view.text), copy));
  return el(
    "div",
    {
      className: `bubble assistant${readOnly ? " archived" : ""}${view.interrupted ? " interrupted" : ""}${cutOff || incomplete ? " partial" : ""}`,
      dataset: { index: view.index },
    },
    ...keptAside(view),
    body,
    usageLine(view),
    el(
      "div",
      { className: "actions" },
      meta.length ? el("span", { className: "meta", text: meta.join(" — ") }) : null,
      copy,
      isLast && !readOnly
        ? el("button", {
            type: "button",
            className: incomplete ? "regenerate cut-short" : "regenerate",
            text: incomplete ? "Retry" : "Regenerate",
            "aria-label": incomplete ? "Retry: the reply was cut off" : "Regenerate",
            onclick: () => dispatch("regenerate"),
          })
        : !readOnly
          ? // an earlier reply: asking its question again replaces it and what follows (SPEC
            // §3.5; the replaced turns are kept in the archive as an earlier version)
            el("button", {
              type: "button",
              className: "regenerate-here",
              text: "Regenerate",
              title: "Ask this question again: this reply and everything after it are replaced (kept in the archive)",
              onclick: () => dispatch("regenerate-at", { index: view.index }),
            })
          : null,
    ),
  );
}
