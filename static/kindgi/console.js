// Keyboard shortcuts on the queue: j/k move, a/r open the selected approval to approve/reject, Enter opens it.
(function () {
  function rows() { return Array.from(document.querySelectorAll("tr.approval-row")); }
  function selected() { return document.querySelector("tr.approval-row.selected"); }
  function select(row) {
    rows().forEach(function (r) { r.classList.remove("selected"); });
    if (row) { row.classList.add("selected"); row.scrollIntoView({ block: "nearest" }); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.target.closest("input, textarea, select") || event.metaKey || event.ctrlKey || event.altKey) return;
    var list = rows();
    if (!list.length) return;
    var index = list.indexOf(selected());
    if (event.key === "j") { select(list[Math.min(index + 1, list.length - 1)]); }
    else if (event.key === "k") { select(list[Math.max(index - 1, 0)]); }
    else if ((event.key === "Enter" || event.key === "a" || event.key === "r") && selected()) {
      var action = event.key === "a" ? "#approve" : event.key === "r" ? "#reject" : "";
      window.location.href = selected().dataset.href + action;
    } else { return; }
    event.preventDefault();
  });
  // On an approval page opened with #approve or #reject, focus that button (rejecting needs a rationale first).
  if (location.hash === "#approve" || location.hash === "#reject") {
    document.addEventListener("DOMContentLoaded", function () {
      var target = location.hash === "#reject" ? document.querySelector("textarea[name=rationale]") : document.querySelector(location.hash);
      if (target) target.focus();
    });
  }
})();
