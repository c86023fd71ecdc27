// The console's small behaviours: keyboard shortcuts on the queue, the live diff of an edit, an
// approval page that notices its expiry, queue updates that keep what the reviewer is doing.
(function () {
  "use strict";

  // Keyboard shortcuts on the queue: j/k move, a/r open the selected approval to approve/reject,
  // Enter opens it.
  function rows() { return Array.from(document.querySelectorAll("tr.approval-row")); }
  function selected() { return document.querySelector("tr.approval-row.selected"); }
  function select(row) {
    rows().forEach(function (r) { r.classList.remove("selected"); });
    if (row) { row.classList.add("selected"); row.scrollIntoView({ block: "nearest" }); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.target.closest("input, textarea, select") || event.metaKey || event.ctrlKey || event.altKey) return;
    if (event.key === "?") {
      var help = document.getElementById("keys-help");
      if (help && !help.open) { help.showModal(); event.preventDefault(); }
      return;
    }
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

  // Light or dark: the toggle flips what shows now and keeps the choice in this browser.
  function themeNow() {
    var chosen = document.documentElement.dataset.theme;
    if (chosen) return chosen;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function labelToggle() {
    var toggle = document.getElementById("theme-toggle");
    if (!toggle) return;
    var dark = themeNow() === "dark";
    toggle.textContent = dark ? "Light" : "Dark";
    toggle.setAttribute("aria-pressed", dark ? "true" : "false");
  }
  document.addEventListener("click", function (event) {
    if (!event.target.closest("#theme-toggle")) return;
    var next = themeNow() === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try { localStorage.setItem("kindgi-theme", next); } catch (e) { /* kept for this page only */ }
    labelToggle();
  });
  document.addEventListener("DOMContentLoaded", labelToggle);

  // Passkeys (WebAuthn). A form marked data-step-up asks the server for a challenge bound to this
  // decision, has the person's passkey answer it, and sends the answer with the decision; the
  // Passkeys page registers one the same way. The JSON forms of the options and answers are the
  // browser's own where it has them (parse…FromJSON, toJSON), else made here.
  function unb64(value) {
    var plain = atob(value.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((value.length + 3) % 4));
    return Uint8Array.from(plain, function (c) { return c.charCodeAt(0); }).buffer;
  }
  function b64(buffer) {
    var plain = String.fromCharCode.apply(null, new Uint8Array(buffer));
    return btoa(plain).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function requestOptions(data) {
    if (window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(data);
    data.challenge = unb64(data.challenge);
    (data.allowCredentials || []).forEach(function (c) { c.id = unb64(c.id); });
    return data;
  }
  function creationOptions(data) {
    if (window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(data);
    data.challenge = unb64(data.challenge);
    data.user.id = unb64(data.user.id);
    (data.excludeCredentials || []).forEach(function (c) { c.id = unb64(c.id); });
    return data;
  }
  function answer(credential) {
    if (credential.toJSON) return JSON.stringify(credential.toJSON());
    var response = credential.response, out = { id: credential.id, rawId: b64(credential.rawId), type: credential.type, clientExtensionResults: {}, response: { clientDataJSON: b64(response.clientDataJSON) } };
    if (response.attestationObject) { out.response.attestationObject = b64(response.attestationObject); out.response.transports = response.getTransports ? response.getTransports() : []; }
    if (response.authenticatorData) { out.response.authenticatorData = b64(response.authenticatorData); out.response.signature = b64(response.signature); if (response.userHandle) out.response.userHandle = b64(response.userHandle); }
    return JSON.stringify(out);
  }
  function say(id, message) {
    var where = document.getElementById(id);
    if (where) { where.textContent = message; where.hidden = !message; }
  }
  async function postFor(form, url, fields) {
    var body = new FormData();
    body.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    Object.keys(fields).forEach(function (name) { body.append(name, fields[name]); });
    var response = await fetch(url, { method: "POST", body: body, credentials: "same-origin" });
    var data = await response.json();
    if (!response.ok) throw new Error(data.error || ("the server said " + response.status));
    return data;
  }
  document.addEventListener("submit", async function (event) {
    var form = event.target;
    if (form.dataset.stepUp && !form.dataset.confirmed) {
      event.preventDefault();
      var decision = event.submitter && event.submitter.name === "decision" ? event.submitter.value : "";
      try {
        say("step-up-error", "");
        var options = await postFor(form, form.dataset.stepUp, { decision: decision });
        var credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
        form.querySelector("[name=step_up]").value = answer(credential);
        var carried = form.querySelector("input[type=hidden][name=decision]");
        if (carried) { carried.disabled = false; carried.value = decision; }
        form.dataset.confirmed = "yes";
        form.submit();
      } catch (error) {
        say("step-up-error", "Your passkey did not confirm it: " + error.message);
      }
    } else if (form.id === "passkey-register" && !form.querySelector("[name=credential]").value) {
      event.preventDefault();
      try {
        say("passkey-error", "");
        var made = await navigator.credentials.create({ publicKey: creationOptions(await postFor(form, location.pathname, { action: "options" })) });
        form.querySelector("[name=credential]").value = answer(made);
        form.submit();
      } catch (error) {
        say("passkey-error", "No passkey was made: " + error.message);
      }
    }
  });

  // On an approval page opened with #approve, focus Approve; with #reject, the rationale
  // (a rejection needs one).
  function focusFromHash() {
    if (location.hash === "#reject") {
      var rationale = document.querySelector("textarea[name=rationale]");
      if (rationale) rationale.focus();
    } else if (location.hash === "#approve") {
      var approve = document.getElementById("approve");
      if (approve) approve.focus();
    }
  }

  // The edit, live: each field that differs from what the model asked for, old and new.
  function text(value) { return value === undefined || value === null ? "" : (typeof value === "string" ? value : JSON.stringify(value)); }
  function fieldValue(field) {
    if (field.type === "checkbox") return field.checked;
    if (field.value === "") return null;
    if (field.type === "number") return Number(field.value);
    try { if (field.tagName === "TEXTAREA" && field.dataset.json === "true") return JSON.parse(field.value); } catch (e) { return field.value; }
    return field.value.replace(/\r\n/g, "\n");
  }
  // The changed words of two texts (an LCS over words and spaces), as the server's diff shows them:
  // the old with what was taken out struck through, the new with what was put in marked.
  function wordDiff(before, after, asWords) {
    var a = asWords ? before.match(/\s+|\S+/g) || [] : [before];
    var b = asWords ? after.match(/\s+|\S+/g) || [] : [after];
    if (a.length * b.length > 250000) { a = [before]; b = [after]; }
    var n = a.length, m = b.length, i, j, lcs = [];
    for (i = 0; i <= n; i++) { lcs.push(new Array(m + 1).fill(0)); }
    for (i = n - 1; i >= 0; i--) for (j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    var parts = [];
    function add(side, mark, word) {
      var last = parts[parts.length - 1];
      if (last && last.side === side && last.mark === mark) last.text += word; else parts.push({ side: side, mark: mark, text: word });
    }
    var common = 0;
    i = 0; j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) { if (/\S/.test(a[i])) common++; i++; j++; }
      else if (lcs[i][j + 1] >= lcs[i + 1][j]) j++; else i++;
    }
    if (!common) return [{ side: "old", mark: "del", text: before }, { side: "new", mark: "ins", text: after }];
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { add("old", "", a[i]); add("new", "", b[j]); i++; j++; }
      else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { add("new", "ins", b[j]); j++; }
      else { add("old", "del", a[i]); i++; }
    }
    return parts;
  }
  function showDiff() {
    var panel = document.getElementById("edit-diff");
    if (!panel) return;
    var body = panel.querySelector("tbody");
    body.textContent = "";
    var changed = 0;
    document.querySelectorAll("[data-original]").forEach(function (field) {
      var before = JSON.parse(field.dataset.original);
      var after = fieldValue(field);
      if (field.type === "checkbox" && before === null && after === false) return;
      if (text(before) === text(after)) return;
      changed += 1;
      var row = body.insertRow();
      var name = document.createElement("th");
      name.scope = "row";
      name.textContent = field.name.replace(/^arg-/, "");
      row.appendChild(name);
      var old = row.insertCell(); var neu = row.insertCell();
      wordDiff(text(before), text(after), typeof before === "string" && typeof after === "string").forEach(function (part) {
        var cell = part.side === "old" ? old : neu;
        var node = part.mark ? document.createElement(part.mark) : document.createTextNode(part.text);
        if (part.mark) node.textContent = part.text;
        cell.appendChild(node);
      });
    });
    panel.hidden = changed === 0;
    var approve = document.getElementById("approve");
    if (approve) approve.textContent = changed ? "Approve with these changes" : "Approve";
  }
  document.addEventListener("input", function (event) { if (event.target.closest("[data-original]")) showDiff(); });
  document.addEventListener("change", function (event) { if (event.target.closest("[data-original]")) showDiff(); });

  // An open approval page asks for its decision panel again when the approval reaches its
  // expiry (the socket tells of decisions; an expiry may come before any sweep records it).
  function watchExpiry() {
    var panel = document.getElementById("decision-panel");
    if (!panel || !panel.dataset.expiresAt || panel.dataset.watched) return;
    panel.dataset.watched = "true";
    var wait = new Date(panel.dataset.expiresAt).getTime() - Date.now() + 500;
    if (wait > 2147483647) return;
    setTimeout(function () {
      if (window.htmx) window.htmx.ajax("GET", panel.dataset.panelUrl, { target: "#decision-panel", swap: "outerHTML" });
    }, Math.max(wait, 0));
  }

  // The queue: an approval leaves at its expiry, without waiting for a sweep or a reload.
  function expireRows() {
    var now = Date.now();
    document.querySelectorAll("tr.approval-row[data-expires-at]").forEach(function (row) {
      if (row.dataset.expiresAt && new Date(row.dataset.expiresAt).getTime() <= now) row.remove();
    });
  }

  // Queue updates merge into the table: rows that left go, new rows arrive in place; what the
  // reviewer ticked, typed or focused stays as it was.
  function mergeQueue(incoming) {
    var table = document.querySelector("#approval-list tbody");
    var fresh = incoming.querySelector("tbody");
    if (!table || !fresh) return false;
    var wanted = Array.from(fresh.querySelectorAll("tr.approval-row")).map(function (row) { return row.id; });
    Array.from(table.querySelectorAll("tr")).forEach(function (row) {
      if (!row.classList.contains("approval-row") || wanted.indexOf(row.id) === -1) row.remove();
    });
    var previous = null;
    Array.from(fresh.querySelectorAll("tr.approval-row")).forEach(function (row) {
      var existing = document.getElementById(row.id);
      if (!existing) {
        existing = document.importNode(row, true);
        if (previous) previous.after(existing); else table.prepend(existing);
      }
      previous = existing;
    });
    if (!wanted.length) { table.appendChild(document.importNode(fresh.querySelector("tr"), true)); }
    document.querySelectorAll("#approval-list .bulk-actions").forEach(function (bar) { bar.hidden = !wanted.length; });
    return true;
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (!event.detail.target || event.detail.target.id !== "approval-list") return;
    if (!event.detail.requestConfig || event.detail.requestConfig.headers["HX-Trigger"] !== "queue-refresh") return;
    var holder = document.createElement("div");
    holder.innerHTML = event.detail.serverResponse;
    if (mergeQueue(holder)) event.detail.shouldSwap = false;
  });

  // A live region says when its socket is open, and when it closed: updates reach the page only
  // while it is open, so whoever waits for them (the browser tests do) can wait for that, not guess.
  document.addEventListener("htmx:wsOpen", function (event) { event.target.dataset.socket = "open"; });
  document.addEventListener("htmx:wsClose", function (event) { event.target.dataset.socket = "closed"; });

  document.addEventListener("DOMContentLoaded", function () {
    focusFromHash();
    showDiff();
    watchExpiry();
    setInterval(expireRows, 1000);
  });
  document.addEventListener("htmx:afterSwap", function () { watchExpiry(); });
})();
