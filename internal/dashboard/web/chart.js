// Copyright 2026 The serin authors. Licensed under the Apache License, Version 2.0.
//
// Small line charts drawn as inline SVG, for the dashboard's weight
// timeline and check values, and the time line of a group's members. No
// library: a chart is a few dozen elements.
"use strict";

var serinChart = (function () {
  var SVG = "http://www.w3.org/2000/svg";
  var LEFT = 52, RIGHT = 14, TOP = 14, BOTTOM = 30;
  var counter = 0;

  function el(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    for (var k in attrs) {
      if (attrs[k] !== undefined && attrs[k] !== null) node.setAttribute(k, attrs[k]);
    }
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // niceTicks returns about n round values covering [lo, hi].
  function niceTicks(lo, hi, n) {
    if (hi <= lo) hi = lo + 1;
    var raw = (hi - lo) / n;
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
    var ticks = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(+v.toFixed(10));
    return ticks;
  }

  function formatNumber(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 1e6 || a < 1e-3) return v.toExponential(1);
    return String(+v.toPrecision(4));
  }

  function formatTime(ms) {
    var d = new Date(ms);
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  // line draws one chart.
  //   opts.title, opts.description: its accessible name and summary
  //   opts.points: [{t: ms, y: number|null, verdict, label}]
  //   opts.yMin, opts.yMax: a fixed domain (else from the values and ranges)
  //   opts.ranges: [{value, label}] horizontal dashed lines (min, max)
  //   opts.step: draw a step line (a value held until the next point)
  //   opts.unit: appended to the y labels
  //   opts.width, opts.height: the size of the drawing (its viewBox)
  function line(opts) {
    var W = opts.width || 560, H = opts.height || 220;
    var id = "chart-" + (++counter);
    var pts = opts.points;
    var svg = el("svg", {
      "class": "chart", viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-labelledby": id + "-title " + id + "-desc", "data-points": pts.length,
    });
    svg.appendChild(el("title", { id: id + "-title" }, opts.title));
    svg.appendChild(el("desc", { id: id + "-desc" }, opts.description));

    var ts = pts.map(function (p) { return p.t; });
    var t0 = Math.min.apply(null, ts), t1 = Math.max.apply(null, ts);
    if (!isFinite(t0)) { t0 = Date.now(); t1 = t0; }
    if (t1 - t0 < 1000) { t0 -= 30000; t1 += 30000; }
    var values = pts.filter(function (p) { return p.y !== null && p.y !== undefined; }).map(function (p) { return p.y; });
    (opts.ranges || []).forEach(function (r) { values.push(r.value); });
    var lo = opts.yMin !== undefined ? opts.yMin : Math.min.apply(null, values.concat([0]));
    var hi = opts.yMax !== undefined ? opts.yMax : Math.max.apply(null, values);
    if (!isFinite(hi) || hi <= lo) hi = lo + 1;
    if (opts.yMax === undefined) hi += (hi - lo) * 0.12;

    var x = function (t) { return LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT); };
    var y = function (v) { return H - BOTTOM - (v - lo) / (hi - lo) * (H - TOP - BOTTOM); };

    var grid = el("g", { "aria-hidden": "true" });
    niceTicks(lo, hi, 4).forEach(function (v) {
      if (v < lo || v > hi) return;
      grid.appendChild(el("line", { "class": "grid", x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v) }));
      grid.appendChild(el("text", { "class": "axis-label", x: LEFT - 6, y: y(v) + 4, "text-anchor": "end" },
        formatNumber(v) + (opts.unit || "")));
    });
    [t0, (t0 + t1) / 2, t1].forEach(function (t, i) {
      var anchor = ["start", "middle", "end"][i];
      grid.appendChild(el("text", { "class": "axis-label", x: x(t), y: H - 8, "text-anchor": anchor }, formatTime(t)));
    });
    svg.appendChild(grid);

    (opts.ranges || []).forEach(function (r) {
      svg.appendChild(el("line", { "class": "range", x1: LEFT, x2: W - RIGHT, y1: y(r.value), y2: y(r.value) }));
      svg.appendChild(el("text", { "class": "range-label", x: W - RIGHT - 4, y: y(r.value) - 4, "text-anchor": "end" }, r.label));
    });

    // The line, broken where a step got no value.
    var d = "", prev = null;
    pts.forEach(function (p) {
      if (p.y === null || p.y === undefined) { prev = null; return; }
      if (prev === null) d += "M" + x(p.t) + "," + y(p.y);
      else if (opts.step) d += "H" + x(p.t) + "V" + y(p.y);
      else d += "L" + x(p.t) + "," + y(p.y);
      prev = p;
    });
    if (opts.step && prev !== null && opts.holdUntil) {
      d += "H" + x(Math.max(prev.t, Math.min(opts.holdUntil, t1)));
    }
    if (d) svg.appendChild(el("path", { "class": "series", d: d, "aria-hidden": "true" }));

    pts.forEach(function (p) {
      var g;
      if (p.y === null || p.y === undefined) {
        var cx = x(p.t), cy = H - BOTTOM - 6;
        g = el("g", { "class": "no-value" });
        g.appendChild(el("line", { x1: cx - 4, y1: cy - 4, x2: cx + 4, y2: cy + 4 }));
        g.appendChild(el("line", { x1: cx - 4, y1: cy + 4, x2: cx + 4, y2: cy - 4 }));
      } else {
        g = el("circle", { "class": "dot dot-" + (p.verdict || "Passed"), cx: x(p.t), cy: y(p.y), r: 4.5 });
      }
      g.appendChild(el("title", {}, p.label));
      svg.appendChild(g);
    });
    return svg;
  }

  // timeline draws the members of a group's release on one time axis: a
  // row each, its weight as a step line (0 at the row's foot) with a dot
  // for each analysis step, coloured by verdict.
  //   opts.title, opts.description: its accessible name and summary
  //   opts.rows: [{label, points: [{t: ms, weight, verdict, label}]}]
  //   opts.start, opts.end: the release's start and end (or now), in ms
  //   opts.width: the size of the drawing (its viewBox)
  function timeline(opts) {
    var ROW = 46, NAMES = 120;
    var W = opts.width || 1100, H = TOP + opts.rows.length * ROW + BOTTOM;
    var id = "chart-" + (++counter);
    var svg = el("svg", {
      "class": "chart timeline", viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-labelledby": id + "-title " + id + "-desc", "data-rows": opts.rows.length,
    });
    svg.appendChild(el("title", { id: id + "-title" }, opts.title));
    svg.appendChild(el("desc", { id: id + "-desc" }, opts.description));

    var ts = [], top = 10;
    if (opts.start) ts.push(opts.start);
    if (opts.end) ts.push(opts.end);
    opts.rows.forEach(function (r) {
      r.points.forEach(function (p) { ts.push(p.t); top = Math.max(top, p.weight); });
    });
    var t0 = Math.min.apply(null, ts), t1 = Math.max.apply(null, ts);
    if (!isFinite(t0)) { t0 = Date.now(); t1 = t0; }
    if (t1 - t0 < 1000) { t0 -= 30000; t1 += 30000; }
    var x = function (t) { return NAMES + (t - t0) / (t1 - t0) * (W - NAMES - RIGHT); };

    var grid = el("g", { "aria-hidden": "true" });
    [t0, (t0 + t1) / 2, t1].forEach(function (t, i) {
      grid.appendChild(el("line", { "class": "grid", x1: x(t), x2: x(t), y1: TOP, y2: H - BOTTOM }));
      grid.appendChild(el("text", { "class": "axis-label", x: x(t), y: H - 8, "text-anchor": ["start", "middle", "end"][i] }, formatTime(t)));
    });
    if (opts.start) {
      grid.appendChild(el("line", { "class": "range", x1: x(opts.start), x2: x(opts.start), y1: TOP, y2: H - BOTTOM }));
    }
    svg.appendChild(grid);

    opts.rows.forEach(function (r, i) {
      var foot = TOP + (i + 1) * ROW - 8;
      var y = function (w) { return foot - w / top * (ROW - 20); };
      var row = el("g", { "class": "timeline-row", "data-member": r.label });
      row.appendChild(el("text", { "class": "row-label", x: NAMES - 10, y: foot - 8, "text-anchor": "end" }, r.label));
      row.appendChild(el("line", { "class": "grid", x1: NAMES, x2: W - RIGHT, y1: foot, y2: foot }));
      var d = "";
      r.points.forEach(function (p, j) {
        d += j === 0 ? "M" + x(p.t) + "," + y(p.weight) : "H" + x(p.t) + "V" + y(p.weight);
      });
      if (d && opts.end) d += "H" + x(Math.max(r.points[r.points.length - 1].t, opts.end));
      if (d) row.appendChild(el("path", { "class": "series", d: d, "aria-hidden": "true" }));
      var lastLabel = -Infinity;
      r.points.forEach(function (p) {
        var dot = el("circle", { "class": "dot dot-" + (p.verdict || "Passed"), cx: x(p.t), cy: y(p.weight), r: 4.5 });
        dot.appendChild(el("title", {}, p.label));
        row.appendChild(dot);
        if (x(p.t) - lastLabel >= 30) {
          row.appendChild(el("text", { "class": "point-label", x: x(p.t), y: y(p.weight) - 8, "text-anchor": "middle", "aria-hidden": "true" }, p.weight + "%"));
          lastLabel = x(p.t);
        }
      });
      svg.appendChild(row);
    });
    return svg;
  }

  return { line: line, timeline: timeline, formatNumber: formatNumber, formatTime: formatTime };
})();
