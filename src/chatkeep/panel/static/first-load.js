// The panel's first load (`/api/state`, the end of the conversation) starts here, in <head>,
// while the page's modules are still arriving; main.js takes the answer. A classic script, so
// it runs before the modules do. TAIL in conversation.js is the same number.
(function () {
  var token = new URLSearchParams(location.search).get("token") || "";
  if (!token || !window.fetch) return;
  var headers = { "X-Chatkeep-Token": token };
  window.chatkeepFirstLoad = fetch("/api/state?tail=60", { headers: headers });
  window.chatkeepFirstLoad.catch(function () {}); // main.js asks again if this one failed
  // The session's name is its own small request (the first load reads only get_all() and the
  // history, SPEC §9); asked at the same time, it is there when the history is drawn.
  window.chatkeepFirstSession = fetch("/api/sessions/current", { headers: headers });
  window.chatkeepFirstSession.catch(function () {});
})();
