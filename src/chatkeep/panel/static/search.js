// Message search in the drawer (SPEC §16): under the session matches, a "Messages" group of
// hits with their snippets (the matched words in <mark>, built from the server's text parts:
// stored text only ever becomes text nodes). A hit opens where it was said: a live entry is
// scrolled into view; a saved session is loaded with the drawer's own load (the live
// conversation is written back first) and scrolled to the entry; an archived or evicted entry
// is shown read-only in a dialog.

import { api, el, openModal, showError } from "./api.js";
import { assistantBubble, chip, userBubble } from "./bubbles.js";
import { revealEntry } from "./conversation.js";
import { load } from "./drawer.js";
import { when } from "./format.js";

const DEBOUNCE_MS = 250;
const HIGHLIGHT_MS = 2500;
const ROLES = { user: "You", assistant: "Assistant", system: "System" };

let query = "";
let shown = 0;
let seq = 0; // answers to an older query are dropped
let timer = null;

function place(hit) {
  if (hit.where === "live") return "Current conversation";
  if (hit.where === "archive") return "Archive";
  const name = hit.sessionName || "(unnamed session)";
  return hit.where === "evicted" ? `${name} (out of the drawer)` : name;
}

function snippet(parts) {
  const span = el("span", { className: "hit-snippet" });
  for (const [text, marked] of parts || []) span.append(marked ? el("mark", { text }) : document.createTextNode(text));
  return span;
}

function hitRow(hit) {
  const open = el(
    "button",
    { type: "button", className: "hit-open", dataset: { where: hit.where, index: hit.index }, onclick: () => openHit(hit, open) },
    el(
      "span",
      { className: "hit-head" },
      el("span", { className: "hit-where", text: place(hit) }),
      el("span", { className: "hit-role", text: ROLES[hit.role] || hit.role || "" }),
      el("span", { className: "hit-date muted", text: when(hit.createdAt) }),
    ),
    snippet(hit.parts),
  );
  return el("li", { className: "message-hit" }, open);
}

function section() {
  let box = document.getElementById("message-hits");
  if (box) return box;
  box = el(
    "section",
    { id: "message-hits", "aria-labelledby": "message-hits-title", hidden: true },
    el("h3", { id: "message-hits-title", text: "Messages" }),
    el("ul", { id: "message-hit-list", "aria-label": "Messages found" }),
    el("button", { id: "message-more", type: "button", hidden: true, text: "Show more messages", onclick: () => search(true) }),
    el("p", { id: "message-empty", className: "muted", hidden: true, text: "No message matches." }),
    el("p", { id: "message-status", className: "visually-hidden", role: "status" }),
  );
  document.getElementById("session-empty").after(box);
  return box;
}

async function search(more = false) {
  const box = section();
  const q = query.trim();
  const mine = ++seq;
  if (!q) {
    box.hidden = true;
    document.getElementById("message-hit-list").replaceChildren();
    shown = 0;
    return;
  }
  try {
    const params = new URLSearchParams({ q: query, offset: String(more ? shown : 0) });
    const data = await api("GET", `/api/search?${params}`);
    if (mine !== seq) return;
    const list = document.getElementById("message-hit-list");
    const rows = data.hits.map(hitRow);
    if (more) list.append(...rows);
    else list.replaceChildren(...rows);
    shown = (more ? shown : 0) + data.hits.length;
    box.hidden = false;
    document.getElementById("message-more").hidden = !data.more;
    document.getElementById("message-empty").hidden = shown > 0;
    const count = `${shown}${data.more ? "+" : ""}`;
    document.getElementById("message-status").textContent = shown ? `${count} messages found` : "No message matches.";
    if (more && rows.length) rows[0].querySelector("button").focus();
  } catch (err) {
    if (mine === seq) showError(err);
  }
}

// -- opening a hit ---------------------------------------------------------------------------

async function reveal(index) {
  const node = await revealEntry(index);
  if (!node) return;
  node.classList.add("search-hit");
  if (!node.hasAttribute("tabindex")) node.setAttribute("tabindex", "-1");
  node.focus({ preventScroll: true });
  setTimeout(() => node.classList.remove("search-hit"), HIGHLIGHT_MS);
}

function entryDialog() {
  let dialog = document.getElementById("search-entry");
  if (dialog) return dialog;
  dialog = el(
    "dialog",
    { id: "search-entry", "aria-labelledby": "search-entry-title" },
    el(
      "div",
      { className: "drawer-head" },
      el("h2", { id: "search-entry-title", tabindex: "-1", text: "Found message" }),
      el("button", { type: "button", className: "icon", "aria-label": "Close the message", text: "×", onclick: () => dialog.close() }),
    ),
    el("p", { className: "muted search-entry-where" }),
    el("div", { className: "search-entry-body" }),
  );
  dialog.addEventListener("click", (e) => e.target === dialog && dialog.close());
  document.body.append(dialog);
  return dialog;
}

function readOnly(view) {
  if (view.kind === "attachment") return chip(view, true);
  return view.role === "user" ? userBubble(view, { readOnly: true }) : assistantBubble(view, { readOnly: true });
}

async function showEntry(hit, opener, label = place(hit)) {
  const params = new URLSearchParams({ where: hit.where, index: String(hit.index), session: hit.sessionId || "" });
  try {
    const data = await api("GET", `/api/search/entry?${params}`);
    const dialog = entryDialog();
    const kind = hit.where === "archive" ? "archived message" : "message, read-only";
    dialog.querySelector(".search-entry-where").textContent = `${label} · ${kind} · ${when(hit.createdAt)}`;
    dialog.querySelector(".search-entry-body").replaceChildren(readOnly(data.entry));
    openModal(dialog, dialog.querySelector("h2"), opener);
  } catch (err) {
    showError(err);
  }
}

async function openHit(hit, button) {
  if (hit.where === "archive" || hit.where === "evicted") return showEntry(hit, button);
  if (hit.where === "live") {
    document.getElementById("drawer").close();
    return reveal(hit.index);
  }
  const data = await load(hit.sessionId); // writes the live conversation back first
  if (!data) return;
  try {
    const params = new URLSearchParams({ session: hit.sessionId, index: String(hit.index) });
    const at = await api("GET", `/api/search/locate?${params}`);
    if (at.live !== undefined) return reveal(at.live);
    // the live window moved it to the archive on load
    return showEntry({ ...hit, where: "archive", index: at.archive }, document.getElementById("message"), place(hit));
  } catch (err) {
    showError(err);
  }
}

export function setupMessageSearch() {
  section();
  const input = document.getElementById("session-search");
  input.addEventListener("input", () => {
    query = input.value;
    clearTimeout(timer);
    timer = setTimeout(() => search(), DEBOUNCE_MS);
  });
  document.getElementById("open-drawer").addEventListener("click", () => {
    query = input.value;
    search();
  });
  const css = document.querySelector('link[href^="/static/panel.css"]');
  const version = css ? new URL(css.href).search : "";
  document.head.append(el("link", { rel: "stylesheet", href: `/static/search.css${version}` }));
}
