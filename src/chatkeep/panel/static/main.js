// Boot: one call to /api/state (settings from get_all(), the live history, the loaded session,
// the archive size), then wire up. The composer has the focus once the page is ready.

import { el, readJson, showError, TOKEN, api } from "./api.js";
import { restoreDraft, setShortcut, setupComposer } from "./composer.js";
import { TAIL, refreshVersions, renderHistory, setSession, setSettings, setupScrolling } from "./conversation.js";
import { newSession, setupDrawer } from "./drawer.js";
import { setupMessageSearch } from "./search.js";
import { applyPanelOptions, renderModelPicker, setupSettings } from "./settings.js";
import { setupTransfer } from "./transfer.js";
import { setupTurns } from "./turn.js";

// The first load started in <head> (first-load.js), before the modules arrived; it brings the
// end of the history only: earlier entries are fetched as they scroll into view.
async function firstLoad() {
  let res = null;
  try {
    res = await window.chatkeepFirstLoad;
  } catch {
    res = null;
  }
  if (!res) return api("GET", `/api/state?tail=${TAIL}`);
  return readJson(res);
}

const firstState = TOKEN ? firstLoad() : null;

async function firstSession() {
  let res = null;
  try {
    res = await window.chatkeepFirstSession;
  } catch {
    res = null;
  }
  if (!res || !res.ok) return api("GET", "/api/sessions/current");
  return readJson(res);
}

function apply(settings) {
  setSettings(settings);
  setShortcut(settings.sendShortcut);
  renderModelPicker(settings);
}

function setupTheme() {
  const button = document.getElementById("theme-toggle");
  window.chatkeepTheme.apply(window.chatkeepTheme.get());
  button.addEventListener("click", () => window.chatkeepTheme.next());
}

async function boot() {
  setupTheme();
  setupScrolling();
  setupTurns();
  setupComposer();
  setupDrawer();
  setupTransfer();
  setupMessageSearch();
  setupSettings(apply);
  document.getElementById("new-session").addEventListener("click", newSession);
  if (!TOKEN) {
    document.getElementById("messages").replaceChildren(
      el("p", { className: "empty", text: "Open the panel with the full URL printed by `chatkeep serve` (it ends in ?token=…)." }),
    );
    return;
  }
  try {
    const state = await firstState;
    performance.mark("chatkeep-state");
    applyPanelOptions(state.settings);
    const { archived, start, length, usage } = state;
    renderHistory(state.history, { archived, start, length, usage, versions: false });
    restoreDraft(state.draftKey);
    document.getElementById("message").focus({ preventScroll: true });
    performance.mark("chatkeep-rendered");
    // The session's name is not part of the first load (SPEC §9): asked beside it.
    setSession((await firstSession()).current);
    document.body.dataset.ready = "1";
    performance.mark("chatkeep-ready");
    refreshVersions(); // earlier versions of edited turns: an extra, after the page is usable
  } catch (err) {
    showError(err);
  }
}

boot();
