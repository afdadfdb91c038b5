// A stub DOM, just enough to run the HTML report's app.js in node (tests/fast/report/test_html_drill_down.py,
// test_html_conversations.py): it clicks every row of the sample and conversation tables and prints the drawer's tree
// (a sample's evidence, a conversation's chat), one element a line, indented by depth; "ROW <table> <id>" before each.
// usage: node drill_down.js APP_JS REPORT_HTML
const fs = require("fs");
const [appPath, htmlPath] = process.argv.slice(2);
const html = fs.readFileSync(htmlPath, "utf8");
const data = html.match(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/)[1];
function El(tag) {
  this.tagName = String(tag).toUpperCase(); this.children = []; this._text = ""; this.className = "";
  this.style = {}; this.dataset = {}; this.value = ""; this.checked = false; this.attrs = {}; this.listeners = {}; this.hidden = false; this.title = "";
  this.classList = { add() {}, remove() {}, toggle() {} };
}
El.prototype = {
  appendChild(c) { if (c && c.isFrag) { c.children.forEach((x) => this.children.push(x)); } else this.children.push(c); return c; },
  get firstChild() { return this.children[0]; },
  set textContent(t) { this._text = String(t); this.children = []; },
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); },
  setAttribute(k, v) { this.attrs[k] = String(v); },
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; },
  addEventListener(ev, f) { (this.listeners[ev] = this.listeners[ev] || []).push(f); },
  querySelector() { return null; }, querySelectorAll() { return []; },
  replaceChildren(...cs) { this.children = []; cs.forEach((c) => this.appendChild(c)); },
  focus() {}, scrollIntoView() {},
};
const ids = {};
function byId(id) {
  if (!ids[id]) { ids[id] = new El("div"); }
  return ids[id];
}
ids["report-data"] = new El("script"); ids["report-data"]._text = data;
const tables = ["conversation-table", "sample-table"];  // the page's order
tables.forEach((id) => {
  const table = new El("table"), tbody = new El("tbody");
  table.querySelector = (sel) => (sel === "tbody" ? tbody : null);
  table.tBodies = [tbody];
  ids[id] = table;
});
global.document = {
  getElementById: byId, createElement: (t) => new El(t),
  createTextNode: (t) => { const n = new El("#text"); n._text = String(t); return n; },
  createDocumentFragment: () => { const f = new El("#frag"); f.isFrag = true; return f; },
  addEventListener() {}, body: new El("body"), querySelectorAll: () => [],
};
global.window = global;
function dump(n, d) {
  const own = n._text ? JSON.stringify(n._text) : "";
  let s = "  ".repeat(d) + n.tagName + (n.className ? "." + n.className.replace(/ /g, ".") : "") + " " + own +
    (n.style.width ? " w=" + n.style.width : "") + (n.title ? " title=" + JSON.stringify(n.title) : "") +
    Object.keys(n.attrs).filter((k) => k.startsWith("aria-")).map((k) => " " + k + "=" + n.attrs[k]).join("") +
    (n.hidden ? " [hidden]" : "") + "\n";
  n.children.forEach((c) => { s += dump(c, d + 1); });
  return s;
}
eval(fs.readFileSync(appPath, "utf8"));
const rows = [];
tables.forEach((id) => {
  (function collect(n) { if (n.tagName === "TR" && n.listeners.click) rows.push([id, n]); n.children.forEach(collect); })(ids[id].tBodies[0]);
});
let out = "rows " + rows.length + "\n";
rows.forEach(([table, tr]) => {
  out += "ROW " + table + " " + tr.dataset.id + "\n" + dump(tr, 0);
  tr.listeners.click[0]();
  if (process.env.OPEN_TOGGLES) {  // click every toggle button in the drawer: its panel shows
    (function click(n) { if (n.tagName === "BUTTON" && n.listeners.click) n.listeners.click.forEach((f) => f()); n.children.forEach(click); })(ids["detail-body"]);
  }
  out += dump(ids["detail-body"], 0);
});
process.stdout.write(out);
