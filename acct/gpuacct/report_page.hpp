// The report page: CSS, SVG drawn by inline JS from the JSON in #gpuacct-data. Works offline:
// no link, no fetch, no CDN. Every mark carries the number it draws in a data- attribute, so
// the headless-browser test compares the chart with `gpuacct --json`. Text goes in through
// textContent only: job names and reasons are user input.
#pragma once

#include <string_view>

namespace acme::gpuacct {

inline constexpr std::string_view kReportPage = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
svg { background: #fafafa; border: 1px solid #ddd; width: 100%; height: auto; display: block; }
.note { color: #555; font-size: 0.9em; max-width: 60em; }
th.sortable { cursor: pointer; text-decoration: underline dotted; }
svg text { font-size: 11px; fill: #333; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; }
td:first-child, th:first-child, #summary-table td:nth-child(2), #summary-table th:nth-child(2) { text-align: left; }
.empty { color: #888; font-style: italic; }
.legend span { display: inline-block; margin-right: 1em; } .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
</head>
<body>
<h1 id="title">@TITLE@</h1>
<p id="period"></p>
<h2>Idle and low-utilisation GPU time by user</h2>
<p class="note">GPU-hours held on GPUs whose whole run was idle (no kernel ran) or low-utilisation,
by gpuacct's per-GPU verdict; the top 50. Click a column to sort.</p>
<div id="waste-users"></div>
<h2>Idle and low-utilisation GPU time by account</h2>
<div id="waste-accounts"></div>
<h2>GPU utilisation by job type (share of GPU-hours at or below each mean utilisation)</h2>
<div id="util-cdf"></div>
<h2>Where the GPU-hours went (goodput)</h2>
<p class="note">Every run's GPUs times its running time, split as gpuacct goodput does (man gpuacct(1),
GOODPUT); below, the GPU-hours lost (redone or stalled) per failure category and reason.</p>
<div id="goodput"></div>
<h2>Failures by reason, weighted by GPU time</h2>
<div id="failures"></div>
<h2>XID events per node over the period</h2>
<div id="xids"></div>
<div id="xid-codes"></div>
<h2>Evaluation trials</h2>
<div id="trials"></div>
<h2>Workload summary</h2>
<div id="summary"></div>
<script type="application/json" id="gpuacct-data">@DATA@</script>
<script>
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const data = JSON.parse(document.getElementById("gpuacct-data").textContent);
  const view = (name) => data.views.find((v) => v.view === name) || { rows: [] };

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }
  function text(parent, x, y, s, anchor) {
    const t = el("text", { x: x, y: y, "text-anchor": anchor || "start" }, parent);
    t.textContent = s;
    return t;
  }
  // Drawn in a 1000-unit wide coordinate system and scaled to the page's width by CSS.
  const W = 1000;
  function svg(container, w, h) {
    const s = el("svg", { viewBox: "0 0 " + w + " " + h, preserveAspectRatio: "xMinYMin meet", role: "img" });
    document.getElementById(container).appendChild(s);
    return s;
  }
  function title(node, s) { const t = el("title", {}, node); t.textContent = s; }
  // A table whose columns sort on a click: numbers descending first, text ascending.
  function table(container, id, columns, rows) {
    const t = document.createElement("table");
    t.id = id;
    const head = t.createTHead().insertRow();
    const body = t.createTBody();
    let sortKey = null, ascending = false;
    function fill() {
      body.textContent = "";
      const sorted = rows.slice();
      if (sortKey !== null) {
        const c = columns[sortKey];
        sorted.sort((a, b) => { const x = c.value(a), y = c.value(b); const d = typeof x === "number" ? x - y : String(x).localeCompare(String(y)); return ascending ? d : -d; });
      }
      for (const r of sorted) {
        const tr = body.insertRow();
        tr.className = id + "-row";
        for (const c of columns) {
          const cell = tr.insertCell();
          cell.textContent = c.show ? c.show(r) : String(c.value(r));
          if (c.attr) cell.setAttribute("data-" + c.attr, String(c.value(r)));
        }
      }
    }
    columns.forEach((c, i) => {
      const th = document.createElement("th");
      th.textContent = c.name;
      th.className = "sortable";
      th.addEventListener("click", () => { ascending = sortKey === i ? !ascending : typeof c.value(rows[0] || {}) !== "number"; sortKey = i; fill(); });
      head.appendChild(th);
    });
    fill();
    document.getElementById(container).appendChild(t);
  }
  function empty(container, why) {
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = why;
    document.getElementById(container).appendChild(p);
  }
  function elapsed(s) {
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), x = Math.round(s % 60);
    const two = (n) => String(n).padStart(2, "0");
    return (d ? d + "-" : "") + two(h) + ":" + two(m) + ":" + two(x);
  }
  // One time zone throughout, stated: UTC, to the minute.
  function fmtTime(epoch) { return new Date(epoch * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC"; }

  const p = data.period || {};
  document.getElementById("period").textContent = "Period: " + (p.start ? fmtTime(p.start) : "beginning") +
    " to " + (p.end ? fmtTime(p.end) : "now") +
    (data.source === "slurmdbd" ? "; source: slurmdbd (Slurm accounting)" : "; source: node spools in " + data.spool_dir);

  // 0. Who holds idle and barely used GPUs, by user and by account.
  for (const [key, container, label] of [["by_user", "waste-users", "User"], ["by_account", "waste-accounts", "Account"]]) {
    const rows = data[key] || [];
    if (!rows.length) { empty(container, "No job with GPUs in this period."); continue; }
    const hours = (v) => v.toFixed(1);
    table(container, container, [
      { name: label, value: (r) => r.name, attr: "name" },
      { name: "Idle GPU-h", value: (r) => r.idle_gpu_hours, show: (r) => hours(r.idle_gpu_hours), attr: "idle-gpu-hours" },
      { name: "Low-util GPU-h", value: (r) => r.low_gpu_hours, show: (r) => hours(r.low_gpu_hours), attr: "low-gpu-hours" },
      { name: "GPU-h", value: (r) => r.gpu_hours, show: (r) => hours(r.gpu_hours), attr: "gpu-hours" },
      { name: "Wasted %", value: (r) => r.gpu_hours ? 100 * (r.idle_gpu_hours + r.low_gpu_hours) / r.gpu_hours : 0,
        show: (r) => (r.gpu_hours ? 100 * (r.idle_gpu_hours + r.low_gpu_hours) / r.gpu_hours : 0).toFixed(1) },
      { name: "Jobs", value: (r) => r.jobs, attr: "jobs" },
    ], rows);
  }

  // 1. CDF of mean utilisation per job type, weighted by GPU-hours (from per-percent totals).
  (function () {
    const types = (data.util || []).filter((h) => h.gpu_hours > 0);
    if (!types.length) return empty("util-cdf", "No job has GPU telemetry in this period.");
    const H = 340, L = 60, B = 40, T = 10, R = 20;
    const s = svg("util-cdf", W, H);
    s.id = "util-cdf-chart";
    const x = (u) => L + (W - L - R) * u / 100, y = (f) => H - B - (H - B - T) * f;
    el("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), stroke: "#999" }, s);
    el("line", { x1: L, y1: y(0), x2: L, y2: y(1), stroke: "#999" }, s);
    for (const u of [0, 10, 25, 50, 75, 100]) text(s, x(u), H - B + 15, u + "%", "middle");
    for (const f of [0, 0.25, 0.5, 0.75, 1]) text(s, L - 5, y(f) + 4, (100 * f) + "%", "end");
    text(s, (L + W - R) / 2, H - 5, "mean GPU utilisation of a job (each job weighted by its GPU-hours)", "middle");
    const legend = document.createElement("div");
    legend.className = "legend";
    types.forEach((h, i) => {
      let d = "M" + x(0) + "," + y(0), sum = 0;
      h.gpu_hours_at.forEach((gh, u) => { if (!gh) return; d += " L" + x(u) + "," + y(sum / h.gpu_hours); sum += gh; d += " L" + x(u) + "," + y(sum / h.gpu_hours); });
      d += " L" + x(100) + "," + y(1);
      const path = el("path", { d: d, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 2, class: "cdf",
                                "data-type": h.type, "data-jobs": h.jobs, "data-gpu-hours": h.gpu_hours }, s);
      title(path, h.type + ": " + h.jobs + " jobs, " + h.gpu_hours.toFixed(1) + " GPU-hours");
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = COLORS[i % COLORS.length];
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(h.type + " (" + h.jobs + " jobs, " + h.gpu_hours.toFixed(1) + " GPU-h)"));
      legend.appendChild(item);
    });
    document.getElementById("util-cdf").appendChild(legend);
  })();

  // 1b. Goodput: one stacked bar of the GPU-hours handed out, then the GPU time lost per cause.
  (function () {
    const g = data.goodput;
    if (!g) return empty("goodput", "Goodput was not read for this report.");
    if (!g.handed_out_gpu_h) return empty("goodput", "No GPU time handed out in this period.");
    const parts = [["kept", g.kept_gpu_h], ["lost (redone)", g.lost_gpu_h], ["stalled", g.stalled_gpu_h],
                   ["GPUs idle", g.idle_gpu_h], ["not split", g.unsplit_gpu_h]];
    const causes = g.causes || [];
    // Node spools keep a requeued job's last run: its earlier runs' hours are in no bar (say so).
    const notHeld = g.runs_not_held || 0;
    const row = 22, L = 260, R = 200, below = notHeld ? row : 0, H = 60 + below + causes.length * row;
    const s = svg("goodput", W, H);
    s.id = "goodput-chart";
    let x = L;
    parts.forEach(([name, h], i) => {
      const w = (W - L - R) * h / g.handed_out_gpu_h;
      const r = el("rect", { x: x, y: 8, width: Math.max(w, 0), height: row, fill: COLORS[i], class: "goodput-part",
                             "data-part": name, "data-gpu-hours": h }, s);
      title(r, name + ": " + h.toFixed(2) + " GPU-h (" + (100 * h / g.handed_out_gpu_h).toFixed(1) + "%)");
      x += w;
    });
    text(s, L - 6, 8 + 15, g.handed_out_gpu_h.toFixed(1) + " GPU-h handed out", "end");
    text(s, W - R + 6, 8 + 15, parts.map(([n, h]) => n + " " + (100 * h / g.handed_out_gpu_h).toFixed(0) + "%").slice(0, 2).join(", "));
    if (notHeld) {
      const t = text(s, L, 8 + row + 16, "not held: " + notHeld + " earlier run(s) of " + g.jobs_partly_held +
                     " requeued job(s) (node spools keep a job's last run): their GPU time is unknown, in no bar");
      if (t) t.setAttribute("class", "goodput-not-held");
    }
    const max = Math.max(...causes.map((c) => c.lost_gpu_h + c.stalled_gpu_h), 1e-9);
    const cats = ["infrastructure", "framework", "script", "unknown"];
    causes.forEach((c, i) => {
      const y = 50 + below + i * row, h = c.lost_gpu_h + c.stalled_gpu_h, w = (W - L - R) * h / max;
      text(s, L - 6, y + 14, c.category + " / " + c.reason, "end");
      el("rect", { x: L, y: y + 3, width: Math.max(w, 1), height: row - 6, fill: COLORS[Math.max(cats.indexOf(c.category), 0)],
                   class: "goodput-cause", "data-category": c.category, "data-reason": c.reason, "data-gpu-hours": h }, s);
      text(s, L + Math.max(w, 1) + 6, y + 14, h.toFixed(2) + " GPU-h lost");
    });
  })();

  // 2. Horizontal bars: GPU hours lost per failure reason, Table 3 order.
  (function () {
    const rows = view("failures").rows;
    if (!rows.length) return empty("failures", "No failed job in this period.");
    const row = 22, L = 260, R = 260, H = rows.length * row + 20;
    const s = svg("failures", W, H);
    s.id = "failures-chart";
    // Bar length is the reason's share of the failed runs' GPU time (GPUTimePct).
    const max = Math.max(...rows.map((r) => r.GPUTimePct || 0), 1e-9);
    const cats = ["infrastructure", "framework", "script", "unknown"];
    rows.forEach((r, i) => {
      const y = 10 + i * row, w = (W - L - R) * (r.GPUTimePct || 0) / max;
      text(s, L - 6, y + 14, r.Category + " / " + r.Reason, "end");
      el("rect", { x: L, y: y + 3, width: Math.max(w, 1), height: row - 6, fill: COLORS[Math.max(cats.indexOf(r.Category), 0)],
                   class: "failure", "data-reason": r.Reason, "data-category": r.Category,
                   "data-gpu-hours": r.GPUHours, "data-num": r.Num, "data-pct": r.GPUTimePct }, s);
      text(s, L + Math.max(w, 1) + 6, y + 14, (r.GPUTimePct || 0).toFixed(1) + "%, " + (r.GPUHours || 0).toFixed(2) + " GPU-h, " + r.Num + " runs");
    });
  })();

  // 3. XIDs per node per slice of the period: a dot per (node, slice), its area the count, the
  // codes on hover; and a table of the codes.
  (function () {
    const x = data.xids || { cells: [], codes: [] };
    if (!x.cells.length) return empty("xids", "No XID event in this period.");
    const nodes = [...new Set(view("nodes").rows.map((r) => r.NodeName).concat(x.cells.map((c) => c.node)))].sort();
    const row = 24, L = 120, R = 20, H = nodes.length * row + 40;
    const s = svg("xids", W, H);
    s.id = "xids-chart";
    const step = (x.to - x.from) / x.buckets;
    nodes.forEach((n, i) => text(s, L - 6, 20 + i * row + 4, n, "end"));
    text(s, L, H - 8, fmtTime(x.from));
    text(s, W - R, H - 8, fmtTime(x.to), "end");
    for (const c of x.cells) {
      const cx = L + (W - L - R) * (c.bucket + 0.5) / x.buckets, cy = 20 + nodes.indexOf(c.node) * row;
      const dot = el("circle", { cx: cx, cy: cy, r: Math.min(3 + 2 * Math.sqrt(c.count), row / 2), fill: "#d62728", "fill-opacity": 0.7,
                                 class: "xid", "data-node": c.node, "data-count": c.count, "data-codes": JSON.stringify(c.codes),
                                 "data-from": x.from + c.bucket * step }, s);
      title(dot, c.node + ": " + c.count + " XID" + (c.count === 1 ? "" : "s") + " (" +
            Object.entries(c.codes).map(([code, n]) => "XID " + code + (n > 1 ? " x" + n : "")).join(", ") + ") from " +
            fmtTime(x.from + c.bucket * step) + " to " + fmtTime(x.from + (c.bucket + 1) * step));
    }
    table("xid-codes", "xid-codes", [
      { name: "XID", value: (r) => r.code, attr: "code" },
      { name: "Events", value: (r) => r.count, attr: "count" },
      { name: "Nodes", value: (r) => r.nodes.join(", ") },
    ], x.codes);
  })();

  // 4. Evaluation trial attempts on a time line, one lane per node.
  (function () {
    const trials = data.trials || [];
    if (!trials.length) return empty("trials", "No evaluation data (give --evalsched-db).");
    const nodes = [...new Set(trials.map((t) => t.node || "?"))].sort();
    const t0 = Math.min(...trials.map((t) => t.submitted));
    const t1 = Math.max(...trials.map((t) => t.ended || data.generated));
    const row = 20, L = 120, R = 20, H = nodes.length * row + 40;
    const s = svg("trials", W, H);
    s.id = "trials-chart";
    const x = (t) => L + (W - L - R) * (t - t0) / Math.max(t1 - t0, 1);
    nodes.forEach((n, i) => text(s, L - 6, 20 + i * row + 4, n, "end"));
    trials.forEach((t) => {
      const end = t.ended || data.generated;
      const color = t.state === "done" ? "#2ca02c" : t.state === "failed" ? "#d62728" : "#7f7f7f";
      const r = el("rect", { x: x(t.submitted), y: 12 + nodes.indexOf(t.node || "?") * row, width: Math.max(x(end) - x(t.submitted), 1),
                             height: row - 6, fill: color, class: "trial", "data-trial": t.trial, "data-state": t.state }, s);
      const title = el("title", {}, r);
      title.textContent = t.evaluation + " " + t.trial + " (" + t.state + ")";
    });
  })();

  // 5. The summary view as a table, the same numbers as gpuacct --summary.
  (function () {
    const v = view("summary");
    if (!v.rows.length) return empty("summary", "No job in this period.");
    const table = document.createElement("table");
    table.id = "summary-table";
    const head = table.insertRow();
    for (const f of v.fields) { const th = document.createElement("th"); th.textContent = f; head.appendChild(th); }
    for (const r of v.rows) {
      const tr = table.insertRow();
      tr.className = "summary-row";
      for (const f of v.fields) {
        const value = r[f];
        // Durations are seconds in the JSON; shown as sacct shows them.
        const duration = f === "DurMedian" || f === "QueueMedian";
        tr.insertCell().textContent = value === null ? "" : duration ? elapsed(value) : String(value);
      }
    }
    document.getElementById("summary").appendChild(table);
  })();

  document.documentElement.setAttribute("data-rendered", "yes");
})();
</script>
</body>
</html>
)page";

}  // namespace acme::gpuacct
