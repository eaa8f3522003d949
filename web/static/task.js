// Follows a task's log on its page: new events are appended to #events as
// they arrive from the UI's own stream (authenticated by the session
// cookie). When the task ends, or a tool call starts waiting for
// approval, the server-rendered parts of the page (#status, #controls,
// #output, #requests) are fetched again and swapped in place. The page
// itself never reloads, so a form being submitted is never cut off.
(function () {
  "use strict";
  var list = document.getElementById("events");
  if (!list || !window.EventSource || list.dataset.done === "true") return;
  var es = new EventSource(list.dataset.src);
  var parts = ["status", "controls", "output", "requests"];
  function refresh() {
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        parts.forEach(function (id) {
          var now = document.getElementById(id), next = doc.getElementById(id);
          if (now && next) now.replaceWith(document.importNode(next, true));
        });
      })
      .catch(function () {});
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
    if (ev.type === "tool.approval.requested" || ev.type === "tool.approval.decided" || ev.type === "llm.call.started") refresh();
  };
  es.addEventListener("end", function () { es.close(); refresh(); });
  es.addEventListener("error", function (m) {
    // A server "error" event (the session ended) carries data; a lost
    // connection does not, and EventSource retries on its own.
    if (m.data) es.close();
  });
})();
