// Follows a task's log on its page: new events are appended to the raw
// events (#events) as they arrive from the UI's own stream (authenticated
// by the session cookie), and the server-rendered parts of the page
// (#status, #controls, #output, #conversation, #requests) are fetched
// again and swapped in place as the run goes on: after a message, a tool
// result, an approval, a model request or the task's end. The page itself
// never reloads, so a form being submitted is never cut off, and an
// output the reader opened or closed stays so.
(function () {
  "use strict";
  var list = document.getElementById("events");
  if (!list || !window.EventSource || list.dataset.done === "true") return;
  var es = new EventSource(list.dataset.src);
  var parts = ["status", "controls", "output", "conversation", "requests"];
  // Progress events change nothing the server renders.
  var quiet = { "skill.environment": true, "sandbox.egress": true, "sandbox.egress.denied": true, "llm.call.completed": true, "context.warning": true };
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        // Folded outputs keep the state the reader gave them.
        var open = {};
        document.querySelectorAll("#conversation details[id]").forEach(function (d) { open[d.id] = d.open; });
        parts.forEach(function (id) {
          var now = document.getElementById(id), next = doc.getElementById(id);
          if (now && next) now.replaceWith(document.importNode(next, true));
        });
        document.querySelectorAll("#conversation details[id]").forEach(function (d) {
          if (d.id in open) d.open = open[d.id];
        });
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  function line(ev) {
    var li = document.createElement("li");
    var type = document.createElement("span");
    type.className = "etype";
    type.textContent = ev.type || "event";
    var code = document.createElement("code");
    var data = {};
    Object.keys(ev).forEach(function (k) {
      if (k !== "type" && k !== "task_id" && k !== "seq" && k !== "time" && k !== "context") data[k] = ev[k];
    });
    var text = JSON.stringify(data);
    code.textContent = text.length > 160 ? text.slice(0, 160) + "…" : text;
    li.dataset.seq = ev.seq;
    li.append(type, " ", code);
    list.appendChild(li);
  }
  es.onmessage = function (m) {
    var ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    line(ev);
    if (!quiet[ev.type]) refresh();
  };
  es.addEventListener("end", function () { es.close(); refresh(); });
  es.addEventListener("error", function (m) {
    // A server "error" event (the session ended) carries data; a lost
    // connection does not, and EventSource retries on its own.
    if (m.data) es.close();
  });
})();
