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

  /* --- rows ------------------------------------------------------------------------------------------------ */

  var table = document.getElementById("sample-table");
  var rows = samples.map(function (s, index) {
    var failing = false;
    var haystack = [s.id, s.category || ""];
    var tr = el("tr");
    tr.tabIndex = 0;
    tr.dataset.index = String(index);
    tr.dataset.id = s.id;
    add(tr, el("th", "id", s.id));
    tr.firstChild.scope = "row";
    if (table && table.querySelector('th[data-key="category"]')) add(tr, el("td", "cat", s.category || "—"));
    metrics.forEach(function (m) {
      var r = (s.metrics || {})[m];
      var td = el("td", "num");
      if (!r) {
        td.textContent = "n/a";
        td.title = "not computed for this sample";
      } else if (r.value === null || r.value === undefined) {
        failing = true;
        td.className = "num unscored";
        td.textContent = "unscored";
        add(td, el("span", "reason", reasonKind(r.unscored)));
        td.title = r.unscored || "";
        haystack.push(r.unscored || "");
      } else {
        td.textContent = fmt(r.value);
        if (below(m, r.value)) {
          failing = true;
          td.className = "num below";
          var side = lowerBetter[m] ? "above" : "below";
          add(td, el("span", "mark", " ▼"), el("span", "sr", " " + side + " threshold"));
          td.title = side + " the threshold " + thresholdText(thresholds[m]);
        }
      }
      if (r) collectText(r.evidence, haystack);
      add(tr, td);
    });
    add(tr, el("td", "num", s.judge_calls), el("td", "num", typeof s.seconds === "number" ? s.seconds.toFixed(2) : "—"));
    tr.addEventListener("click", function () { openDetail(index); });
    tr.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openDetail(index); }
    });
    return { tr: tr, sample: s, failing: failing, text: haystack.join("\n").toLowerCase() };
  });

  function sortValue(row, key) {
    var s = row.sample;
    if (key === "id") return s.id;
    if (key === "category") return s.category || "";
    if (key === "calls") return s.judge_calls;
    if (key === "seconds") return s.seconds;
    if (key.indexOf("m:") === 0) {
      var r = (s.metrics || {})[metrics[Number(key.slice(2))]];
      return r && typeof r.value === "number" ? r.value : null;
    }
    return null;
  }

  var sort = { key: null, dir: 1 };
  var visible = [];

  function compare(a, b) {
    var x = sortValue(a, sort.key), y = sortValue(b, sort.key);
    if (x === null || y === null) {  /* unscored last, whichever the direction */
      if (x === y) return 0;
      return x === null ? 1 : -1;
    }
    if (typeof x === "string" || typeof y === "string") {
      return sort.dir * String(x).localeCompare(String(y), undefined, { numeric: true });
    }
    return sort.dir * (x - y);
  }

  var search = document.getElementById("f-search");
  var category = document.getElementById("f-category");
  var failingOnly = document.getElementById("f-failing");
  var count = document.getElementById("sample-count");
  var noMatch = document.getElementById("no-match");

  if (category) {
    var cats = [];
    samples.forEach(function (s) { if (s.category && cats.indexOf(s.category) < 0) cats.push(s.category); });
    cats.sort().forEach(function (c) {
      var opt = el("option", null, c);
      opt.value = "c:" + c;
      category.appendChild(opt);
    });
    if (samples.some(function (s) { return !s.category; })) {
      var none = el("option", null, "(no category)");
      none.value = "none";
      category.appendChild(none);
    }
  }

  function render() {
    if (!table) return;
    var q = search ? search.value.trim().toLowerCase() : "";
    var cat = category ? category.value : "";
    var list = rows.filter(function (row) {
      if (q && row.text.indexOf(q) < 0) return false;
      if (cat === "none" && row.sample.category) return false;  /* option values: "", "none" or "c:" + category */
      if (cat.indexOf("c:") === 0 && row.sample.category !== cat.slice(2)) return false;
      if (failingOnly && failingOnly.checked && !row.failing) return false;
      return true;
    });
    if (sort.key) {
      list = list.map(function (row, i) { return [row, i]; })
        .sort(function (a, b) { return compare(a[0], b[0]) || a[1] - b[1]; })
        .map(function (p) { return p[0]; });
    }
    visible = list;
    var body = table.tBodies[0];
    body.replaceChildren.apply(body, list.map(function (row) { return row.tr; }));
    if (count) count.textContent = list.length === rows.length ? "(" + rows.length + ")" : "(" + list.length + " of " + rows.length + " shown)";
    if (noMatch) noMatch.hidden = list.length > 0;
  }

  if (table) {
    table.querySelectorAll("thead th[data-key]").forEach(function (th) {
      th.querySelector("button").addEventListener("click", function () {
        var key = th.dataset.key;
        sort = { key: key, dir: sort.key === key ? -sort.dir : 1 };
        table.querySelectorAll("thead th[data-key]").forEach(function (other) {
          other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
        render();
      });
    });
  }
  [search, category, failingOnly].forEach(function (input) {
    if (!input) return;
    input.addEventListener("input", render);
    input.addEventListener("change", render);
  });

  /* --- drill-down --------------------------------------------------------------------------------------- */

  var drawer = document.getElementById("detail");
  var detailBody = document.getElementById("detail-body");
  var current = null;

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

  function metricBlock(name, r, s) {
    var box = el("section", "metric-detail");
    var head = add(el("div", "metric-head"), el("h3", null, name));
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

  function judgeBlock(s) {
    var box = add(el("section", "metric-detail"), add(el("div", "metric-head"), el("h3", null, "judge")));
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

  function openDetail(index) {
    var s = samples[index];
    if (!s || !drawer) return;
    current = index;
    rows.forEach(function (row, i) { row.tr.classList.toggle("selected", i === index); });
    document.getElementById("detail-title").textContent = s.id;
    var frag = document.createDocumentFragment();
    add(frag, el("p", "muted", s.category ? "category: " + s.category : "no category"));
    var names = metrics.slice();
    Object.keys(s.metrics || {}).forEach(function (m) { if (names.indexOf(m) < 0) names.push(m); });
    if (s.input) add(frag, textBlock(s, names));
    else if (data.meta && data.meta.sample_text === false) add(frag, el("p", "muted", "no sample text: the run kept none (--no-sample-text)"));
    names.forEach(function (m) { add(frag, metricBlock(m, (s.metrics || {})[m], s)); });
    add(frag, judgeBlock(s));
    detailBody.replaceChildren(frag);
    detailBody.scrollTop = 0;
    drawer.hidden = false;
    document.body.classList.add("drawer-open");
    document.getElementById("detail-close").focus({ preventScroll: true });
  }

  function closeDetail() {
    if (!drawer || drawer.hidden) return;
    drawer.hidden = true;
    document.body.classList.remove("drawer-open");
    if (current !== null && rows[current]) rows[current].tr.focus({ preventScroll: true });
  }

  function step(delta) {
    if (current === null || !visible.length) return;
    var pos = visible.findIndex(function (row) { return Number(row.tr.dataset.index) === current; });
    var next = visible[(pos + delta + visible.length) % visible.length];
    openDetail(Number(next.tr.dataset.index));
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

  render();
})();
