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
  const res = await fetch(path, init);
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

export function notice(message, { kind = "info", hint = "", timeout = 6000 } = {}) {
  const box = document.getElementById("notices");
  const item = el(
    "div",
    { className: `notice ${kind}` },
    el("span", { className: "msg", text: message }),
    hint ? el("span", { className: "hint", text: hint }) : null,
    el("button", { type: "button", className: "close", text: "×", onclick: () => item.remove() }),
  );
  box.append(item);
  if (timeout) setTimeout(() => item.remove(), timeout);
  return item;
}

export function showError(err) {
  if (err instanceof ApiError) {
    notice(err.message, { kind: "error", hint: err.hint, timeout: 12000 });
  } else {
    notice(String((err && err.message) || err), { kind: "error", timeout: 12000 });
  }
}

export function humanSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export function percent(x) {
  return `${Math.round((x || 0) * 100)}%`;
}
