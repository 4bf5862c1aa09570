// Export and import from the drawer (SPEC §11), through the library's export_lines and
// import_file (/api/export, /api/import): Export downloads the whole profile (JSON, exact) or
// every session in a readable format; Import uploads a file of any format the library reads,
// whose conversations become saved sessions (the profile is never replaced from here).

import { authHeaders, el, notice, readJson, showError } from "./api.js";
import { refresh } from "./drawer.js";

function fileName(res, fallback) {
  const m = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
  return m ? m[1] : fallback;
}

async function exportProfile() {
  const format = document.getElementById("export-format").value;
  const button = document.getElementById("export-go");
  button.disabled = true;
  try {
    const res = await fetch(`/api/export?format=${encodeURIComponent(format)}`, { headers: authHeaders() });
    if (!res.ok) await readJson(res); // throws the server's error
    const url = URL.createObjectURL(await res.blob());
    const link = el("a", { href: url, download: fileName(res, `chatkeep.${format}`), hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    notice(`Exported to ${link.download}`);
  } catch (err) {
    showError(err);
  } finally {
    button.disabled = false;
  }
}

function summary(report) {
  const added = report.added ?? 0;
  const already = report.already ?? 0;
  const skipped = Array.isArray(report.skipped) ? report.skipped.length : 0;
  const bits = [`${added} new saved session${added === 1 ? "" : "s"}`];
  if (already) bits.push(`${already} already there`);
  if (skipped) bits.push(`${skipped} skipped`);
  return `Imported from ${report.source || "the file"}: ${bits.join(", ")}`;
}

async function importFile(file) {
  const params = new URLSearchParams({ name: file.name });
  try {
    const res = await fetch(`/api/import?${params}`, {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/octet-stream" }),
      body: file,
    });
    const data = await readJson(res);
    notice(summary(data.report || {}));
    await refresh();
  } catch (err) {
    showError(err);
  }
}

export function setupTransfer() {
  document.getElementById("export-go").addEventListener("click", exportProfile);
  const picker = document.getElementById("import-file");
  document.getElementById("import-go").addEventListener("click", () => picker.click());
  picker.addEventListener("change", (e) => {
    const file = e.target.files[0];
    e.target.value = "";
    if (file) importFile(file);
  });
}
