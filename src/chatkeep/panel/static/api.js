// Shared helpers: the launch token, API calls, DOM building, notices.
// Stored text only ever reaches the DOM through textContent (el() never sets innerHTML).

export const TOKEN = new URLSearchParams(location.search).get("token") || "";

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.type = err.type || "Error";
    this.hint = err.hint || "";
  }
}

export function authHeaders(extra = {}) {
  return { "X-Chatkeep-Token": TOKEN, ...extra };
}

export async function api(method, path, body, { raw = false, headers = {} } = {}) {
  const init = { method, headers: authHeaders(headers) };
  if (body !== undefined) {
    if (raw) {
      init.body = body;
    } else {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
  }
  return readJson(await fetch(path, init));
}

// A response's JSON (null when it has none); a failed status is an ApiError carrying it.
export async function readJson(res) {
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export function imageUrl(src) {
  return `${src}?token=${encodeURIComponent(TOKEN)}`;
}

// el("div", {className: "x", text: "stored text", onclick: fn}, child, "more text")
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function isHttpUrl(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

// One toast at a time, always above whatever is on top: inside the open modal dialog when there
// is one (a dialog's backdrop covers everything outside it, and there it sits at the dialog's top,
// above its heading and close button), else in a strip between the header and the conversation.
// A toast takes its own room and covers nothing; a conversation read at its end stays at its end.
let toastTimer = null;

export function homeNotices(box = document.getElementById("notices")) {
  const conversation = document.getElementById("conversation");
  if (box && conversation && box.nextElementSibling !== conversation) conversation.before(box);
  box?.classList.remove("in-dialog");
}

function keepingEnd(change) {
  const box = document.getElementById("conversation");
  const atEnd = box && box.scrollHeight - box.scrollTop - box.clientHeight < 48;
  change();
  if (atEnd) box.scrollTop = box.scrollHeight;
}

function toastHost() {
  const dialogs = [...document.querySelectorAll("dialog[open]")];
  return dialogs.length ? dialogs[dialogs.length - 1] : document.body;
}

export function notice(message, { kind = "info", hint = "", timeout = 6000 } = {}) {
  const box = document.getElementById("notices");
  const host = toastHost();
  if (host === document.body) homeNotices(box);
  else if (box.parentElement !== host) {
    host.prepend(box);
    box.classList.add("in-dialog");
  }
  const item = el(
    "div",
    { className: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
    el("span", { className: "msg", text: message }),
    hint ? el("span", { className: "hint", text: hint }) : null,
    el("button", {
      type: "button",
      className: "close",
      "aria-label": "Dismiss",
      text: "×",
      onclick: () => item.remove(),
    }),
  );
  keepingEnd(() => box.replaceChildren(item));
  clearTimeout(toastTimer);
  if (timeout) toastTimer = setTimeout(() => item.remove(), timeout);
  return item;
}

export function showError(err) {
  if (err instanceof ApiError) {
    notice(err.message, { kind: "error", hint: err.hint, timeout: 12000 });
  } else {
    notice(String((err && err.message) || err), { kind: "error", timeout: 12000 });
  }
}

// Modal dialogs (drawer, settings, preview): native <dialog> opened with showModal() makes the
// rest of the page inert and closes on Esc; focus goes to `focus` (or the dialog's first
// heading) and comes back to the element that opened it.
const FOCUSABLE =
  "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1']), summary";

function focusables(dialog) {
  return [...dialog.querySelectorAll(FOCUSABLE)].filter(
    (n) => !n.hidden && n.getClientRects().length && n.getAttribute("aria-hidden") !== "true",
  );
}

// Tab and Shift+Tab wrap inside the dialog (a native modal lets focus leave to the browser).
function trapTab(e) {
  if (e.key !== "Tab") return;
  const items = focusables(e.currentTarget);
  if (!items.length) return;
  const first = items[0];
  const last = items[items.length - 1];
  const active = document.activeElement;
  const at = items.indexOf(active);
  const inside = e.currentTarget.contains(active);
  const afterLast = inside && at < 0 && last.compareDocumentPosition(active) & Node.DOCUMENT_POSITION_FOLLOWING;
  if (e.shiftKey && (at === 0 || (at < 0 && !afterLast))) {
    // From the first control, the heading or outside: round to the last control.
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (at === items.length - 1 || afterLast || !inside)) {
    e.preventDefault();
    first.focus();
  }
}

// `opener` is the control that asked for the dialog (captured before any await); the focus goes
// back to it on close unless the user has already moved the focus somewhere else.
export function openModal(dialog, focus, opener = document.activeElement) {
  if (!dialog.dataset.trapped) {
    dialog.addEventListener("keydown", trapTab);
    dialog.dataset.trapped = "1";
  }
  if (!dialog.open) dialog.showModal();
  const target = focus || dialog.querySelector("[autofocus], h2[tabindex]") || dialog;
  target.focus({ preventScroll: true });
  dialog.scrollTop = 0;
  dialog.addEventListener(
    "close",
    () => {
      const box = document.getElementById("notices");
      if (box && dialog.contains(box)) homeNotices(box);
      const now = document.activeElement;
      const unplaced = !now || now === document.body || dialog.contains(now) || now === opener;
      if (unplaced && opener && opener.isConnected && typeof opener.focus === "function") opener.focus();
    },
    { once: true },
  );
}

export function humanSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export function percent(x) {
  return `${Math.round((x || 0) * 100)}%`;
}
