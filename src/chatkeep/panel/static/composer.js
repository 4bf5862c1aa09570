// The composer: message box, pasted/dropped images, send shortcut, URL/file/video attachments.

import { ApiError, api, authHeaders, el, humanSize, showError } from "./api.js";
import { isBusy, isUnansweredText, renderHistory, sendStart } from "./conversation.js";
import { retry, stopTurn, streamTurn } from "./turn.js";

const PROGRESS_FROM_BYTES = 256 * 1024; // smaller uploads finish before a bar would be seen

const SENDABLE = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const pending = []; // data URLs of images to send with the next message
let shortcut = "Enter";
let transcript = null; // {name, text} of the chosen video transcript

export function setShortcut(value) {
  shortcut = value === "Ctrl+Enter" ? "Ctrl+Enter" : "Enter";
}

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function toSendable(file) {
  if (SENDABLE.includes(file.type)) return readAsDataUrl(file);
  // Other image types (BMP, TIFF, …) are redrawn as PNG.
  const bitmap = await createImageBitmap(file);
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext("2d").drawImage(bitmap, 0, 0);
  return canvas.toDataURL("image/png");
}

function renderPending() {
  const box = document.getElementById("pending-images");
  box.replaceChildren(
    ...pending.map((url, i) =>
      el(
        "span",
        { className: "pending-image" },
        el("img", { src: url, alt: `pasted image ${i + 1}` }),
        el("button", {
          type: "button",
          title: "Remove",
          "aria-label": `Remove pasted image ${i + 1}`,
          text: "×",
          onclick: () => {
            pending.splice(i, 1);
            renderPending();
          },
        }),
      ),
    ),
  );
}

async function addImages(files) {
  for (const file of files) {
    try {
      pending.push(await toSendable(file));
    } catch (err) {
      showError(err);
    }
  }
  renderPending();
}

// The draft survives a reload: it is kept in localStorage under one key per store and profile
// (the server's `draftKey`), written on every change of the message box and removed once the
// box is empty (a sent message leaves it empty; a failed send puts the draft back).
let draftKey = "";

function keepDraft(text) {
  if (!draftKey) return;
  try {
    if (text) localStorage.setItem(draftKey, text);
    else localStorage.removeItem(draftKey);
  } catch {
    // storage full or switched off: the draft just does not outlive the page
  }
}

export function restoreDraft(key) {
  draftKey = key ? `chatkeep-draft:${key}` : "";
  const box = document.getElementById("message");
  let kept = null;
  try {
    kept = draftKey ? localStorage.getItem(draftKey) : null;
  } catch {
    kept = null;
  }
  if (kept && !box.value) {
    box.value = kept;
    grow();
  }
}

function grow() {
  const box = document.getElementById("message");
  box.style.height = "auto";
  box.style.height = `${Math.min(box.scrollHeight + 2, Math.round(window.innerHeight * 0.35))}px`;
  keepDraft(box.value);
}

async function send() {
  const box = document.getElementById("message");
  const text = box.value;
  if (isBusy() || (!text.trim() && !pending.length)) return;
  if (!pending.length && isUnansweredText(text)) {
    // The kept draft of a failed send, sent again: answer that question, never a second bubble.
    box.value = "";
    grow();
    const result = await retry();
    if (result && !result.ok && !box.value) {
      box.value = text;
      grow();
    }
    return;
  }
  const images = pending.splice(0);
  box.value = "";
  grow();
  renderPending();
  const echo = { text, images: images.map((src) => ({ src })) };
  const result = await streamTurn("/api/chat/send", { text, images }, { echo, from: sendStart() });
  if (!result.ok && !box.value && !pending.length) {
    // A failed send keeps the draft: the text and images are back in the composer.
    box.value = text;
    pending.push(...images);
    renderPending();
    grow();
  }
}

async function attachUrl() {
  const input = document.getElementById("attach-url");
  const url = input.value.trim();
  if (!url) return;
  const button = document.getElementById("attach-url-btn");
  button.disabled = true;
  try {
    const data = await api("POST", "/api/attach", { url });
    input.value = "";
    renderHistory(data.history);
  } catch (err) {
    showError(err);
  } finally {
    button.disabled = false;
  }
}

// Raw upload with a progress bar (fetch cannot report upload progress; XMLHttpRequest can).
function upload(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    for (const [k, v] of Object.entries(authHeaders({ "Content-Type": file.type || "application/octet-stream" }))) {
      xhr.setRequestHeader(k, v);
    }
    xhr.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded, e.total));
    xhr.addEventListener("load", () => {
      let data = null;
      try {
        data = JSON.parse(xhr.responseText);
      } catch {
        data = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, data));
    });
    xhr.addEventListener("error", () => reject(new Error(`uploading ${file.name} failed`)));
    xhr.send(file);
  });
}

async function attachFile(file) {
  const params = new URLSearchParams({ name: file.name });
  const uploads = document.getElementById("uploads");
  const bar = el("progress", { max: file.size || 1, value: 0, "aria-label": `Uploading ${file.name}` });
  const label = el("span", { className: "upload-label", text: `${file.name} (${humanSize(file.size)})` });
  const row = el("div", { className: "upload", dataset: { name: file.name } }, label, bar);
  if (file.size >= PROGRESS_FROM_BYTES) uploads.append(row);
  try {
    const data = await upload(`/api/attach/file?${params}`, file, (loaded, total) => {
      bar.max = total;
      bar.value = loaded;
      if (loaded >= total) label.textContent = `${file.name}: reading…`;
    });
    renderHistory(data.history);
  } catch (err) {
    showError(err);
  } finally {
    row.remove();
  }
}

async function attachVideo() {
  const url = document.getElementById("video-url").value.trim();
  if (!url || !transcript) {
    showError(new Error("give the video URL and choose its transcript file"));
    return;
  }
  try {
    const data = await api("POST", "/api/attach/video", { url, transcript: transcript.text, name: transcript.name });
    document.getElementById("video-url").value = "";
    document.getElementById("video-file-name").textContent = "";
    document.getElementById("video-row").hidden = true;
    document.getElementById("toggle-video").setAttribute("aria-expanded", "false");
    transcript = null;
    renderHistory(data.history);
  } catch (err) {
    showError(err);
  }
}

// Files dropped anywhere on the window are attached: images go with the next message, other
// files become attachment chips. While files are dragged over the page an outline says so; a
// drop on an open dialog (Settings, the drawer) does nothing.
function setupDropZone() {
  let depth = 0;
  const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
  const done = () => {
    depth = 0;
    document.body.classList.remove("dropping");
  };
  document.addEventListener("dragenter", (e) => {
    if (!hasFiles(e)) return;
    depth += 1;
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (!hasFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (!depth) done();
  });
  document.addEventListener("dragover", (e) => hasFiles(e) && e.preventDefault());
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    done();
    if (document.querySelector("dialog[open]")) return;
    const files = [...e.dataTransfer.files];
    addImages(files.filter((f) => f.type.startsWith("image/")));
    files.filter((f) => !f.type.startsWith("image/")).forEach(attachFile);
    document.getElementById("message").focus({ preventScroll: true });
  });
}

export function setupComposer() {
  const box = document.getElementById("message");
  box.addEventListener("input", grow);
  document.getElementById("send").addEventListener("click", send);
  document.getElementById("stop").addEventListener("click", stopTurn);
  // Esc stops a streaming reply, like Stop; with a dialog open, Esc closes the dialog instead,
  // and in a field with its own Esc (rename, edit) that one wins.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || e.defaultPrevented || !isBusy()) return;
    if (document.querySelector("dialog[open]")) return;
    e.preventDefault();
    stopTurn();
  });
  box.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.isComposing) return;
    const wantsSend = shortcut === "Enter" ? !e.shiftKey && !e.ctrlKey && !e.metaKey : e.ctrlKey || e.metaKey;
    if (wantsSend) {
      e.preventDefault();
      send();
    }
  });
  box.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files || [])].filter((f) => f.type.startsWith("image/"));
    if (files.length) {
      e.preventDefault();
      addImages(files);
    }
  });
  setupDropZone();
  document.getElementById("attach-url-btn").addEventListener("click", attachUrl);
  document.getElementById("attach-url").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      attachUrl();
    }
  });
  document.getElementById("attach-file").addEventListener("change", (e) => {
    for (const file of e.target.files) attachFile(file);
    e.target.value = "";
  });
  document.getElementById("pick-file").addEventListener("click", () => document.getElementById("attach-file").click());
  document.getElementById("pick-transcript").addEventListener("click", () => document.getElementById("video-file").click());
  const toggle = (buttonId, panelId, focusId) => {
    const button = document.getElementById(buttonId);
    button.addEventListener("click", () => {
      const panel = document.getElementById(panelId);
      panel.hidden = !panel.hidden;
      button.setAttribute("aria-expanded", String(!panel.hidden));
      if (!panel.hidden) document.getElementById(focusId).focus();
    });
  };
  toggle("toggle-attach", "attach-panel", "attach-url");
  toggle("toggle-video", "video-row", "video-url");
  document.getElementById("video-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    transcript = { name: file.name, text: await file.text() };
    document.getElementById("video-file-name").textContent = file.name;
    e.target.value = "";
  });
  document.getElementById("attach-video-btn").addEventListener("click", attachVideo);
}
