// Theme before first paint: "light", "dark" or "system" (follows the OS), kept in localStorage.
// A classic script in <head> so the page never flashes the wrong colours.
(function () {
  var KEY = "chatkeep.theme";
  var MODES = ["system", "light", "dark"];
  function stored() {
    try {
      var v = localStorage.getItem(KEY);
      return MODES.indexOf(v) >= 0 ? v : "system";
    } catch (e) {
      return "system";
    }
  }
  function apply(mode) {
    var root = document.documentElement;
    if (mode === "system") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", mode);
    root.dataset.themeMode = mode;
    var btn = document.getElementById("theme-toggle");
    if (btn) {
      var label = "Theme: " + mode + " (change)";
      btn.setAttribute("aria-label", label);
      btn.title = label;
    }
  }
  window.chatkeepTheme = {
    get: stored,
    set: function (mode) {
      try {
        localStorage.setItem(KEY, mode);
      } catch (e) {}
      apply(mode);
    },
    next: function () {
      var mode = MODES[(MODES.indexOf(stored()) + 1) % MODES.length];
      this.set(mode);
      return mode;
    },
    apply: apply,
  };
  apply(stored());
})();
