// The conversation's shared state and the panel's actions as DOM events.
//
// `state` is the one object the conversation modules read: conversation.js (the history and its
// window), turn.js (a streamed turn) and bubbles.js (prices for a reply's cost, the failure shown
// on an unanswered question). What a bubble's button asks for is an event: `dispatch(type,
// detail)` on one EventTarget, heard by whoever called `subscribe(type, handler)` — so the node
// builders know no module that acts on them.
//
// Actions: "undo" {attachId}, "edit" {bubble, view}, "retry", "regenerate", "regenerate-at"
// {index}.

export const state = {
  views: [], // sparse: views the page has not loaded yet are holes
  usage: null, // per-provider usage totals from the server, else computed from `views`
  generation: 0, // bumped whenever `views` changes: answers to older page requests are dropped
  pages: new Set(), // pages being fetched
  busy: false,
  turn: null, // the id of the turn streaming now (the server's, for Stop)
  controller: null, // the AbortController of the turn's request
  settings: {},
  archived: 0,
  archiveStart: 0,
  failure: null, // {message, hint} of the last failed turn, shown on the unanswered question
  session: null,
  stick: true, // the user is at the bottom: follow new content
  stopping: false, // the user pressed Stop during the current turn
  stopped: new Set(), // indices of replies the user stopped on this page ("stopped", not "cut off")
};

const events = new EventTarget();

// Call `handler(detail)` on each `type` event; returns the function that stops listening.
export function subscribe(type, handler) {
  const listener = (e) => handler(e.detail);
  events.addEventListener(type, listener);
  return () => events.removeEventListener(type, listener);
}

export function dispatch(type, detail = {}) {
  events.dispatchEvent(new CustomEvent(type, { detail }));
}
