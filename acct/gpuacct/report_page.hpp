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
svg { background: #fafafa; border: 1px solid #ddd; }
svg text { font-size: 11px; fill: #333; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; }
td:first-child, th:first-child, td:nth-child(2), th:nth-child(2) { text-align: left; }
.empty { color: #888; font-style: italic; }
.legend span { display: inline-block; margin-right: 1em; } .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
</head>
<body>
<h1 id="title">@TITLE@</h1>
<p id="period"></p>
<h2>GPU utilisation by job type (CDF of each job's mean GPU utilisation)</h2>
<div id="util-cdf"></div>
<h2>Failures by reason, weighted by GPU time</h2>
<div id="failures"></div>
<h2>XID events per node over time</h2>
<div id="xids"></div>
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
  function svg(container, w, h) {
    const s = el("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img" });
    document.getElementById(container).appendChild(s);
    return s;
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
  function fmtTime(epoch) { return new Date(epoch * 1000).toISOString().replace(".000Z", "Z"); }

  const p = data.period || {};
  document.getElementById("period").textContent = "Period: " + (p.start ? fmtTime(p.start) : "beginning") +
    " to " + (p.end ? fmtTime(p.end) : "now") +
    (data.source === "slurmdbd" ? "; source: slurmdbd (Slurm accounting)" : "; source: node spools in " + data.spool_dir);

  // 1. CDF of per-job mean utilisation, one line per job type.
  (function () {
    const byType = {};
    for (const r of view("jobs").rows) {
      if (r.GPUUtil === null || r.GPUUtil === undefined) continue;
      (byType[r.Type || "other"] = byType[r.Type || "other"] || []).push(r.GPUUtil);
    }
    const types = Object.keys(byType).sort();
    if (!types.length) return empty("util-cdf", "No job has GPU telemetry in this period.");
    const W = 640, H = 320, L = 50, B = 40, T = 10, R = 20;
    const s = svg("util-cdf", W, H);
    s.id = "util-cdf-chart";
    const x = (u) => L + (W - L - R) * u / 100, y = (f) => H - B - (H - B - T) * f;
    el("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), stroke: "#999" }, s);
    el("line", { x1: L, y1: y(0), x2: L, y2: y(1), stroke: "#999" }, s);
    for (const u of [0, 25, 50, 75, 100]) text(s, x(u), H - B + 15, u + "%", "middle");
    for (const f of [0, 0.5, 1]) text(s, L - 5, y(f) + 4, f.toFixed(1), "end");
    text(s, (L + W - R) / 2, H - 5, "mean GPU utilisation of a job", "middle");
    const legend = document.createElement("div");
    legend.className = "legend";
    types.forEach((type, i) => {
      const values = byType[type].slice().sort((a, b) => a - b);
      let d = "M" + x(0) + "," + y(0);
      values.forEach((v, k) => { d += " L" + x(v) + "," + y(k / values.length) + " L" + x(v) + "," + y((k + 1) / values.length); });
      d += " L" + x(100) + "," + y(1);
      el("path", { d: d, fill: "none", stroke: COLORS[i % COLORS.length], "stroke-width": 2, class: "cdf",
                   "data-type": type, "data-values": JSON.stringify(values) }, s);
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = COLORS[i % COLORS.length];
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(type + " (" + values.length + " jobs)"));
      legend.appendChild(item);
    });
    document.getElementById("util-cdf").appendChild(legend);
  })();

  // 2. Horizontal bars: GPU hours lost per failure reason, Table 3 order.
  (function () {
    const rows = view("failures").rows;
    if (!rows.length) return empty("failures", "No failed job in this period.");
    const W = 640, row = 22, L = 200, R = 190, H = rows.length * row + 20;
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

  // 3. XIDs per node per time bucket: a dot per (node, bucket), its area the count.
  (function () {
    const xids = data.events.filter((e) => e.kind === "xid");
    if (!xids.length) return empty("xids", "No XID event in this period.");
    const nodes = [...new Set(view("nodes").rows.map((r) => r.NodeName).concat(xids.map((e) => e.node)))].sort();
    const t0 = Math.min(...xids.map((e) => e.ts)), t1 = Math.max(...xids.map((e) => e.ts));
    const buckets = 24, span = Math.max(t1 - t0, 1), step = span / buckets;
    const counts = {};
    for (const e of xids) {
      const b = Math.min(Math.floor((e.ts - t0) / step), buckets - 1);
      const key = e.node + "|" + b;
      counts[key] = (counts[key] || 0) + 1;
    }
    const W = 640, row = 24, L = 100, R = 20, H = nodes.length * row + 40;
    const s = svg("xids", W, H);
    s.id = "xids-chart";
    nodes.forEach((n, i) => text(s, L - 6, 20 + i * row + 4, n, "end"));
    text(s, L, H - 8, fmtTime(t0));
    text(s, W - R, H - 8, fmtTime(t1), "end");
    for (const [key, c] of Object.entries(counts)) {
      const [node, b] = [key.slice(0, key.lastIndexOf("|")), Number(key.slice(key.lastIndexOf("|") + 1))];
      const cx = L + (W - L - R) * (b + 0.5) / buckets, cy = 20 + nodes.indexOf(node) * row;
      el("circle", { cx: cx, cy: cy, r: Math.min(3 + 2 * Math.sqrt(c), row / 2), fill: "#d62728", "fill-opacity": 0.7,
                     class: "xid", "data-node": node, "data-count": c, "data-from": t0 + b * step }, s);
    }
  })();

  // 4. Evaluation trial attempts on a time line, one lane per node.
  (function () {
    const trials = data.trials || [];
    if (!trials.length) return empty("trials", "No evaluation data (give --evalsched-db).");
    const nodes = [...new Set(trials.map((t) => t.node || "?"))].sort();
    const t0 = Math.min(...trials.map((t) => t.submitted));
    const t1 = Math.max(...trials.map((t) => t.ended || data.generated));
    const W = 640, row = 20, L = 100, R = 20, H = nodes.length * row + 40;
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
