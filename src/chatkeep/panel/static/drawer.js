// The sessions drawer: list, search (name matches marked, content matches badged), new, save,
// load, rename, pin, two-step delete. Session names are set with textContent only.

import { api, el, notice, showError } from "./api.js";
import { isBusy, renderHistory } from "./conversation.js";

let query = "";
let timer = null;
const CONFIRM_MS = 4000;

function markedName(name, q) {
  // The matched part of the name in <mark>, built from text nodes (never innerHTML).
  const span = el("span", { className: "session-name" });
  const i = q ? name.toLowerCase().indexOf(q.toLowerCase()) : -1;
  if (i < 0) {
    span.textContent = name;
    return span;
  }
  span.append(name.slice(0, i), el("mark", { text: name.slice(i, i + q.length) }), name.slice(i + q.length));
  return span;
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

function row(session, activeId) {
  const li = el("li", {
    className: `session${session.pinned ? " pinned" : ""}${session.id === activeId ? " active" : ""}`,
    dataset: { id: session.id },
  });
  const open = el(
    "button",
    { type: "button", className: "session-open", title: "Load this session", onclick: () => load(session.id) },
    session.pinned ? el("span", { className: "pin-mark", text: "📌" }) : null,
    markedName(session.name || "(unnamed)", query.trim()),
    session.contentMatch ? el("span", { className: "content-match", text: "matches content" }) : null,
    el("span", { className: "session-date muted", text: when(session.createdAt) }),
  );
  const del = el("button", { type: "button", className: "session-delete", text: "Delete" });
  del.addEventListener("click", () => {
    if (del.dataset.armed) {
      remove(session.id);
      return;
    }
    del.dataset.armed = "1";
    del.textContent = "Confirm delete";
    del.classList.add("danger");
    setTimeout(() => {
      delete del.dataset.armed;
      del.textContent = "Delete";
      del.classList.remove("danger");
    }, CONFIRM_MS);
  });
  const actions = el(
    "div",
    { className: "session-actions" },
    el("button", {
      type: "button",
      className: "session-pin",
      text: session.pinned ? "Unpin" : "Pin",
      onclick: () => patch(session.id, { pinned: !session.pinned }),
    }),
    el("button", { type: "button", className: "session-rename", text: "Rename", onclick: () => startRename(li, session) }),
    del,
  );
  li.append(open, actions);
  return li;
}

function startRename(li, session) {
  const input = el("input", { type: "text", className: "rename-input", maxlength: 80 });
  input.value = session.name || "";
  const save = () => {
    const name = input.value.trim();
    if (name && name !== session.name) patch(session.id, { name });
    else refresh();
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    } else if (e.key === "Escape") refresh();
  });
  li.replaceChildren(input, el("button", { type: "button", text: "Save", onclick: save }));
  input.focus();
}

function renderList(data) {
  const list = document.getElementById("session-list");
  list.replaceChildren(...data.sessions.map((s) => row(s, data.activeSessionId)));
  const empty = document.getElementById("session-empty");
  empty.hidden = data.sessions.length > 0;
  empty.textContent = query.trim() ? "No session matches." : "No saved sessions.";
}

export async function refresh() {
  try {
    const params = new URLSearchParams({ q: query });
    renderList(await api("GET", `/api/sessions?${params}`));
  } catch (err) {
    showError(err);
  }
}

async function load(id) {
  if (isBusy()) return notice("wait for the reply to finish (or stop it) first", { kind: "warn" });
  try {
    const data = await api("POST", `/api/sessions/${encodeURIComponent(id)}/load`);
    renderHistory(data.history);
    renderList(await api("GET", `/api/sessions?${new URLSearchParams({ q: query })}`));
  } catch (err) {
    showError(err);
  }
}

async function patch(id, changes) {
  try {
    await api("PATCH", `/api/sessions/${encodeURIComponent(id)}`, changes);
  } catch (err) {
    showError(err);
  }
  refresh();
}

async function remove(id) {
  try {
    await api("DELETE", `/api/sessions/${encodeURIComponent(id)}`);
  } catch (err) {
    showError(err);
  }
  refresh();
}

export async function newSession() {
  if (isBusy()) return notice("wait for the reply to finish (or stop it) first", { kind: "warn" });
  try {
    const data = await api("POST", "/api/sessions/new");
    renderHistory(data.history);
    if (data.session) notice(`saved as “${data.session.name}”`);
    if (!document.getElementById("drawer").hidden) refresh();
  } catch (err) {
    showError(err);
  }
}

async function saveCurrent() {
  try {
    const data = await api("POST", "/api/sessions", {});
    if (!data.session) notice("nothing to save yet", { kind: "warn" });
    renderList(data);
  } catch (err) {
    showError(err);
  }
}

export function setupDrawer() {
  const drawer = document.getElementById("drawer");
  document.getElementById("open-drawer").addEventListener("click", () => {
    drawer.hidden = !drawer.hidden;
    if (!drawer.hidden) refresh();
  });
  document.getElementById("close-drawer").addEventListener("click", () => (drawer.hidden = true));
  document.getElementById("drawer-new").addEventListener("click", newSession);
  document.getElementById("drawer-save").addEventListener("click", saveCurrent);
  document.getElementById("session-search").addEventListener("input", (e) => {
    query = e.target.value;
    clearTimeout(timer);
    timer = setTimeout(refresh, 200);
  });
}
