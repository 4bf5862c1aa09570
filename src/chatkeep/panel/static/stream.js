// A streamed turn's transport: POST the request, then read its Server-Sent Events one at a
// time. No state and no DOM: turn.js decides, turn-view.js draws.

import { authHeaders, readJson } from "./api.js";

// The response of a turn's POST. A refusal (an HTTP error status: the server turned the request
// down before writing anything) throws an ApiError with `refused` set.
export async function openStream(path, body, signal) {
  const res = await fetch(path, {
    method: "POST",
    headers: authHeaders({ "Content-Type": "application/json" }),
    body: JSON.stringify(body),
    signal,
  });
  if (res.ok) return res;
  const err = await readJson(res).catch((e) => e); // an ApiError carrying the error body
  err.refused = true;
  throw err;
}

// The events of `buffer`'s complete blocks, and the unfinished rest.
function parseEvents(buffer) {
  const events = [];
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
    if (data.length) events.push({ event, data: JSON.parse(data.join("\n")) });
  }
  return [events, buffer.slice(start)];
}

// Yields {event, data} for each Server-Sent Event of `res`'s body, as it arrives.
export async function* readEvents(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let events;
    [events, buffer] = parseEvents(buffer);
    yield* events;
  }
}
