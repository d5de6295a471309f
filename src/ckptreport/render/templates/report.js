// ckptreport's review page: the section chooser and the scenario table (sort, filter, page).
// Every string from the inputs is written with textContent: shown as text, never parsed as markup.
(function () {
  "use strict";

  // ---- how a value reads: the rules of ckptreport's units.py, column unit by column unit ----
  var BYTES = [[1e18, "EB"], [1e15, "PB"], [1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
  var BW = [[1e15, "PB/s"], [1e12, "TB/s"], [1e9, "GB/s"], [1e6, "MB/s"], [1e3, "kB/s"]];
  var FLOPS = [[1e18, "EFLOPS"], [1e15, "PFLOPS"], [1e12, "TFLOPS"], [1e9, "GFLOPS"]];
  var COUNT = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "K"]];
  var SCALE = { bytes: 1, s: 1, GBps: 1e9, pct: 0.01, usd: 1, TFLOPS: 1e12 };
  var KIND = { bytes: "bytes", s: "duration", GBps: "bandwidth", pct: "percent", usd: "usd", TFLOPS: "flops" };

  function sig(x, d) {
    if (x === 0) { return "0"; }
    var s = x.toPrecision(d);
    if (s.indexOf("e") >= 0) {
      return x.toFixed(Math.max(d - 1 - Math.floor(Math.log10(Math.abs(x))), 0));
    }
    if (s.indexOf(".") >= 0) { s = s.replace(/0+$/, "").replace(/\.$/, ""); }
    return s;
  }
  function stepped(v, steps, unit, d, sep) {
    for (var i = 0; i < steps.length; i++) {
      if (Math.abs(v) >= steps[i][0]) { return sig(v / steps[i][0], d) + sep + steps[i][1]; }
    }
    return unit ? sig(v, d) + sep + unit : sig(v, d);
  }
  function money(v, digits) {
    return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function fmt(v, kind) {
    if (kind === "bytes") { return stepped(v, BYTES, "B", 3, " "); }
    if (kind === "bandwidth") { return stepped(v, BW, "B/s", 3, " "); }
    if (kind === "flops") { return stepped(v, FLOPS, "FLOPS", 3, " "); }
    if (kind === "percent") { return sig(v * 100, 3) + "%"; }
    if (kind === "usd") { return "$" + (Math.abs(v) >= 1000 ? money(v, 0) : money(v, 2)); }
    var a = Math.abs(v);
    if (a < 120) { return sig(v, 3) + " s"; }
    if (a < 7200) { return sig(v / 60, 3) + " min"; }
    if (a < 72 * 3600) { return sig(v / 3600, 3) + " h"; }
    if (a < 2 * 365.25 * 86400) { return sig(v / 86400, 3) + " d"; }
    return sig(v / (365.25 * 86400), 3) + " y";
  }
  function show(v, col) {
    if (col.unit === "label") { return String(v); }
    if (col.unit === "bool") { return v ? "yes" : "no"; }
    if (v === null || v !== v) { return "n/a"; }
    if (!isFinite(v)) { return v > 0 ? col.infinite : "-inf"; }
    if (col.unit === "days") { return money(v, 1) + " days"; }
    if (col.unit === "B/param") { return String(v) + " B/param"; }
    if (col.unit === "count") { return Math.abs(v) < 1e6 ? money(v, 0) : stepped(v, COUNT, "", 5, ""); }
    return fmt(v * SCALE[col.unit], KIND[col.unit]);
  }

  // ---- the sections: one model on one SKU at a time ----
  var select = document.getElementById("section-select");
  var lines = document.querySelectorAll("section.line");
  function open(id) {
    var found = false;
    for (var i = 0; i < lines.length; i++) { if (lines[i].id === id) { found = true; } }
    if (!found) { return false; }
    for (var j = 0; j < lines.length; j++) { lines[j].hidden = lines[j].id !== id; }
    if (select) { select.value = id; }
    return true;
  }
  if (select) {
    select.addEventListener("change", function () { location.hash = select.value; });
    window.addEventListener("hashchange", function () {
      if (open(location.hash.slice(1))) { document.getElementById(location.hash.slice(1)).scrollIntoView(); }
    });
    if (!open(location.hash.slice(1))) { open(select.value); }
  }

  // ---- the scenario table ----
  var data = JSON.parse(document.getElementById("scenario-data").textContent);
  var cols = data.columns;
  var n = data.rows;
  function expand(flat) {  // value, length, value, length, ... -> the values
    var out = [];
    for (var r = 0; r < flat.length; r += 2) { for (var j = 0; j < flat[r + 1]; j++) { out.push(flat[r]); } }
    return out;
  }
  var index = expand(data.index_steps);
  for (var r = 1; r < index.length; r++) { index[r] += index[r - 1]; }
  data.index = index;
  var values = cols.map(function (c) {
    var codes = c.runs ? expand(c.runs) : c.codes;
    if (c.dict) { return codes.map(function (k) { return c.dict[k]; }); }
    return codes || c.values;
  });
  var filters = cols.map(function () { return null; });
  var order = null, sortCol = -1, sortDir = 1, page = 0, size = 50, view = [];
  var head = document.getElementById("scenario-head");
  var filterRow = document.getElementById("scenario-filters");
  var body = document.getElementById("scenario-body");
  var shown = document.getElementById("shown");

  function cell(tag, text, cls) {
    var e = document.createElement(tag);
    e.textContent = text;
    if (cls) { e.className = cls; }
    return e;
  }

  function numberTest(text) {
    var t = text.trim();
    if (t === "") { return null; }
    var num = "([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)";
    var range = new RegExp("^" + num + "\\s*\\.\\.\\s*" + num + "$").exec(t);
    if (range) {
      var lo = parseFloat(range[1]), hi = parseFloat(range[2]);
      return function (v) { return v !== null && v >= lo && v <= hi; };
    }
    var m = new RegExp("^(<=|>=|<|>|=)?\\s*" + num + "$").exec(t);
    if (!m) { return undefined; }
    var x = parseFloat(m[2]), op = m[1] || "=";
    return {
      "<": function (v) { return v !== null && v < x; }, "<=": function (v) { return v !== null && v <= x; },
      ">": function (v) { return v !== null && v > x; }, ">=": function (v) { return v !== null && v >= x; },
      "=": function (v) { return v !== null && v === x; }
    }[op];
  }

  cols.forEach(function (c, k) {
    var th = document.createElement("th");
    th.scope = "col";
    th.title = c.doc;
    var b = cell("button", c.name);
    b.type = "button";
    b.dataset.col = c.name;
    b.addEventListener("click", function () { sortBy(k); });
    th.appendChild(b);
    head.appendChild(th);
    var f = document.createElement("th");
    var input;
    if (c.unit === "label" || c.unit === "bool") {
      input = document.createElement("select");
      input.appendChild(cell("option", "all"));
      var choices = c.unit === "bool" ? ["yes", "no"] : c.dict.slice().sort();
      choices.forEach(function (v) { var o = cell("option", v); o.value = v; input.appendChild(o); });
      input.firstChild.value = "";
      input.addEventListener("change", function () {
        var v = input.value;
        filters[k] = v === "" ? null : c.unit === "bool" ? function (x) { return (x ? "yes" : "no") === v; }
          : function (x) { return x === v; };
        apply();
      });
    } else {
      input = document.createElement("input");
      input.type = "text";
      input.placeholder = "> 1, 1..5";
      input.addEventListener("input", function () {
        var test = numberTest(input.value);
        input.classList.toggle("bad", test === undefined);
        filters[k] = test || null;
        apply();
      });
    }
    input.dataset.col = c.name;
    input.setAttribute("aria-label", "filter " + c.name);
    f.appendChild(input);
    filterRow.appendChild(f);
  });
  head.insertBefore(cell("th", "row"), head.firstChild);
  filterRow.insertBefore(document.createElement("th"), filterRow.firstChild);

  function compare(k) {
    var v = values[k];
    return function (a, b) {
      var x = v[a], y = v[b];
      var xn = x === null || x !== x, yn = y === null || y !== y;
      if (xn || yn) { return xn === yn ? a - b : (xn ? 1 : -1); }  // unknown last, either way
      if (x < y) { return -sortDir; }
      if (x > y) { return sortDir; }
      return a - b;  // ties keep the rows' order
    };
  }

  function sortBy(k) {
    sortDir = sortCol === k ? -sortDir : 1;
    sortCol = k;
    var ths = head.querySelectorAll("th");
    for (var i = 0; i < ths.length; i++) { ths[i].removeAttribute("aria-sort"); }
    ths[k + 1].setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
    apply();
  }

  function apply() {
    view = [];
    var active = [];
    filters.forEach(function (f, k) { if (f) { active.push([f, values[k]]); } });
    for (var i = 0; i < n; i++) {
      var ok = true;
      for (var j = 0; j < active.length && ok; j++) { ok = active[j][0](active[j][1][i]); }
      if (ok) { view.push(i); }
    }
    if (sortCol >= 0) { view.sort(compare(sortCol)); }
    page = 0;
    render();
  }

  function render() {
    var pages = Math.max(1, Math.ceil(view.length / size));
    page = Math.min(page, pages - 1);
    var first = page * size, last = Math.min(view.length, first + size);
    var frag = document.createDocumentFragment();
    for (var r = first; r < last; r++) {
      var i = view[r];
      var tr = document.createElement("tr");
      tr.dataset.row = data.index[i];
      tr.appendChild(cell("td", String(data.index[i])));
      for (var k = 0; k < cols.length; k++) {
        var v = values[k][i];
        var td = cell("td", show(v, cols[k]), cols[k].unit === "label" ? "text" : null);
        td.dataset.v = v === null ? "null" : String(v);
        tr.appendChild(td);
      }
      frag.appendChild(tr);
    }
    body.replaceChildren(frag);
    shown.textContent = view.length ? "rows " + (first + 1).toLocaleString("en-US") + " to " +
      last.toLocaleString("en-US") + " of " + view.length.toLocaleString("en-US") +
      (view.length < n ? " (filtered from " + n.toLocaleString("en-US") + ")" : "") : "no row matches";
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }

  document.getElementById("prev").addEventListener("click", function () { page -= 1; render(); });
  document.getElementById("next").addEventListener("click", function () { page += 1; render(); });
  document.getElementById("page-size").addEventListener("change", function (e) {
    size = parseInt(e.target.value, 10); render();
  });
  document.getElementById("clear").addEventListener("click", function () {
    var inputs = filterRow.querySelectorAll("input, select");
    for (var i = 0; i < inputs.length; i++) { inputs[i].value = ""; inputs[i].classList.remove("bad"); }
    filters = cols.map(function () { return null; });
    apply();
  });
  apply();
  document.body.dataset.ready = "1";
}());
