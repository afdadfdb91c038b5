// localragas review: the served page of `localragas review --serve`. Draws each drawn item from the embedded JSON
// through textContent only, and posts each verdict to the local server (the same origin), which appends it to the
// labels file. Keys: y / n / s label, b back, c note, Esc leaves the note.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var items = data.items;
  var current = -1;
  var busy = false;
  var $ = function (id) { return document.getElementById(id); };
  var words = { "1": "yes", "0": "no", "skip": "skipped" };

  function doneCount() {
    return items.filter(function (it) { return it.label !== undefined && it.label !== null; }).length;
  }

  function progress() {
    var where = current >= 0 ? " · item " + items[current].position + "/" + data.total : "";
    $("progress").textContent = doneCount() + " of " + data.total + " done" + where;
  }

  function nextOpen(after) {
    for (var i = after + 1; i < items.length; i++) { if (items[i].label == null) { return i; } }
    for (var j = 0; j < items.length; j++) { if (items[j].label == null) { return j; } }
    return -1;
  }

  function marked(text, marks) {
    var box = document.createElement("div");
    var at = 0;
    marks.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (m) {
      if (m[0] < at) { return; }
      box.appendChild(document.createTextNode(text.slice(at, m[0])));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(m[0], m[1]);
      box.appendChild(mark);
      at = m[1];
    });
    box.appendChild(document.createTextNode(text.slice(at)));
    return box;
  }

  function show(i) {
    current = i;
    $("status").textContent = "";
    $("status").className = "status";
    if (i < 0) {
      $("item").hidden = true;
      $("finished").hidden = false;
      progress();
      return;
    }
    var it = items[i];
    $("finished").hidden = true;
    $("item").hidden = false;
    $("heading").textContent = it.position + "/" + data.total + " · " + it.heading;
    var holder = $("passages");
    holder.textContent = "";
    var toScroll = [];
    it.passages.forEach(function (p) {
      var title = document.createElement("h3");
      title.textContent = p.title;
      var box = marked(p.text, p.marks);
      box.className = "passage " + p.role;
      holder.appendChild(title);
      holder.appendChild(box);
      if (p.marks.length) { toScroll.push(box); }
    });
    toScroll.forEach(function (box) {  // a long context opens at its marked part
      var mark = box.querySelector("mark");
      if (mark && box.scrollHeight > box.clientHeight) { box.scrollTop = Math.max(0, mark.offsetTop - box.offsetTop - 24); }
    });
    $("ask").textContent = it.ask;
    $("yes-word").textContent = it.yes;
    $("no-word").textContent = it.no;
    $("judge").hidden = !it.judge;
    $("judge").textContent = it.judge ? "Judge: " + it.judge : "";
    $("note").value = it.note || "";
    if (it.label != null) {
      $("status").textContent = "You labelled this " + (it.label === "1" ? it.yes : it.label === "0" ? it.no : "skipped") +
        "; a new label replaces it.";
    }
    progress();
    window.scrollTo(0, 0);
  }

  function fail(text) {
    $("status").textContent = text;
    $("status").className = "status error";
  }

  function send(label) {
    if (busy || current < 0) { return; }
    var it = items[current];
    var note = $("note").value;
    busy = true;
    Array.prototype.forEach.call(document.querySelectorAll("button"), function (b) { b.disabled = true; });
    fetch("/label", {
      method: "POST", cache: "no-store", credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: data.token, key: it.key, label: label === "skip" ? null : Number(label), note: note })
    }).then(function (r) {
      return r.text().then(function (body) {
        if (!r.ok) { throw new Error(body || ("HTTP " + r.status)); }
        return body;
      });
    }).then(function () {
      it.label = label;
      it.note = note;
      show(nextOpen(current));
    }).catch(function (e) {
      fail("Not saved: " + e.message + " (is `localragas review --serve` still running?)");
    }).finally(function () {
      busy = false;
      Array.prototype.forEach.call(document.querySelectorAll("button"), function (b) { b.disabled = false; });
    });
  }

  function back() {
    if (current > 0) { show(current - 1); } else if (current < 0 && items.length) { show(items.length - 1); }
  }

  ["yes", "no", "skip"].forEach(function (id) {
    $(id).addEventListener("click", function () { send($(id).getAttribute("data-label")); });
  });
  $("back").addEventListener("click", back);
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.target === $("note")) {
      if (e.key === "Escape") { $("note").blur(); }
      return;
    }
    var key = (e.key || "").toLowerCase();
    if (key === "y") { send("1"); } else if (key === "n") { send("0"); } else if (key === "s") { send("skip"); }
    else if (key === "b") { back(); } else if (key === "c") { e.preventDefault(); $("note").focus(); }
    else { return; }
    e.preventDefault();
  });
  show(nextOpen(-1));
})();
