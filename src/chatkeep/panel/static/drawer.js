// The sessions drawer (a modal dialog): list, search (name matches marked, content matches
// badged), new, Save (writes back into the loaded session), Save as new (a copy), load (the
// server writes the live conversation back first), rename, pin, two-step delete.
// Session names are set with textContent only.

import { api, el, notice, openModal, showError } from "./api.js";
import { currentSession, isBusy, renderHistory, setSession } from "./conversation.js";
import { when } from "./format.js";

let query = "";
let timer = null;
let shown = 0; // rows of the listing on screen
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

function row(session, activeId) {
  const li = el("li", {
    className: `session${session.pinned ? " pinned" : ""}${session.id === activeId ? " active" : ""}`,
    dataset: { id: session.id },
  });
  const open = el(
    "button",
    { type: "button", className: "session-open", title: "Load this session", onclick: () => load(session.id) },
    session.pinned ? el("span", { className: "pin-mark", text: "Pinned" }) : null,
    markedName(session.name || "(unnamed)", query.trim()),
    session.contentMatch ? el("span", { className: "content-match", text: "matches content" }) : null,
    el("span", { className: "session-date muted", text: when(session.createdAt) }),
  );
  const del = el("button", {
    type: "button",
    className: "session-delete",
    text: "Delete",
    "aria-label": `Delete session ${session.name || ""}`.trim(),
  });
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
      "aria-pressed": String(Boolean(session.pinned)),
      onclick: () => patch(session.id, { pinned: !session.pinned }),
    }),
    el("button", {
      type: "button",
      className: "session-rename",
      text: "Rename",
      "aria-label": `Rename session ${session.name || ""}`.trim(),
      onclick: () => startRename(li, session),
    }),
    del,
  );
  li.append(open, actions);
  return li;
}

function startRename(li, session) {
  const input = el("input", { type: "text", className: "rename-input", maxlength: 80, "aria-label": "New name" });
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
    } else if (e.key === "Escape") {
      e.preventDefault(); // Esc leaves the rename, not the drawer
      e.stopPropagation();
      refresh();
    }
  });
  li.replaceChildren(input, el("button", { type: "button", text: "Save", onclick: save }));
  input.focus();
}

function renderList(data, append = false) {
  // One page of the drawer; "Show more" appends the next one (append = true).
  if ("current" in data) setSession(data.current);
  const list = document.getElementById("session-list");
  const rows = data.sessions.map((s) => row(s, data.activeSessionId));
  if (append) list.append(...rows);
  else list.replaceChildren(...rows);
  shown = (append ? shown : 0) + data.sessions.length;
  document.getElementById("session-more").hidden = !data.more;
  const empty = document.getElementById("session-empty");
  empty.hidden = shown > 0;
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

async function showMore() {
  try {
    const params = new URLSearchParams({ q: query, offset: String(shown) });
    renderList(await api("GET", `/api/sessions?${params}`), true);
  } catch (err) {
    showError(err);
  }
}

// Load a session (also for a message hit, search.js): its answer, or null when it did not load.
export async function load(id) {
  if (isBusy()) {
    notice("wait for the reply to finish (or stop it) first", { kind: "warn" });
    return null;
  }
  try {
    const data = await api("POST", `/api/sessions/${encodeURIComponent(id)}/load`);
    renderHistory(data.history, { archived: data.archived, start: data.start, length: data.length, usage: data.usage });
    setSession(data.current);
    if (data.savedBack) notice(`your conversation was saved as “${data.savedBack.name}”`);
    document.getElementById("drawer").close();
    document.getElementById("message").focus();
    return data;
  } catch (err) {
    showError(err);
    return null;
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
    renderHistory(data.history, { archived: data.archived, start: data.start, length: data.length, usage: data.usage });
    setSession(data.current);
    document.getElementById("message").focus();
    if (data.session) notice(`saved as “${data.session.name}”`);
    if (document.getElementById("drawer").open) refresh();
  } catch (err) {
    showError(err);
  }
}

// Save: into the loaded session (no new copy); with none loaded, Save makes the first copy.
async function saveCurrent() {
  const current = currentSession();
  if (!current) return saveAsNew();
  try {
    const data = await api("POST", `/api/sessions/${encodeURIComponent(current.id)}/update`, {});
    if (!data.session) notice("nothing to save yet", { kind: "warn" });
    else notice(`saved “${data.session.name}”`);
    renderList(data);
  } catch (err) {
    showError(err);
  }
}

async function saveAsNew() {
  try {
    const data = await api("POST", "/api/sessions", {});
    if (!data.session) notice("nothing to save yet", { kind: "warn" });
    else notice(`saved as “${data.session.name}”`);
    renderList(data);
  } catch (err) {
    showError(err);
  }
}

export function setupDrawer() {
  const drawer = document.getElementById("drawer");
  document.getElementById("open-drawer").addEventListener("click", () => {
    openModal(drawer, document.getElementById("session-search"));
    refresh();
  });
  document.getElementById("close-drawer").addEventListener("click", () => drawer.close());
  // A click on the backdrop (outside the panel's box) closes the drawer.
  drawer.addEventListener("click", (e) => e.target === drawer && drawer.close());
  document.getElementById("drawer-new").addEventListener("click", newSession);
  document.getElementById("drawer-save").addEventListener("click", saveCurrent);
  document.getElementById("drawer-save-new").addEventListener("click", saveAsNew);
  document.getElementById("session-more").addEventListener("click", showMore);
  document.getElementById("session-search").addEventListener("input", (e) => {
    query = e.target.value;
    clearTimeout(timer);
    timer = setTimeout(refresh, 200);
  });
}
