// The console's theme, set before the page paints: the person's choice if they made one (the
// header's toggle keeps it in this browser), else the system's (prefers-color-scheme, in CSS).
(function () {
  "use strict";
  try {
    var chosen = localStorage.getItem("kindgi-theme");
    if (chosen === "dark" || chosen === "light") document.documentElement.dataset.theme = chosen;
  } catch (e) { /* storage refused: the system's choice holds */ }
})();
