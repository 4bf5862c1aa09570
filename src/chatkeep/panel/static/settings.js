// Settings (provider cards, system prompt, panel options), the header's model picker and the
// request preview dialog. Settings has one Save: changed provider cards first, then the rest;
// an error is shown inside the dialog (above its backdrop) and nothing after it is sent.

import { ApiError, api, el, humanSize, notice, openModal, percent, showError } from "./api.js";
import { fmt } from "./format.js";

const STYLES = ["chat", "responses", "anthropic"];
let onApply = () => {};

export function applyPanelOptions(settings) {
  const size = Number(settings.fontSize) || 14;
  document.documentElement.style.setProperty("--font-size", `${size}px`);
  onApply(settings);
}

function field(label, input) {
  return el("label", {}, label, " ", input);
}

function input(type, value, attrs = {}) {
  const node = el("input", { type, ...attrs });
  if (type === "checkbox") node.checked = Boolean(value);
  else node.value = value ?? "";
  return node;
}

function cardForm(name, card, isNew) {
  const style = el("select", { className: "p-style" }, STYLES.map((s) => el("option", { value: s, text: s })));
  style.value = card.style || "chat";
  const nameInput = input("text", name, { className: "p-name", placeholder: "name", readonly: !isNew });
  const baseUrl = input("url", card.baseUrl, { className: "p-baseUrl", placeholder: "https://api.openai.com/v1" });
  const model = input("text", card.model, { className: "p-model", placeholder: "model id" });
  const keyEnv = input("text", card.apiKeyEnv, { className: "p-apiKeyEnv", placeholder: "OPENAI_API_KEY" });
  const key = input("password", "", {
    className: "p-apiKey",
    placeholder: card.hasApiKey ? "(stored — leave empty to keep)" : "(optional)",
    autocomplete: "off",
  });
  const temperature = input("number", card.temperature, { className: "p-temperature", min: 0, max: 2, step: 0.1 });
  const maxTokens = input("number", card.maxTokens, { className: "p-maxTokens", min: 1 });
  const stream = input("checkbox", card.stream !== false, { className: "p-stream" });
  // The card's prices (per million tokens, the library's price data for its usage and cost):
  // input and output together, cached reads and cache writes optional.
  const prices = card.prices && typeof card.prices === "object" ? card.prices : {};
  const price = (key) => input("number", prices[key], { className: `p-price-${key}`, min: 0, step: "any", placeholder: key === "input" || key === "output" ? "" : "as input" });
  const priceInputs = { input: price("input"), cachedRead: price("cachedRead"), cacheWrite: price("cacheWrite"), output: price("output") };
  const priceBox = el(
    "fieldset",
    { className: "prices" },
    el("legend", { text: "Prices per million tokens" }),
    el("div", { className: "grid" }, field("Input", priceInputs.input), field("Cached read", priceInputs.cachedRead),
      field("Cache write", priceInputs.cacheWrite), field("Output", priceInputs.output)),
  );
  const form = el(
    "fieldset",
    { className: "provider-card" },
    el("legend", { text: isNew ? "New provider" : name }),
    el("div", { className: "grid" }, field("Name", nameInput), field("Style", style), field("Base URL", baseUrl),
      field("Model", model), field("API key env", keyEnv), field("API key", key),
      field("Temperature", temperature), field("Max tokens", maxTokens),
      el("label", { className: "check" }, stream, " stream")),
    priceBox,
  );
  form.dataset.dirty = isNew ? "1" : "";
  form.addEventListener("input", () => (form.dataset.dirty = "1"));
  form.collect = () => {
    const cardName = nameInput.value.trim();
    const body = { style: style.value, baseUrl: baseUrl.value.trim(), model: model.value.trim(), stream: stream.checked };
    if (keyEnv.value.trim()) body.apiKeyEnv = keyEnv.value.trim();
    if (key.value) body.apiKey = key.value;
    if (temperature.value !== "") body.temperature = Number(temperature.value);
    if (maxTokens.value !== "") body.maxTokens = Number(maxTokens.value);
    const set = Object.entries(priceInputs).filter(([, box]) => box.value !== "");
    if (set.length) body.prices = Object.fromEntries(set.map(([k, box]) => [k, Number(box.value)]));
    return { name: cardName, body, isNew };
  };
  const remove = async () => {
    if (isNew) {
      form.remove();
      return;
    }
    try {
      fill(await api("DELETE", `/api/providers/${encodeURIComponent(name)}`));
      settingsError(null);
    } catch (err) {
      settingsError(err);
    }
  };
  form.append(
    el("div", { className: "actions" },
      el("button", { type: "button", className: "p-delete", text: isNew ? "Discard" : "Delete", "aria-label": `${isNew ? "Discard new provider" : `Delete provider ${name}`}`, onclick: remove })),
  );
  return form;
}

// The fields an error message can be about: a card's own keys, and the settings below the cards.
const CARD_FIELDS = ["baseUrl", "model", "apiKeyEnv", "apiKey", "temperature", "maxTokens", "style", "stream", "name"];
const SETTING_FIELDS = ["activeProvider", "activeModel", "systemPrompt", "replyLanguage", "fontSize", "sendShortcut", "thoughtAutoCollapse"];

function fieldNamed(message, names) {
  // The first field key the message names as a word ("…: baseUrl must be …").
  let best = null;
  for (const key of names) {
    const at = message.search(new RegExp(`\\b${key}\\b`));
    if (at >= 0 && (best === null || at < best.at)) best = { key, at };
  }
  return best ? best.key : null;
}

function clearFieldErrors() {
  const dialog = document.getElementById("settings-dialog");
  dialog.querySelectorAll(".field-error").forEach((n) => n.remove());
  dialog.querySelectorAll("[aria-invalid]").forEach((n) => {
    n.removeAttribute("aria-invalid");
    n.removeAttribute("aria-describedby");
  });
}

// The error next to what it is about: inside the provider card (`form`) or beside the setting it
// names, the field marked invalid and focused; the box at the top of the dialog says it too.
function settingsError(err, form = null) {
  const box = document.getElementById("settings-error");
  clearFieldErrors();
  if (!err) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  // A "settings saved" toast of an earlier Save never stays up over an error.
  document.querySelectorAll("#notices .notice:not(.error)").forEach((n) => n.remove());
  const message = err.message || String(err);
  box.replaceChildren(
    el("strong", { text: message }),
    err.hint ? el("span", { className: "hint", text: err.hint }) : null,
  );
  box.hidden = false;
  let target = null;
  let anchor = null;
  if (form) {
    const key = fieldNamed(message, CARD_FIELDS) || (form.querySelector(".p-name").value.trim() ? "baseUrl" : "name");
    const price = /\bprices\.(input|cachedRead|cacheWrite|output)\b/.exec(message);
    target = (price && form.querySelector(`.p-price-${price[1]}`)) || form.querySelector(`.p-${key}`) || form.querySelector(".p-name");
    anchor = form.querySelector("legend");
  } else {
    const key = fieldNamed(message, SETTING_FIELDS);
    target = key ? document.getElementById(`set-${key}`) : null;
    anchor = target ? target.closest("label") : null;
  }
  if (!target || !anchor) {
    box.scrollIntoView({ block: "nearest" });
    return;
  }
  const id = `field-error-${Math.random().toString(36).slice(2, 9)}`;
  const note = el(
    "div",
    { className: "field-error", id },
    el("strong", { text: message }),
    err.hint ? el("span", { className: "hint", text: err.hint }) : null,
  );
  anchor.after(note);
  target.setAttribute("aria-invalid", "true");
  target.setAttribute("aria-describedby", id);
  note.scrollIntoView({ block: "nearest" });
  target.focus({ preventScroll: true });
}

let lastSettings = {};

function fill(settings) {
  lastSettings = settings;
  const cards = document.getElementById("provider-cards");
  const providers = settings.providers || {};
  cards.replaceChildren(...Object.entries(providers).map(([n, c]) => cardForm(n, c, false)));
  const active = document.getElementById("set-activeProvider");
  active.replaceChildren(
    el("option", { value: "", text: "(none — environment)" }),
    ...Object.keys(providers).map((n) => el("option", { value: n, text: n })),
  );
  active.value = settings.activeProvider || "";
  document.getElementById("set-activeModel").value = settings.activeModel || "";
  document.getElementById("set-systemPrompt").value = settings.systemPrompt || "";
  document.getElementById("set-replyLanguage").value = settings.replyLanguage || "";
  document.getElementById("set-fontSize").value = settings.fontSize;
  document.getElementById("set-sendShortcut").value = settings.sendShortcut;
  document.getElementById("set-thoughtAutoCollapse").checked = Boolean(settings.thoughtAutoCollapse);
  applyPanelOptions(settings);
}

// After some cards were saved and a later one failed: the saved cards become ordinary cards
// and the choices follow, while the card in error stays as the user typed it.
function keepSaved(settings, saved) {
  lastSettings = settings;
  const providers = settings.providers || {};
  for (const [form, name] of saved) {
    if (form.isConnected && providers[name]) form.replaceWith(cardForm(name, providers[name], false));
  }
  const active = document.getElementById("set-activeProvider");
  const chosen = active.value;
  active.replaceChildren(
    el("option", { value: "", text: "(none — environment)" }),
    ...Object.keys(providers).map((n) => el("option", { value: n, text: n })),
  );
  active.value = providers[chosen] ? chosen : settings.activeProvider || "";
  onApply(settings);
}

async function save() {
  const forms = [...document.querySelectorAll("#provider-cards .provider-card")].filter((f) => f.dataset.dirty);
  let settings = lastSettings;
  let activate = "";
  let failing = null;
  const saved = [];
  // A toast of an earlier Save goes now: what shows next is this Save's outcome.
  document.querySelectorAll("#notices .notice:not(.error)").forEach((n) => n.remove());
  try {
    for (const form of forms) {
      failing = form;
      const { name, body, isNew } = form.collect();
      if (!name) throw new ApiError(400, { error: { message: "a new provider needs a name", hint: "fill in Name, or Discard the card" } });
      const first = isNew && !document.getElementById("set-activeProvider").value && !activate;
      if (first) activate = name;
      settings = await api("PUT", `/api/providers/${encodeURIComponent(name)}${first ? "?activate=1" : ""}`, body);
      form.dataset.dirty = "";
      saved.push([form, name]);
    }
    failing = null;
    const chosen = document.getElementById("set-activeProvider").value || activate;
    const body = {
      activeProvider: chosen,
      activeModel: document.getElementById("set-activeModel").value.trim(),
      systemPrompt: document.getElementById("set-systemPrompt").value,
      replyLanguage: document.getElementById("set-replyLanguage").value.trim(),
      fontSize: Number(document.getElementById("set-fontSize").value),
      sendShortcut: document.getElementById("set-sendShortcut").value,
      thoughtAutoCollapse: document.getElementById("set-thoughtAutoCollapse").checked,
    };
    settings = await api("PUT", "/api/settings", body);
    fill(settings);
    settingsError(null);
    notice("settings saved");
  } catch (err) {
    if (settings !== lastSettings) keepSaved(settings, saved); // the cards saved before the error stay saved
    settingsError(err, failing);
  }
}

// The header's model picker: one entry per provider card (its model, or the override).
export function renderModelPicker(settings) {
  const picker = document.getElementById("model-picker");
  const cards = settings.providers || {};
  const names = Object.keys(cards);
  const options = names.map((n) => {
    const model = n === settings.activeProvider && settings.activeModel ? settings.activeModel : cards[n].model;
    return el("option", { value: n, text: [n, model].filter(Boolean).join(" · ") });
  });
  if (!names.length) options.push(el("option", { value: "", text: "No model — add one in Settings" }));
  else if (!cards[settings.activeProvider]) options.unshift(el("option", { value: "", text: "(environment)" }));
  picker.replaceChildren(...options);
  picker.value = cards[settings.activeProvider] ? settings.activeProvider : "";
  picker.disabled = !names.length;
}

async function pickModel(e) {
  try {
    const settings = await api("PUT", "/api/settings", { activeProvider: e.target.value, activeModel: "" });
    applyPanelOptions(settings);
    notice(`next replies from ${e.target.selectedOptions[0]?.textContent || "the environment"}`);
  } catch (err) {
    showError(err);
  }
}

function statRow(label, ours, naive, fmt = (x) => String(x)) {
  return el("tr", {}, el("th", { text: label }), el("td", { text: fmt(ours) }), el("td", { text: fmt(naive) }));
}

function renderPreview(p) {
  const body = document.getElementById("preview-body");
  const who = p.provider
    ? [p.provider.name, p.provider.style, p.provider.model].filter(Boolean).join(" · ")
    : `no usable provider (${p.problem ? p.problem.message : "unknown"}); shown in the ${p.style} format`;
  const r = p.request;
  const n = p.naive;
  const table = el(
    "table",
    { className: "preview-stats" },
    el("tr", {}, el("th"), el("th", { text: "chatkeep" }), el("th", { text: "naive resend" })),
    statRow("Request size", r.bytes, n.bytes, humanSize),
    statRow("Text characters", r.chars, n.chars, fmt),
    statRow("Images", r.images, n.images),
    statRow("Image bytes", r.imageBytes, n.imageBytes, humanSize),
    statRow("Estimated tokens", r.estTokens, n.estTokens, fmt),
  );
  const prefix = p.prefix.hasPrevious
    ? `${humanSize(p.prefix.bytes)} shared with the previous turn's request (${percent(p.prefix.ratio)} of this one can come from a prompt cache)`
    : "no previous turn to compare with";
  const messages = el(
    "ol",
    { className: "preview-messages" },
    p.messages.map((m) =>
      el("li", {}, el("strong", { text: m.role || "message" }), ` ${fmt(m.chars)} chars`,
        m.images ? `, ${m.images} image${m.images === 1 ? "" : "s"}` : "",
        typeof m.text === "string" && m.text ? el("div", { className: "snippet", text: m.text }) : null),
    ),
  );
  const parts = [
    el("p", { className: "preview-provider", text: who }),
    p.problem && p.problem.hint ? el("p", { className: "hint", text: p.problem.hint }) : null,
    table,
    el("p", { className: "preview-savings", text: `Saves ${humanSize(Math.max(0, p.savings.bytes))} (${percent(p.savings.ratio)}) against resending everything; ${p.savings.images} image(s) sent as labels.` }),
    el("p", { className: "preview-prefix", text: `Prefix reuse: ${prefix}.` }),
    el("h3", { text: `Messages (${p.messages.length})` }),
    messages,
  ];
  body.replaceChildren(...parts.filter(Boolean)); // replaceChildren would write "null" as text
}

export function setupSettings(apply) {
  onApply = apply;
  const dialog = document.getElementById("settings-dialog");
  document.getElementById("open-settings").addEventListener("click", async (e) => {
    const opener = e.currentTarget;
    try {
      fill(await api("GET", "/api/settings"));
      settingsError(null);
      openModal(dialog, null, opener);
    } catch (err) {
      showError(err);
    }
  });
  document.getElementById("model-picker").addEventListener("change", pickModel);
  // Save is the form's first submit button, so Enter in a field saves (implicit submission);
  // only Close (method="dialog") closes the dialog.
  document.getElementById("settings-form").addEventListener("submit", (e) => {
    if (e.submitter && e.submitter.id !== "settings-save") return;
    e.preventDefault();
    save();
  });
  document.getElementById("add-provider").addEventListener("click", () => {
    const form = cardForm("", { style: "chat", stream: true }, true);
    document.getElementById("provider-cards").append(form);
    form.querySelector(".p-name").focus();
  });
  const preview = document.getElementById("preview-dialog");
  document.getElementById("open-preview").addEventListener("click", async (e) => {
    const opener = e.currentTarget;
    const draft = document.getElementById("message").value;
    try {
      renderPreview(await api("GET", `/api/preview?${new URLSearchParams({ draft })}`));
      openModal(preview, null, opener); // focus on the heading: the dialog opens at its top
    } catch (err) {
      showError(err);
    }
  });
}
