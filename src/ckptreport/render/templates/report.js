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
  function hashId() { return location.hash.slice(1).split("&")[0]; }  // the section; "&view=" the table's
  function hashView() {
    var m = /&view=([^&]*)/.exec(location.hash);
    try { return m ? JSON.parse(decodeURIComponent(m[1])) : null; } catch (e) { return null; }
  }
  if (select) {
    select.addEventListener("change", function () {
      location.hash = select.value + (/&view=[^&]*/.exec(location.hash) || [""])[0];
    });
    window.addEventListener("hashchange", function () {
      if (open(hashId())) { document.getElementById(hashId()).scrollIntoView(); }
    });
    if (!open(hashId())) { open(select.value); }
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

  // ---- reading what a reader types, in the units the table shows: 30 min, 5 TB, 1%, $60,000, 16,384 ----
  var DURATION = { s: 1, sec: 1, second: 1, seconds: 1, min: 60, mins: 60, minute: 60, minutes: 60, h: 3600,
    hr: 3600, hour: 3600, hours: 3600, d: 86400, day: 86400, days: 86400, w: 604800, week: 604800,
    weeks: 604800, y: 31557600, yr: 31557600, year: 31557600, years: 31557600 };
  var SIZE = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, PB: 1e15, EB: 1e18, KiB: 1024,
    MiB: Math.pow(2, 20), GiB: Math.pow(2, 30), TiB: Math.pow(2, 40), PiB: Math.pow(2, 50) };
  var MANY = { k: 1e3, K: 1e3, M: 1e6, B: 1e9, T: 1e12 };
  var EXAMPLE = { s: "30 min", bytes: "5 TB", GBps: "100 GB/s", pct: "1%", usd: "$60,000", count: "16,384",
    days: "30 d", TFLOPS: "989 TFLOPS" };
  function parseIn(text, unit) {  // {value} in the column's own unit, or {error}
    var t = String(text).trim().replace(/,/g, "");
    var m = /^(\$)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)$/.exec(t);
    var fail = { error: "cannot read '" + text + "' as " + (EXAMPLE[unit] ? "e.g. " + EXAMPLE[unit] : "a number") };
    if (!m || (m[1] && unit !== "usd")) { return fail; }
    var x = parseFloat(m[2]), u = m[3];
    if (!u) { return { value: x }; }
    if (unit === "s" && DURATION[u]) { return { value: x * DURATION[u] }; }
    if (unit === "days" && DURATION[u]) { return { value: x * DURATION[u] / 86400 }; }
    if (unit === "bytes" && SIZE[u]) { return { value: x * SIZE[u] }; }
    if (unit === "GBps" && /\/s$/.test(u)) {
      var per = u.slice(0, -2), bits = /^[kMGTP]?b$/.test(per);
      var bytes = bits ? SIZE[per.slice(0, -1) + "B"] / 8 : SIZE[per];
      if (bytes) { return { value: x * bytes / 1e9 }; }
    }
    if (unit === "pct" && u === "%") { return { value: x }; }
    if (unit === "count" && MANY[u]) { return { value: x * MANY[u] }; }
    if (unit === "TFLOPS" && /FLOPS$/.test(u)) {
      var f = { TFLOPS: 1, PFLOPS: 1e3, EFLOPS: 1e6, GFLOPS: 1e-3 }[u];
      if (f) { return { value: x * f }; }
    }
    return fail;
  }
  function numberTest(text, unit) {  // a filter: a test of a value, null for none, {error} unread
    var t = text.trim();
    if (t === "") { return null; }
    var range = /^(.+?)\s*\.\.\s*(.+)$/.exec(t);
    if (range) {
      var lo = parseIn(range[1], unit), hi = parseIn(range[2], unit);
      if (lo.error || hi.error) { return lo.error ? lo : hi; }
      return function (v) { return v !== null && v >= lo.value && v <= hi.value; };
    }
    var m = /^(<=|>=|<|>|=)?\s*(.+)$/.exec(t), x = parseIn(m[2], unit), op = m[1] || "=";
    if (x.error) { return x; }
    var within = function (v) { return Math.abs(v - x.value) <= 5e-4 * Math.abs(x.value); };  // = reads as shown: 3 digits
    return {
      "<": function (v) { return v !== null && v < x.value; }, "<=": function (v) { return v !== null && v <= x.value; },
      ">": function (v) { return v !== null && v > x.value; }, ">=": function (v) { return v !== null && v >= x.value; },
      "=": function (v) { return v !== null && (v === x.value || within(v)); }
    }[op];
  }
  var message = document.getElementById("filter-message");
  function said() {  // what no filter could read, in words
    var bad = [];
    filterRow.querySelectorAll("input.bad").forEach(function (i) { bad.push(i.dataset.col + ": " + i.title); });
    message.textContent = bad.join("; ");
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
      input.placeholder = "> " + (EXAMPLE[c.unit] || "1") + ", a..b";
      input.addEventListener("input", function () {
        var test = numberTest(input.value, c.unit), bad = test !== null && typeof test !== "function";
        input.classList.toggle("bad", bad);
        input.title = bad ? test.error : "";
        filters[k] = bad ? null : test;
        said();
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

  // ---- which columns show: a default that fits a screen, the rest a tick away ----
  var DEFAULT = ["model", "sku", "gpus", "interval_s", "tier", "strategy", "engine", "overhead_pct",
    "meets_target", "ettr_pct", "total_usd"];
  var visible = cols.map(function (c) { return DEFAULT.indexOf(c.name) >= 0; });
  if (!visible.some(Boolean)) { visible = cols.map(function () { return true; }); }
  var chooser = document.getElementById("column-list");
  var boxes = cols.map(function (c, k) {
    var label = document.createElement("label"), box = document.createElement("input");
    box.type = "checkbox";
    box.dataset.col = c.name;
    box.addEventListener("change", function () { visible[k] = box.checked; showColumns(); render(); keep(); });
    label.appendChild(box);
    label.appendChild(document.createTextNode(" " + c.name));
    label.title = c.doc;
    chooser.appendChild(label);
    return box;
  });
  function showColumns() {
    var heads = head.children, fs = filterRow.children;
    cols.forEach(function (c, k) { heads[k + 1].hidden = fs[k + 1].hidden = !visible[k]; boxes[k].checked = visible[k]; });
    document.getElementById("column-count").textContent = visible.filter(Boolean).length + " of " + cols.length;
  }
  document.getElementById("all-columns").addEventListener("click", function () {
    visible = cols.map(function () { return true; }); showColumns(); render(); keep();
  });
  document.getElementById("default-columns").addEventListener("click", function () {
    visible = cols.map(function (c) { return DEFAULT.indexOf(c.name) >= 0; }); showColumns(); render(); keep();
  });

  // ---- the view in the address: filters, sort and columns, so a link reproduces it ----
  var restoring = false;
  function keep() {
    if (restoring) { return; }
    var f = {};
    filterRow.querySelectorAll("input, select").forEach(function (i) { if (i.value !== "") { f[i.dataset.col] = i.value; } });
    var view = { f: f, c: cols.filter(function (c, k) { return visible[k]; }).map(function (c) { return c.name; }) };
    if (sortCol >= 0) { view.s = [cols[sortCol].name, sortDir]; }
    var id = hashId() || (select ? select.value : "");
    history.replaceState(null, "", "#" + id + "&view=" + encodeURIComponent(JSON.stringify(view)));
  }
  function restore(view) {
    if (!view) { return; }
    restoring = true;
    if (Array.isArray(view.c)) { visible = cols.map(function (c) { return view.c.indexOf(c.name) >= 0; }); }
    Object.keys(view.f || {}).forEach(function (name) {
      var i = filterRow.querySelector("[data-col='" + name.replace(/[^\w]/g, "") + "']");
      if (i) { i.value = String(view.f[name]); i.dispatchEvent(new Event(i.tagName === "SELECT" ? "change" : "input")); }
    });
    var at = view.s ? cols.map(function (c) { return c.name; }).indexOf(view.s[0]) : -1;
    if (at >= 0) { sortCol = at; sortDir = view.s[1] === -1 ? 1 : -1; sortBy(at); }
    showColumns();
    render();
    restoring = false;
  }

  // ---- the rows shown, as CSV: every column the table holds, a formula's first character neutralised ----
  function csvCell(v, c) {
    var t = c.unit === "bool" ? (v ? "yes" : "no") : (v === null || v !== v ? "" : String(v));
    if (c.unit === "label" && /^[=+\-@\t\r]/.test(t)) { t = "'" + t; }  // as scenarios.csv does
    return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function csv() {
    var out = ["row," + cols.map(function (c) { return csvCell(c.name, { unit: "label" }); }).join(",")];
    view.forEach(function (i) {
      out.push(String(data.index[i]) + "," + cols.map(function (c, k) { return csvCell(values[k][i], c); }).join(","));
    });
    return out.join("\r\n") + "\r\n";
  }
  document.getElementById("download").addEventListener("click", function () {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
    a.download = "scenarios-filtered.csv";
    document.body.appendChild(a);
    a.click();
    a.remove();
  });

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
    keep();
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
        if (!visible[k]) { continue; }
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
    said();
    filters = cols.map(function () { return null; });
    apply();
  });
  var initial = hashView();  // read before the first drawing writes the default view
  showColumns();
  restoring = true;
  apply();
  restoring = false;
  restore(initial);
  keep();
  window.ckptreportTable = { csv: csv, shown: function () { return view.length; } };

  // ---- the live model: a section's options recomputed from edited inputs (CKPT_MODEL, generated
  // from the column definitions), re-ranked by the rule (model/rule.py) ----
  var live = document.getElementById("whatif-data");
  var W = live ? JSON.parse(live.textContent) : null;
  function decoded(c) {
    var codes = c.runs ? expand(c.runs) : c.codes;
    var raw = c.dict ? codes.map(function (k) { return c.dict[k]; }) : codes || c.values;
    if (c.unit === "label") { return raw; }
    if (c.unit === "bool") { return raw.map(function (x) { return !!x; }); }
    return raw.map(function (x) { return x === null ? NaN : x; });
  }
  var inputs = {}, rowsOf = [];
  if (W) {
    W.inputs.forEach(function (c) { inputs[c.name] = decoded(c); });
    rowsOf = expand(W.index_steps);
    for (var q = 1; q < rowsOf.length; q++) { rowsOf[q] += rowsOf[q - 1]; }
  }
  function evaluate(line, edits) {  // each option's row: its inputs, the edits, then every column in order
    return W.sections[line].map(function (p) {
      var v = {};
      for (var name in inputs) { v[name] = inputs[name][p]; }
      edits.forEach(function (e) {
        var owner = W.entity[e.input];
        if (!e.entity || !owner || v[owner] === e.entity) { v[e.input] = e.value; }
      });
      for (var k = 0; k < CKPT_MODEL.length; k++) { v[CKPT_MODEL[k][0]] = CKPT_MODEL[k][1](v); }
      v.row = rowsOf[p];
      return v;
    });
  }
  function before(x, y) {  // numpy's order of floats: NaN last
    var xn = x !== x, yn = y !== y;
    if (xn || yn) { return xn === yn ? 0 : (xn ? 1 : -1); }
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  function ranked(rows) {  // rule.rank for one decision: candidates first, by their keys, ties in order
    var ok = rows.map(function (r) { return !!r.recommendable; });
    var unpriced = rows.map(function (r) { return !!r.tier_durable && !!r.meets_target; });
    var anyDurable = rows.some(function (r) { return !!r.tier_durable; });
    var status = ok.some(Boolean) ? 0 : (unpriced.some(Boolean) ? 1 : 2);
    var keys = [["total_usd", "tier_bought_GBps", "overhead_pct"], ["tier_bought_GBps", "overhead_pct"],
      ["overhead_pct", "tier_bought_GBps"]][status];
    var cand = rows.map(function (r, i) {
      return status === 0 ? ok[i] : (status === 1 ? unpriced[i] : (anyDurable ? !!r.tier_durable : true));
    });
    var order = rows.map(function (r, i) { return i; });
    order.sort(function (a, b) {
      if (cand[a] !== cand[b]) { return cand[a] ? -1 : 1; }
      for (var k = 0; k < keys.length; k++) {
        var c = before(Number(rows[a][keys[k]]), Number(rows[b][keys[k]]));
        if (c) { return c; }
      }
      return a - b;
    });
    return { order: order, status: ["recommended", "needs a price", "closest"][status] };
  }
  function whatIf(line, edits) {
    var rows = evaluate(line, edits), r = ranked(rows);
    return { rows: rows, order: r.order, status: r.status, pick: rows[r.order[0]] };
  }
  function optionOf(r) { return r.strategy + " to " + r.tier + " with " + r.engine; }
  var PCT = { unit: "pct", infinite: "unbounded" }, USD = { unit: "usd", infinite: "unbounded" };
  var FIGURES = ["ckpt_bytes", "bytes_per_node", "stall_s", "write_s", "overhead_pct", "restore_s",
    "required_write_GBps", "tier_bought_GBps", "storage_usd_month", "lost_gpu_usd_month", "total_usd_month",
    "total_usd", "run_days", "ettr_pct", "time_to_recover_s"];
  function whatIfPanel(box, line) {  // the controls: an input (and whose), a value in its units, apply, reset
    var meta = {};
    W.inputs.forEach(function (c) { meta[c.name] = c; });
    var editable = W.inputs.filter(function (c) { return c.unit !== "label" && c.unit !== "bool"; })
      .map(function (c) { return c.name; }).sort();
    var edits = [], base = whatIf(line, []);
    box.appendChild(cell("h4", "What if"));
    box.appendChild(cell("p", "Change an input of this section's options, in its units (30 min, 100 GB/s, " +
      "$2.50, 4,096): every figure is recomputed from the column definitions and the options re-ranked by " +
      "the rule.", "small"));
    var form = document.createElement("p");
    var pickInput = document.createElement("select"), pickWhose = document.createElement("select");
    var value = document.createElement("input"), go = cell("button", "apply"), reset = cell("button", "reset");
    pickInput.setAttribute("aria-label", "input to change");
    pickWhose.setAttribute("aria-label", "whose input");
    value.setAttribute("aria-label", "new value");
    value.type = "text";
    go.type = reset.type = "button";
    editable.forEach(function (n) { var o = cell("option", n); o.value = n; pickInput.appendChild(o); });
    function whose() {  // the entities of this section that carry the chosen input
      pickWhose.replaceChildren();
      var owner = W.entity[pickInput.value], seen = {};
      var all = cell("option", owner ? "every " + owner : "every option");
      all.value = "";
      pickWhose.appendChild(all);
      if (owner) {
        base.rows.forEach(function (r) {
          if (!seen[r[owner]]) { seen[r[owner]] = 1; var o = cell("option", r[owner]); o.value = r[owner]; pickWhose.appendChild(o); }
        });
      }
      var now = base.rows[0][pickInput.value];
      value.placeholder = "now " + show(now, meta[pickInput.value]);
    }
    pickInput.addEventListener("change", whose);
    [pickInput, pickWhose, value, go, reset].forEach(function (e) { form.appendChild(e); form.appendChild(document.createTextNode(" ")); });
    box.appendChild(form);
    var changes = document.createElement("ul"), result = cell("p", ""), err = cell("p", "", "warn");
    box.appendChild(err);
    box.appendChild(changes);
    box.appendChild(result);
    var figures = document.createElement("ul");
    figures.className = "figures";
    box.appendChild(figures);
    var top = document.createElement("table");
    top.className = "ranked";
    box.appendChild(top);
    function redraw() {
      var r = whatIf(line, edits), p = r.pick, was = base.pick;
      changes.replaceChildren();
      edits.forEach(function (e) {
        changes.appendChild(cell("li", e.input + (e.entity ? " of " + e.entity : "") + ": " + e.shown));
      });
      result.textContent = edits.length ? (r.status === "recommended" ? "Recommended: " : "Shown (" + r.status + "): ") +
        optionOf(p) + ", overhead " + show(p.overhead_pct, PCT) + ", ETTR " + show(p.ettr_pct, PCT) + ", " +
        show(p.total_usd, USD) + " over the run (was " + optionOf(was) + ", " + show(was.total_usd, USD) + ")." : "";
      result.dataset.row = edits.length ? String(p.row) : "";
      figures.replaceChildren();
      if (edits.length) {  // the section's figures for the new pick, beside the build's
        FIGURES.forEach(function (name) {
          var col = { unit: W.units[name], infinite: W.infinite[name] };
          var li = cell("li", name + ": " + show(p[name], col) + " (was " + show(was[name], col) + ")");
          li.dataset.col = name;
          figures.appendChild(li);
        });
      }
      top.replaceChildren();
      if (!edits.length) { return; }
      var head = document.createElement("tr");
      ["option", "overhead", "ETTR", "over the run"].forEach(function (h) { head.appendChild(cell("th", h)); });
      top.appendChild(head);
      r.order.slice(0, 5).forEach(function (i) {  // the first five, as the rule ranks them
        var o = r.rows[i], tr = document.createElement("tr");
        [optionOf(o), show(o.overhead_pct, PCT), show(o.ettr_pct, PCT), show(o.total_usd, USD)].forEach(function (t, k) {
          tr.appendChild(cell("td", t, k ? null : "text"));
        });
        top.appendChild(tr);
      });
    }
    go.addEventListener("click", function () {
      var c = meta[pickInput.value], got = parseIn(value.value, c.unit);
      err.textContent = got.error ? pickInput.value + ": " + got.error : "";
      if (got.error) { return; }
      edits = edits.filter(function (e) { return !(e.input === c.name && e.entity === pickWhose.value); });
      edits.push({ input: c.name, entity: pickWhose.value, value: got.value, shown: show(got.value, c) });
      redraw();
    });
    reset.addEventListener("click", function () { edits = []; err.textContent = ""; redraw(); });
    pickInput.value = editable.indexOf("usd_per_gpu_hour") >= 0 ? "usd_per_gpu_hour" : editable[0];
    whose();
  }
  window.ckptreport = { whatIf: whatIf, parse: parseIn };
  document.querySelectorAll("div.whatif").forEach(function (box) { whatIfPanel(box, Number(box.dataset.line)); });
  document.body.dataset.ready = "1";
}());
