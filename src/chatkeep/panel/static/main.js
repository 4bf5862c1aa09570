// Boot: one call to /api/state (settings from get_all() and the live history), then wire up.

import { api, el, showError, TOKEN } from "./api.js";
import { setShortcut, setupComposer } from "./composer.js";
import { renderHistory, setSettings } from "./conversation.js";
import { newSession, setupDrawer } from "./drawer.js";
import { applyPanelOptions, setupSettings } from "./settings.js";

function apply(settings) {
  setSettings(settings);
  setShortcut(settings.sendShortcut);
}

async function boot() {
  setupComposer();
  setupDrawer();
  setupSettings(apply);
  document.getElementById("new-session").addEventListener("click", newSession);
  if (!TOKEN) {
    document.getElementById("conversation").replaceChildren(
      el("p", { className: "empty", text: "Open the panel with the full URL printed by `chatkeep serve` (it ends in ?token=…)." }),
    );
    return;
  }
  try {
    const state = await api("GET", "/api/state");
    applyPanelOptions(state.settings);
    renderHistory(state.history);
    document.body.dataset.ready = "1";
  } catch (err) {
    showError(err);
  }
}

boot();
