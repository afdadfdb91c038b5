/* localragas HTML report: sortable, filterable sample table and a per-sample evidence drill-down.
   Sample text is untrusted: it reaches the page only through textContent and attribute values, never as markup. */
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var samples = data.samples || [];
  var metrics = data.metrics || [];
  var REASONS = {
    no_claims: "the text holds no factual claim to check",
    no_reference: "this metric needs a reference answer",
    no_contexts: "this metric needs at least one retrieved chunk",
    no_reference_or_answer: "neither a reference nor an answer to judge the chunks against",
    no_conversation: "this metric scores a conversation's turns; this sample is a single question and answer",
    no_earlier_turn: "the first turn of its conversation: the user had said nothing earlier to remember",
    no_conversation_end: "scored once per conversation, on its last turn",
    no_requests: "the conversation holds no user message with text",
    judge_error: "the judge gave no usable reply",
    error: "an unexpected error in this metric for this sample"
  };

  var thresholds = {};
  ((data.gate && data.gate.results) || []).forEach(function (g) { thresholds[g.metric] = g.threshold; });
  Object.keys((data.meta && data.meta.thresholds) || {}).forEach(function (m) {
    if (!(m in thresholds)) thresholds[m] = data.meta.thresholds[m];
  });

  /* --- small helpers ------------------------------------------------------------------------------------ */

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function thresholdText(t) { return Math.round(t * 100) / 100 === t ? t.toFixed(2) : String(t); }
  function fmt(x) { return typeof x === "number" && isFinite(x) ? x.toFixed(3) : "—"; }
  function reasonKind(r) { return String(r || "").split(":")[0].trim(); }
  var lowerBetter = {};  // metrics where a low score is the good one (noise sensitivity)
  (data.summary || []).forEach(function (s) { if (s.higher_is_better === false) lowerBetter[s.metric] = true; });
  function below(metric, value) {  // worse than the threshold
    if (typeof value !== "number" || !(metric in thresholds)) return false;
    return lowerBetter[metric] ? value > thresholds[metric] : value < thresholds[metric];
  }
  function tag(ok, yes, no) {
    return el("span", "tag " + (ok ? "passed" : "failed"), ok ? "✓ " + yes : "✗ " + no);
  }
  function collectText(value, out) {
    if (value === null || value === undefined) return out;
    if (typeof value === "object") {
      Object.keys(value).forEach(function (k) { collectText(value[k], out); });
    } else if (typeof value === "string") {
      out.push(value);
    }
    return out;
  }

  /* --- rows: a score cell, the sample table's rows, the conversation table's rows ------------------------------- */

  // Unscored by design, not a fault: the metric does not apply to this sample or turn (docs/conversations.md).
  var NOT_APPLICABLE = { no_conversation: true, no_earlier_turn: true, no_conversation_end: true };

  // A metric's score cell (td) and whether it flags its row as failing or unscored.
  function scoreCell(m, r) {
    var td = el("td", "num"), failing = false;
    if (!r) {
      td.textContent = "n/a";
      td.title = "not computed for this sample";
    } else if (r.value === null || r.value === undefined) {
      failing = !NOT_APPLICABLE[reasonKind(r.unscored)];
      td.className = "num unscored";
      td.textContent = "unscored";
      add(td, el("span", "reason", reasonKind(r.unscored)));
      td.title = r.unscored || "";
    } else {
      td.textContent = fmt(r.value);
      failing = markBelow(td, m, r.value);
    }
    return { td: td, failing: failing };
  }
  function markBelow(node, m, value) {  // marks a score worse than its threshold: ▼, words for a screen reader
    if (!below(m, value)) return false;
    node.className = (node.className ? node.className + " " : "") + "below";
    var side = lowerBetter[m] ? "above" : "below";
    add(node, el("span", "mark", " ▼"), el("span", "sr", " " + side + " threshold"));
    node.title = side + " the threshold " + thresholdText(thresholds[m]);
    return true;
  }
  function sampleText(s, haystack) {  // the words a search finds a sample or turn by
    haystack.push(s.id, s.category || "");
    if (s.turn) haystack.push(s.turn.user_message || "", s.turn.question || "", (s.input && s.input.answer) || "");
    metrics.forEach(function (m) {
      var r = (s.metrics || {})[m];
      if (r) { haystack.push(r.unscored || ""); collectText(r.evidence, haystack); }
    });
    return haystack;
  }
  function rowFailing(s) {
    return metrics.some(function (m) { return scoreCell(m, (s.metrics || {})[m]).failing; });
  }

  // The report's conversations (the turns of one id, in turn order) and its single samples, by position in `samples`.
  var conversations = [], singles = [], conversationOf = new Map();
  samples.forEach(function (s, index) {
    if (!s.turn) { singles.push(index); return; }
    var c = conversationOf.get(s.turn.conversation);
    if (!c) {
      c = { id: s.turn.conversation, turns: [], count: s.turn.turns };
      conversationOf.set(c.id, c);
      conversations.push(c);
    }
    c.turns.push(index);
    // a conversation given one turn per row knows each row's place only: its length is its last turn's number
    c.count = Math.max(c.count, s.turn.turns, s.turn.turn);
  });
  conversations.forEach(function (c) {
    c.turns.sort(function (a, b) { return samples[a].turn.turn - samples[b].turn.turn; });
  });

  var sampleTable = document.getElementById("sample-table");
  var sampleRows = singles.map(function (index) {
    var s = samples[index], tr = el("tr"), failing = false;
    tr.dataset.id = s.id;
    add(tr, el("th", "id", s.id));
    tr.firstChild.scope = "row";
    if (sampleTable && sampleTable.querySelector('th[data-key="category"]')) add(tr, el("td", "cat", s.category || "—"));
    metrics.forEach(function (m) {
      var cell = scoreCell(m, (s.metrics || {})[m]);
      failing = failing || cell.failing;
      add(tr, cell.td);
    });
    add(tr, el("td", "num", s.judge_calls), el("td", "num", typeof s.seconds === "number" ? s.seconds.toFixed(2) : "—"));
    return { tr: tr, sample: s, index: index, failing: failing, text: sampleText(s, []).join("\n").toLowerCase() };
  });

  // A metric over a conversation's turns: the mean of its scored turns and its worst turn; `once` for a metric scored
  // once per conversation (on its last turn: every other turn unscored with no_conversation_end).
  function conversationScore(c, m) {
    var scored = [], reasons = [], computed = false;
    c.turns.forEach(function (i) {
      var r = (samples[i].metrics || {})[m];
      if (!r) return;
      computed = true;
      if (typeof r.value === "number") scored.push({ value: r.value, turn: samples[i].turn.turn });
      else reasons.push(reasonKind(r.unscored));
    });
    var out = { computed: computed, scored: scored.length, reasons: reasons, mean: null, worst: null };
    out.once = scored.length <= 1 && reasons.length > 0 && reasons.every(function (k) { return k === "no_conversation_end"; });
    if (!scored.length) return out;
    out.mean = scored.reduce(function (a, x) { return a + x.value; }, 0) / scored.length;
    out.worst = scored.reduce(function (w, x) { return (lowerBetter[m] ? x.value > w.value : x.value < w.value) ? x : w; });
    return out;
  }

  function conversationCell(m, sc) {
    var td = el("td", "num");
    if (!sc.computed) {
      td.textContent = "n/a";
      td.title = "not computed for this conversation";
    } else if (sc.mean === null) {
      td.className = "num unscored";
      td.textContent = "unscored";
      add(td, el("span", "reason", sc.reasons.filter(function (k, i, all) { return all.indexOf(k) === i; }).join(", ")));
    } else {
      var mean = add(el("span", "mean"), document.createTextNode(fmt(sc.mean)));
      markBelow(mean, m, sc.mean);
      add(td, mean);
      if (sc.once) {
        add(td, el("span", "worst", "the conversation's"));
        td.title = m + " is scored once per conversation, on its last turn";
      } else if (sc.scored > 1) {
        var worst = add(el("span", "worst"), document.createTextNode("worst " + fmt(sc.worst.value) + " · turn " + sc.worst.turn));
        markBelow(worst, m, sc.worst.value);
        add(td, worst);
        td.title = "mean of " + sc.scored + " scored turns; worst: turn " + sc.worst.turn;
      } else {
        add(td, el("span", "worst", "turn " + sc.worst.turn + " only"));
      }
    }
    return td;
  }

  var conversationTable = document.getElementById("conversation-table");
  var conversationRows = conversations.map(function (c) {
    var tr = el("tr"), haystack = [c.id];
    tr.dataset.id = c.id;
    add(tr, el("th", "id", c.id));
    tr.firstChild.scope = "row";
    var present = c.turns.length === c.count ? String(c.count) : c.turns.length + " of " + c.count;
    add(tr, el("td", "num", present));
    var scores = {};
    metrics.forEach(function (m) {
      scores[m] = conversationScore(c, m);
      add(tr, conversationCell(m, scores[m]));
    });
    c.turns.forEach(function (i) { sampleText(samples[i], haystack); });
    return { tr: tr, conversation: c, scores: scores, failing: c.turns.some(function (i) { return rowFailing(samples[i]); }),
      text: haystack.join("\n").toLowerCase() };
  });

  /* --- a table view: sorting by a header, search and filters, the drawer's row ----------------------------------- */

  var views = [];
  function tableView(opts) {
    var view = { table: opts.table, rows: opts.rows, visible: opts.rows, sort: { key: null, dir: 1 } };
    function compare(a, b) {
      var x = opts.sortValue(a, view.sort.key), y = opts.sortValue(b, view.sort.key);
      if (x === null || y === null) {  /* unscored last, whichever the direction */
        if (x === y) return 0;
        return x === null ? 1 : -1;
      }
      if (typeof x === "string" || typeof y === "string") {
        return view.sort.dir * String(x).localeCompare(String(y), undefined, { numeric: true });
      }
      return view.sort.dir * (x - y);
    }
    view.render = function () {
      if (!view.table) return;
      var q = opts.search ? opts.search.value.trim().toLowerCase() : "";
      var list = view.rows.filter(function (row) {
        if (q && row.text.indexOf(q) < 0) return false;
        if (opts.failingOnly && opts.failingOnly.checked && !row.failing) return false;
        return !opts.keep || opts.keep(row);
      });
      if (view.sort.key) {
        list = list.map(function (row, i) { return [row, i]; })
          .sort(function (a, b) { return compare(a[0], b[0]) || a[1] - b[1]; })
          .map(function (p) { return p[0]; });
      }
      view.visible = list;
      var body = view.table.tBodies[0];
      body.replaceChildren.apply(body, list.map(function (row) { return row.tr; }));
      var n = view.rows.length;
      if (opts.count) opts.count.textContent = list.length === n ? "(" + n + ")" : "(" + list.length + " of " + n + " shown)";
      if (opts.noMatch) opts.noMatch.hidden = list.length > 0;
    };
    view.open = opts.open;
    if (view.table) {
      view.table.querySelectorAll("thead th[data-key]").forEach(function (th) {
        th.querySelector("button").addEventListener("click", function () {
          var key = th.dataset.key;
          view.sort = { key: key, dir: view.sort.key === key ? -view.sort.dir : 1 };
          view.table.querySelectorAll("thead th[data-key]").forEach(function (other) {
            other.setAttribute("aria-sort", "none");
          });
          th.setAttribute("aria-sort", view.sort.dir > 0 ? "ascending" : "descending");
          view.render();
        });
      });
    }
    (opts.inputs || []).forEach(function (input) {
      if (!input) return;
      input.addEventListener("input", view.render);
      input.addEventListener("change", view.render);
    });
    view.rows.forEach(function (row) {
      row.tr.tabIndex = 0;
      row.tr.addEventListener("click", function () { openDrawer(view, row); });
      row.tr.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openDrawer(view, row); }
      });
    });
    views.push(view);
    return view;
  }
  function metricSortValue(scoreOf, key) {  // "m:<i>": metrics[i]
    return key.indexOf("m:") === 0 ? scoreOf(metrics[Number(key.slice(2))]) : null;
  }

  var category = document.getElementById("f-category");
  if (category) {
    var cats = [];
    singles.forEach(function (i) { var c = samples[i].category; if (c && cats.indexOf(c) < 0) cats.push(c); });
    cats.sort().forEach(function (c) {
      var opt = el("option", null, c);
      opt.value = "c:" + c;
      category.appendChild(opt);
    });
    if (singles.some(function (i) { return !samples[i].category; })) {
      var none = el("option", null, "(no category)");
      none.value = "none";
      category.appendChild(none);
    }
  }

  var sampleSearch = document.getElementById("f-search"), sampleFailing = document.getElementById("f-failing");
  tableView({
    table: sampleTable, rows: sampleRows, search: sampleSearch, failingOnly: sampleFailing,
    inputs: [sampleSearch, category, sampleFailing],
    count: document.getElementById("sample-count"), noMatch: document.getElementById("no-match"),
    keep: function (row) {
      var cat = category ? category.value : "";  /* option values: "", "none" or "c:" + category */
      if (cat === "none" && row.sample.category) return false;
      return !(cat.indexOf("c:") === 0 && row.sample.category !== cat.slice(2));
    },
    sortValue: function (row, key) {
      var s = row.sample;
      if (key === "id") return s.id;
      if (key === "category") return s.category || "";
      if (key === "calls") return s.judge_calls;
      if (key === "seconds") return s.seconds;
      return metricSortValue(function (m) {
        var r = (s.metrics || {})[m];
        return r && typeof r.value === "number" ? r.value : null;
      }, key);
    },
    open: function (row) { return { title: row.sample.id, body: sampleDetail(row.sample), chat: false }; }
  });

  var conversationSearch = document.getElementById("c-search"), conversationFailing = document.getElementById("c-failing");
  tableView({
    table: conversationTable, rows: conversationRows, search: conversationSearch, failingOnly: conversationFailing,
    inputs: [conversationSearch, conversationFailing],
    count: document.getElementById("conversation-count"), noMatch: document.getElementById("conversation-no-match"),
    sortValue: function (row, key) {
      if (key === "id") return row.conversation.id;
      if (key === "turns") return row.conversation.count;
      return metricSortValue(function (m) { return row.scores[m] ? row.scores[m].mean : null; }, key);
    },
    open: function (row) { return { title: row.conversation.id, body: chatView(row.conversation), chat: true }; }
  });

  /* --- drill-down --------------------------------------------------------------------------------------- */

  var drawer = document.getElementById("detail");
  var detailBody = document.getElementById("detail-body");

  function kvList(obj) {
    var dl = el("dl", "kv");
    Object.keys(obj).forEach(function (k) {
      var v = obj[k];
      var dd = el("dd");
      if (v !== null && typeof v === "object") add(dd, el("pre", "json", JSON.stringify(v, null, 2)));
      else dd.textContent = v === null || v === undefined ? "—" : String(v);
      add(dl, el("dt", null, k), dd);
    });
    return dl;
  }

  // Graded verdicts (verdicts=probability) carry the judge's P(yes) as p_<flag>: shown beside the yes/no tag.
  function probability(item, flagKey) {
    var p = item["p_" + flagKey], raw = item["p_" + flagKey + "_raw"];
    if (typeof p !== "number") return null;
    if (typeof raw === "number" && raw !== p) return el("span", "rank", "calibrated " + fmt(p) + " (raw P(yes) " + fmt(raw) + ")");
    return el("span", "rank", "P(yes) " + fmt(p));
  }

  function verdictList(items, textKey, flagKey, yes, no) {
    var ol = el("ol", "verdicts");
    (items || []).forEach(function (item) {
      var ok = !!item[flagKey];
      add(ol, add(el("li", ok ? "yes" : "no"), tag(ok, yes, no), probability(item, flagKey), el("span", "text", item[textKey])));
    });
    var n = (items || []).filter(function (i) { return i[flagKey]; }).length;
    return [el("p", "summary-line", n + " of " + (items || []).length + " " + yes), ol];
  }

  /* How a metric's evidence is shown: the renderer its definition in the report names (data.definitions[name].renderer,
     {kind, keys: the evidence keys it shows, parameters}); a metric without one gets the key/value list. */
  var RENDERERS = {
    verdicts: function (ev, spec) { return verdictList(ev[spec.items], spec.text, spec.flag, spec.yes, spec.no); },
    questions: function (ev) {
      var out = [];
      var nc = !!ev.noncommittal;
      out.push(add(el("p", "summary-line"), el("span", "tag " + (nc ? "failed" : "neutral"), nc ? "noncommittal: yes" : "noncommittal: no"),
        document.createTextNode(nc ? " the judge found the answer evasive, so the score is 0" : " the answer commits to a reply")));
      var qs = ev.generated_questions || [];
      // questions=checked: do the answer's own statements reply to each question (P(yes))? If not, it counts 0.
      var checked = qs.some(function (q) { return typeof q.p_answered === "number"; });
      var t = el("table", "data compact");
      var hr = add(el("tr"), el("th", null, "generated question"),
        el("th", "num", "cosine similarity to the question"));
      if (checked) add(hr, el("th", null, "the answer replies to it (else counted 0)"));
      add(t, add(el("thead"), hr));
      var tb = add(t, el("tbody"));
      qs.forEach(function (q) {
        var sim = typeof q.similarity === "number" ? q.similarity : null;
        var meter = el("span", "meter");
        var fill = el("span", "fill");
        add(meter, fill);
        fill.style.width = Math.max(0, Math.min(1, sim || 0)) * 100 + "%";
        var row = add(el("tr"), el("td", "text", q.question),
          add(el("td", "num sim"), el("span", null, fmt(sim)), meter));
        if (checked) {
          add(row, add(el("td"), tag(!!q.answered, "answered", "not answered"), probability(q, "answered")));
        }
        add(tb, row);
      });
      out.push(t);
      return out;
    },
    chunks: function (ev, spec, s) {
      var chunks = (ev.chunks || []).slice().sort(function (a, b) { return a.rank - b.rank; });
      var texts = (s.input && s.input.contexts) || [];
      var rel = chunks.filter(function (c) { return c.relevant; }).length;
      var line = rel + " of " + chunks.length + " chunks relevant";
      if (typeof ev.fraction_relevant === "number") line += " (fraction " + fmt(ev.fraction_relevant) + ")";
      if (ev.judged_against) line += ", judged against the " + ev.judged_against;
      var ol = el("ol", texts.length ? "chunks with-text" : "chunks");
      chunks.forEach(function (c) {
        var text = texts[c.rank - 1];  // the chunk the verdict is about, when the report kept the sample's text
        add(ol, add(el("li", c.relevant ? "yes" : "no"), el("span", "rank", "rank " + c.rank), tag(!!c.relevant, "relevant", "not relevant"), probability(c, "relevant"),
          typeof text === "string" ? el("div", "chunk-text", text) : null));
      });
      return [el("p", "summary-line", line + ". Retrieval order, best rank first:"), ol];
    }
  };
  var definitions = data.definitions || {};

  function metricBlock(name, r, s, heading) {  // heading: the name's element, h3 unless given (h4 in a chat turn)
    var box = el("section", "metric-detail");
    var head = add(el("div", "metric-head"), el(heading || "h3", null, name));
    if (!r) {
      add(head, el("span", "tag neutral", "not computed"));
      return add(box, head);
    }
    if (r.value === null || r.value === undefined) {
      add(head, el("span", "tag neutral", "? unscored"));
      add(box, head);
      var kind = reasonKind(r.unscored);
      var p = add(el("p", "reason-line"), el("strong", null, "Reason: "), el("code", null, r.unscored || "(none given)"));
      if (REASONS[kind]) add(p, document.createTextNode(" — " + REASONS[kind] + "."));
      add(box, p);
    } else {
      var t = thresholds[name];
      var low = below(name, r.value);
      add(head, el("span", "score", fmt(r.value)));
      var lb = lowerBetter[name];
      if (lb) add(head, el("span", "muted", "lower is better"));
      if (t !== undefined) add(head, tag(!low, (lb ? "≤ " : "≥ ") + thresholdText(t), (lb ? "above " : "below ") + thresholdText(t)));
      add(box, head);
    }
    var ev = r.evidence || {};
    var spec = (definitions[name] || {}).renderer || {};
    if (!Object.prototype.hasOwnProperty.call(RENDERERS, spec.kind) || !Array.isArray(spec.keys)) spec = null;
    var rest = {};
    Object.keys(ev).forEach(function (k) {
      if (!(spec && spec.keys.indexOf(k) >= 0) && k !== "note") rest[k] = ev[k];
    });
    if (ev.note) add(box, el("p", "note", ev.note));
    if (spec && spec.keys.some(function (k) { return k in ev; })) {
      RENDERERS[spec.kind](ev, spec, s).forEach(function (node) { add(box, node); });
    }
    if (Object.keys(rest).length) add(box, kvList(rest));
    return box;
  }

  /* --- the sample's text: question, answer and reference with the judged statements marked, contexts ------ */

  // The judged items (claims, statements) of each metric shown as verdicts whose text may be found in `field`
  // (answer or reference): a metric that reads only one of them judges items of that one.
  function judgedItems(s, names, field) {
    var out = [];
    names.forEach(function (m) {
      var d = definitions[m] || {}, spec = d.renderer || {}, r = (s.metrics || {})[m];
      var needs = d.needs || [];
      var answer = needs.indexOf("answer") >= 0, reference = needs.indexOf("reference") >= 0;
      if (spec.kind !== "verdicts" || !r || (answer !== reference && (answer ? "answer" : "reference") !== field)) return;
      var items = (r.evidence || {})[spec.items];
      (Array.isArray(items) ? items : []).forEach(function (item) {
        var ok = !!item[spec.flag], p = item["p_" + spec.flag];
        out.push({ text: String(item[spec.text] || "").trim(), ok: ok, word: ok ? spec.yes : spec.no,
          label: m + ": " + (ok ? spec.yes : spec.no) + (typeof p === "number" ? " (P(yes) " + fmt(p) + ")" : "") });
      });
    });
    return out;
  }

  // The text with each judged item found in it marked (exactly, else ignoring case), its verdict beside it; an item
  // overlapping one already marked is left unmarked (its verdict is in the metric's list below).
  function markedText(text, items) {
    var spans = [], lower = text.toLowerCase();
    items.forEach(function (item) {
      if (!item.text) return;
      var at = text.indexOf(item.text);
      if (at < 0) at = lower.indexOf(item.text.toLowerCase());
      if (at >= 0) spans.push({ start: at, end: at + item.text.length, items: [item] });
    });
    spans.sort(function (a, b) { return a.start - b.start || b.end - a.end; });
    var box = el("div", "sample-text"), pos = 0, last = null;
    spans.forEach(function (sp) {
      if (last && sp.start === last.start && sp.end === last.end) {  // the same text judged by another metric
        last.items.push(sp.items[0]);
        return;
      }
      if (sp.start < pos) return;
      if (sp.start > pos) add(box, document.createTextNode(text.slice(pos, sp.start)));
      sp.node = el("mark", null, text.slice(sp.start, sp.end));
      add(box, sp.node);
      sp.after = el("span", "verdict-marks");
      add(box, sp.after);
      pos = sp.end;
      last = sp;
    });
    spans.forEach(function (sp) {
      if (!sp.node) return;
      var ok = sp.items.every(function (i) { return i.ok; });
      sp.node.className = ok ? "yes" : "no";
      sp.node.title = sp.items.map(function (i) { return i.label; }).join("; ");
      sp.items.forEach(function (i) { add(sp.after, el("sup", "tag " + (i.ok ? "passed" : "failed"), (i.ok ? "✓ " : "✗ ") + i.word)); });
    });
    if (pos < text.length) add(box, document.createTextNode(text.slice(pos)));
    return box;
  }

  function textBlock(s, names) {
    var t = s.input, box = add(el("section", "metric-detail sample-input"), add(el("div", "metric-head"), el("h3", null, "sample")));
    if (s.input_truncated) add(box, el("p", "note", "long text cut to the report's bound: each cut is marked in the text"));
    add(box, el("h4", null, "question"), el("div", "sample-text", t.question));
    add(box, el("h4", null, "answer"));
    add(box, typeof t.answer === "string" ? markedText(t.answer, judgedItems(s, names, "answer")) : el("p", "muted", "no answer"));
    add(box, el("h4", null, "reference"));
    add(box, typeof t.reference === "string" ? markedText(t.reference, judgedItems(s, names, "reference")) : el("p", "muted", "no reference"));
    var contexts = t.contexts || [];
    add(box, el("h4", null, "contexts (" + contexts.length + ")"));
    var ol = el("ol", "contexts");
    contexts.forEach(function (c) { add(ol, el("li", "sample-text", c)); });
    add(box, contexts.length ? ol : el("p", "muted", "no contexts"));
    return box;
  }

  function judgeBlock(s, heading) {
    var box = add(el("section", "metric-detail"), add(el("div", "metric-head"), el(heading || "h3", null, "judge")));
    var j = s.judge || {};
    var facts = {
      "judge calls": s.judge_calls,
      "from the cache": j.cache_hits,
      "prompt tokens": j.prompt_tokens,
      "completion tokens": j.completion_tokens,
      "cached prompt tokens": j.cached_tokens,
      "seconds in the judge": j.seconds,
      "seconds for the sample": s.seconds
    };
    Object.keys(facts).forEach(function (k) { if (facts[k] === undefined) delete facts[k]; });
    add(box, kvList(facts));
    var byPrompt = s.calls_by_prompt || {};
    var prompts = Object.keys(byPrompt);
    if (prompts.length) {
      var t = el("table", "data compact");
      var cols = ["prompt", "calls", "from the cache", "prompt tok.", "completion tok.", "cached tok.", "s"];
      var hr = el("tr");
      cols.forEach(function (c, i) { add(hr, el("th", i > 0 ? "num" : null, c)); });
      add(t, add(el("thead"), hr));
      var tb = add(t, el("tbody"));
      prompts.forEach(function (p) {
        var c = byPrompt[p];
        add(tb, add(el("tr"), el("td", null, p), el("td", "num", c.calls), el("td", "num", c.cache_hits),
          el("td", "num", c.prompt_tokens), el("td", "num", c.completion_tokens),
          el("td", "num", c.cached_tokens), el("td", "num", c.seconds)));
      });
      add(box, add(el("details", "calls"), el("summary", null, "calls by prompt (" + prompts.length + ")"),
        add(el("div", "table-wrap"), t)));
    }
    return box;
  }

  function sampleDetail(s) {
    var frag = document.createDocumentFragment();
    add(frag, el("p", "muted", s.category ? "category: " + s.category : "no category"));
    var names = metricNames(s);
    if (s.input) add(frag, textBlock(s, names));
    else if (noText()) add(frag, el("p", "muted", "no sample text: the run kept none (--no-sample-text)"));
    names.forEach(function (m) { add(frag, metricBlock(m, (s.metrics || {})[m], s)); });
    add(frag, judgeBlock(s));
    return frag;
  }
  function metricNames(s) {  // the report's metrics, then any other this sample holds
    var names = metrics.slice();
    Object.keys(s.metrics || {}).forEach(function (m) { if (names.indexOf(m) < 0) names.push(m); });
    return names;
  }
  function noText() { return !!(data.meta && data.meta.sample_text === false); }

  /* --- the chat view: a conversation's turns as messages, each assistant turn with its scores and evidence ------- */

  var toggles = 0;
  // A button that shows and hides `panel` (aria-expanded says which); the panel starts hidden.
  function toggle(label, panel) {
    var button = el("button", "toggle", label);
    button.type = "button";
    panel.id = "toggle-" + (++toggles);
    panel.hidden = true;
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-controls", panel.id);
    button.addEventListener("click", function () {
      panel.hidden = !panel.hidden;
      button.setAttribute("aria-expanded", String(!panel.hidden));
    });
    return button;
  }

  function spans(numbers) {  // [3, 4, 5, 8] -> "3–5, 8"
    var out = [];
    numbers.forEach(function (n, i) {
      if (i > 0 && n === numbers[i - 1] + 1) out[out.length - 1][1] = n;
      else out.push([n, n]);
    });
    return out.map(function (p) { return p[0] === p[1] ? String(p[0]) : p[0] + "–" + p[1]; }).join(", ");
  }

  function bubble(who, label, content) {
    return add(el("div", "bubble " + who), el("span", "who", label), content);
  }

  function turnScores(s, names) {
    var ul = el("ul", "turn-scores");
    ul.setAttribute("aria-label", "scores of this turn");
    names.forEach(function (m) {
      var r = (s.metrics || {})[m];
      if (!r) return;
      var li = add(el("li"), el("span", "name", m + " "));
      if (typeof r.value === "number") {
        var v = add(el("span", "value"), document.createTextNode(fmt(r.value)));
        markBelow(v, m, r.value);
        add(li, v);
      } else {
        li.className = NOT_APPLICABLE[reasonKind(r.unscored)] ? "na" : "unscored";
        add(li, el("span", "value", "unscored"), el("span", "reason", " " + reasonKind(r.unscored)));
        li.title = r.unscored || "";
      }
      add(ul, li);
    });
    return ul;
  }

  function chatTurn(s, count) {
    var t = s.turn, input = s.input, names = metricNames(s);
    var li = add(el("li", "turn"), el("h3", "turn-head", "Turn " + t.turn + " of " + count));
    var said = typeof t.user_message === "string";
    add(li, bubble("user", "user", said ? el("div", "sample-text", t.user_message) : el("p", "muted", "(text not kept)")));
    if (typeof t.question === "string" && t.question !== t.user_message) {
      add(li, add(el("p", "standalone"), el("strong", null, t.rewritten ? "standalone question, rewritten by the judge: " :
        "standalone question, given with the data: "), el("span", "sample-text", t.question)));
    }
    var reply = input && typeof input.answer === "string" ? markedText(input.answer, judgedItems(s, names, "answer"))
      : el("p", "muted", input ? "no answer" : "(text not kept)");
    var turnBox = add(el("div", "assistant-turn"), bubble("assistant", "assistant", reply), turnScores(s, names));
    var evidence = el("div", "turn-evidence");
    if (input && typeof input.reference === "string") {
      add(evidence, add(el("section", "metric-detail sample-input"), add(el("div", "metric-head"), el("h4", null, "reference")),
        markedText(input.reference, judgedItems(s, names, "reference"))));
    }
    names.forEach(function (m) { add(evidence, metricBlock(m, (s.metrics || {})[m], s, "h4")); });
    add(evidence, judgeBlock(s, "h4"));
    var buttons = add(el("div", "turn-buttons"), toggle("evidence of turn " + t.turn, evidence));
    var contexts = input ? input.contexts || [] : null;
    var contextList = null;
    if (contexts && contexts.length) {
      contextList = el("ol", "contexts");
      contexts.forEach(function (c) { add(contextList, el("li", "sample-text", c)); });
      add(buttons, toggle("contexts (" + contexts.length + ")", contextList));
    } else if (contexts) {
      add(buttons, el("span", "muted", "no contexts"));
    }
    return add(li, add(turnBox, buttons, contextList, evidence));
  }

  function chatView(c) {
    var frag = document.createDocumentFragment(), present = {};
    c.turns.forEach(function (i) { present[samples[i].turn.turn] = true; });
    var missing = [];
    for (var n = 1; n <= c.count; n++) if (!present[n]) missing.push(n);
    add(frag, el("p", "muted", c.count + (c.count === 1 ? " turn" : " turns") + ": each user message, the assistant's reply and its scores; a turn's button opens its evidence."));
    if (missing.length) {
      add(frag, el("p", "note", "Turn" + (missing.length > 1 ? "s " : " ") + spans(missing) + " of " + c.count +
        (missing.length > 1 ? " are" : " is") + " not on this page: left off a large report's page (the note above the tables says so; the JSON report holds every turn), or not scored by this run (--limit, or no row for it in the data)."));
    }
    if (noText()) {
      add(frag, el("p", "note", "No text: the run kept none (--no-sample-text), so the chat shows each turn's number and scores only."));
    }
    var ol = el("ol", "chat");
    ol.setAttribute("aria-label", "conversation " + c.id);
    c.turns.forEach(function (i) { add(ol, chatTurn(samples[i], c.count)); });
    return add(frag, ol);
  }

  /* --- the drawer: a sample's evidence or a conversation's chat, prev/next through its table's visible rows ------ */

  var current = null;  // {view, row} the drawer shows

  function openDrawer(view, row) {
    if (!drawer) return;
    var shown = view.open(row);
    current = { view: view, row: row };
    views.forEach(function (v) { v.rows.forEach(function (r) { r.tr.classList.toggle("selected", r === row); }); });
    document.getElementById("detail-title").textContent = shown.title;
    drawer.classList.toggle("chat", shown.chat);
    detailBody.replaceChildren(shown.body);
    detailBody.scrollTop = 0;
    drawer.hidden = false;
    document.body.classList.add("drawer-open");
    document.getElementById("detail-close").focus({ preventScroll: true });
  }

  function closeDetail() {
    if (!drawer || drawer.hidden) return;
    drawer.hidden = true;
    document.body.classList.remove("drawer-open");
    if (current) current.row.tr.focus({ preventScroll: true });
  }

  function step(delta) {
    if (!current || !current.view.visible.length) return;
    var list = current.view.visible, pos = list.indexOf(current.row);
    var next = list[(pos + delta + list.length) % list.length];
    openDrawer(current.view, next);
    next.tr.scrollIntoView({ block: "nearest" });
  }

  if (drawer) {
    document.getElementById("detail-close").addEventListener("click", closeDetail);
    document.getElementById("detail-prev").addEventListener("click", function () { step(-1); });
    document.getElementById("detail-next").addEventListener("click", function () { step(1); });
    document.addEventListener("keydown", function (ev) {
      if (drawer.hidden) return;
      var typing = ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName);
      if (ev.key === "Escape") closeDetail();
      else if (!typing && ev.key === "j") step(1);
      else if (!typing && ev.key === "k") step(-1);
    });
  }

  views.forEach(function (view) { view.render(); });
})();
