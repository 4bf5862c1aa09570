// Earlier versions of edited or regenerated turns (SPEC §3.5): a question whose turn replaced
// earlier versions shows "‹ m/m ›"; ‹ opens a read-only dialog with the earlier versions (the
// question, its answer and the turns that followed it then), one at a time, oldest first.
// The library keeps them in the archive and says which live turn each belongs to
// (`/api/versions`, store.history.earlier_versions()); nothing here changes the conversation.

import { api, el, openModal } from "./api.js";
import { assistantBubble, chip, userBubble } from "./bubbles.js";

let turns = {}; // "<turn index>": [[views of one earlier version], …], oldest first

// Ask the server which turns have earlier versions; resolves to the turn indices whose
// switcher changed (had versions before or has them now), for the caller to redraw.
export async function loadVersions() {
  let next = {};
  try {
    next = (await api("GET", "/api/versions")).turns || {};
  } catch {
    next = {}; // an extra, never a reason to fail the conversation
  }
  const changed = new Set([...Object.keys(turns), ...Object.keys(next)]);
  turns = next;
  return [...changed].map(Number);
}

function earlier(index) {
  const list = turns[String(index)];
  return Array.isArray(list) && list.length ? list : null;
}

function readOnlyNode(view) {
  if (view.kind === "attachment") return chip(view, true);
  return view.role === "user" ? userBubble(view, { readOnly: true }) : assistantBubble(view, { readOnly: true });
}

// "‹ m/m ›" for the question at `index`, or null when it replaced no earlier version.
export function versionSwitcher(index) {
  const list = earlier(index);
  if (!list) return null;
  const total = list.length + 1;
  return el(
    "span",
    { className: "versions", role: "group", "aria-label": "Versions of this message" },
    el("button", {
      type: "button",
      className: "version-prev",
      text: "‹",
      "aria-label": `Show earlier version ${total - 1} of ${total}`,
      onclick: (e) => showVersion(index, list.length - 1, e.currentTarget),
    }),
    el("span", { className: "version-count", text: `${total}/${total}` }),
    el("button", { type: "button", className: "version-next", text: "›", disabled: true, "aria-label": "Newer version (this is the current one)" }),
  );
}

// The dialog with earlier version k (0-based) of the turn at `index`.
function showVersion(index, k, opener) {
  const list = earlier(index);
  if (!list) return;
  const dialog = document.getElementById("versions-dialog");
  const total = list.length + 1;
  if (!dialog.dataset.wired) {
    dialog.dataset.wired = "1";
    document.getElementById("versions-close").addEventListener("click", () => dialog.close());
    // the earlier version is in the page only while the dialog is open
    dialog.addEventListener("close", () => document.getElementById("versions-body").replaceChildren());
  }
  document.getElementById("versions-title").textContent = `Version ${k + 1} of ${total} (earlier, read-only)`;
  const prev = document.getElementById("versions-prev");
  const next = document.getElementById("versions-next");
  prev.disabled = k === 0;
  prev.onclick = () => showVersion(index, k - 1, opener);
  // past the newest earlier version is the current one, in the conversation: close
  next.textContent = k + 1 < list.length ? "Newer ›" : "Current ›";
  next.onclick = () => (k + 1 < list.length ? showVersion(index, k + 1, opener) : dialog.close());
  document.getElementById("versions-body").replaceChildren(...list[k].map(readOnlyNode));
  openModal(dialog, document.getElementById("versions-title"), opener);
}
