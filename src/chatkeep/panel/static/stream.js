// Helpers of a streamed turn: parsing Server-Sent Events out of the response body, and the
// status line's figures of the request just sent.

import { fmt } from "./format.js";

export function parseEvents(buffer, handle) {
  let start = 0;
  let end;
  while ((end = buffer.indexOf("\n\n", start)) >= 0) {
    const block = buffer.slice(start, end);
    start = end + 2;
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length) handle(event, JSON.parse(data.join("\n")));
  }
  return buffer.slice(start);
}

export function showStats(done) {
  const s = done.stats || {};
  const line = document.getElementById("last-stats");
  if (!s.bytes) {
    line.textContent = "";
    return;
  }
  const kb = (s.bytes / 1024).toFixed(1);
  const parts = [`last request ${kb} KB`, `${s.images || 0} images`, `~${fmt(s.estTokens)} tokens`];
  if (s.prefixBytes) parts.push(`${Math.round((s.prefixRatio || 0) * 100)}% prefix reused`);
  if (done.interrupted) parts.push("stopped");
  line.textContent = parts.join(" · ");
}
