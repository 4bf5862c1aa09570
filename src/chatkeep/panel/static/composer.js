// The composer: message box, pasted/dropped images, send shortcut, URL/file/video attachments.

import { api, el, showError } from "./api.js";
import { isBusy, renderHistory, stopTurn, streamTurn } from "./conversation.js";

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

async function send() {
  const box = document.getElementById("message");
  const text = box.value;
  if (isBusy() || (!text.trim() && !pending.length)) return;
  const images = pending.splice(0);
  box.value = "";
  renderPending();
  const echo = { text, images: images.map((src) => ({ src })) };
  await streamTurn("/api/chat/send", { text, images }, echo);
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

async function attachFile(file) {
  const params = new URLSearchParams({ name: file.name });
  try {
    const data = await api("POST", `/api/attach/file?${params}`, file, {
      raw: true,
      headers: { "Content-Type": file.type || "application/octet-stream" },
    });
    renderHistory(data.history);
  } catch (err) {
    showError(err);
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
    transcript = null;
    renderHistory(data.history);
  } catch (err) {
    showError(err);
  }
}

export function setupComposer() {
  const box = document.getElementById("message");
  document.getElementById("send").addEventListener("click", send);
  document.getElementById("stop").addEventListener("click", stopTurn);
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
  const composer = document.getElementById("composer");
  composer.addEventListener("dragover", (e) => e.preventDefault());
  composer.addEventListener("drop", (e) => {
    e.preventDefault();
    const files = [...(e.dataTransfer?.files || [])];
    addImages(files.filter((f) => f.type.startsWith("image/")));
    files.filter((f) => !f.type.startsWith("image/")).forEach(attachFile);
  });
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
  document.getElementById("toggle-video").addEventListener("click", () => {
    const row = document.getElementById("video-row");
    row.hidden = !row.hidden;
  });
  document.getElementById("video-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    transcript = { name: file.name, text: await file.text() };
    document.getElementById("video-file-name").textContent = file.name;
    e.target.value = "";
  });
  document.getElementById("attach-video-btn").addEventListener("click", attachVideo);
}
