// gateway console: follows the decision log while its first page is open. The only script the console has; the
// pages work without it. New rows come from the server already escaped (the same template as the page's rows).
(function () {
  "use strict";
  var table = document.getElementById("log");
  if (!table || !table.dataset.liveAfter) return;
  var body = document.getElementById("log-rows");
  var status = document.getElementById("live-status");
  var after = table.dataset.liveAfter;
  var query = table.dataset.liveQuery || "";
  var delay = 2000;

  function poll() {
    var url = "/console/log/updates?after=" + encodeURIComponent(after) + (query ? "&" + query : "");
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (response.status !== 200) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var template = document.createElement("template");
        template.innerHTML = html.trim();
        var rows = template.content.querySelectorAll("tr[data-id]");
        for (var index = rows.length - 1; index >= 0; index--) {
          var row = rows[index];
          row.classList.add("fresh");
          body.insertBefore(row, body.firstChild);
        }
        if (rows.length > 0) {
          after = rows[0].dataset.id;
          table.dataset.liveAfter = after;
          status.textContent = rows.length + " new decision" + (rows.length === 1 ? "" : "s") + " just arrived.";
        }
        delay = 2000;
      })
      .catch(function () {
        delay = Math.min(delay * 2, 30000);
        status.textContent = "Live updates paused; retrying.";
      })
      .then(function () { window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, delay);
})();
