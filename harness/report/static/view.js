// The shared time view of the report's canvases: one visible time range that the
// timeline and the plots all draw, zoomed with the wheel and panned by dragging, plus the
// helpers every canvas needs (sizing for the screen's pixel ratio, the time axis, binary
// search). Plain JavaScript, no library: the page must work offline.
"use strict";
var HR = window.HR || {};
window.HR = HR;

HR.COLORS = {
  ok: "#3f9d57", fail: "#d9534f", info: "#f0a202", open: "#9b8fc7",
  fault: "rgba(230, 80, 60, 0.10)", faultEdge: "rgba(200, 60, 40, 0.55)",
  faultTarget: "rgba(230, 80, 60, 0.22)", faultFailed: "rgba(120, 120, 120, 0.18)",
  hold: ["#5b8def", "#3a6fd8"], holdLost: "#c0392b",
  lease: "#2a9d8f", leaseMaybe: "rgba(42, 157, 143, 0.35)", session: "#6c3483",
  write: "#3f9d57", rejected: "#8a8a8a", staleAccepted: "#c0392b", staleRejected: "#e67e22",
  window: "rgba(66, 133, 244, 0.12)", windowEdge: "rgba(66, 133, 244, 0.9)",
  danger: "rgba(192, 57, 43, 0.25)", handover: "#8e44ad",
  culprit: "#c0392b", highlight: "#1a237e", lin: "#0b7285", cursor: "#e8590c",
  grid: "#e6e6e6", axis: "#555", text: "#222", faint: "#888", laneAlt: "#fafafa",
};
HR.OUTCOME_COLORS = [HR.COLORS.ok, HR.COLORS.fail, HR.COLORS.info, HR.COLORS.open];
HR.GUTTER = 132;   // px of lane labels at the left of every canvas
HR.RIGHT = 12;

// The first index i of a nondecreasing array with a[i] > x (a.length if none).
HR.upperBound = function (a, x, lo, hi) {
  lo = lo || 0; hi = hi === undefined ? a.length : hi;
  while (lo < hi) { var mid = (lo + hi) >>> 1; if (a[mid] > x) hi = mid; else lo = mid + 1; }
  return lo;
};
// The first index i of a nondecreasing array with a[i] >= x.
HR.lowerBound = function (a, x, lo, hi) {
  lo = lo || 0; hi = hi === undefined ? a.length : hi;
  while (lo < hi) { var mid = (lo + hi) >>> 1; if (a[mid] >= x) hi = mid; else lo = mid + 1; }
  return lo;
};

// Microseconds of run clock as text: "12.345 s", with as many decimals as the span needs.
HR.fmtTime = function (us, spanUs) {
  var digits = spanUs === undefined ? 3 : Math.max(0, Math.min(6, Math.ceil(-Math.log10(spanUs / 1e6)) + 1));
  var text = (us / 1e6).toFixed(digits);
  return (/^-0(\.0*)?$/.test(text) ? text.slice(1) : text) + " s";
};
HR.fmtDur = function (us) {
  if (us < 0) return "–";
  if (us < 1000) return us.toFixed(0) + " µs";
  if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 2 : 1) + " ms";
  return (us / 1e6).toFixed(3) + " s";
};

// Size a canvas to its CSS width (and the given CSS height) in device pixels.
HR.fit = function (canvas, cssHeight) {
  var dpr = window.devicePixelRatio || 1;
  var w = Math.max(200, Math.floor(canvas.parentElement.clientWidth));
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(cssHeight * dpr)) {
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(cssHeight * dpr);
    canvas.style.width = w + "px"; canvas.style.height = cssHeight + "px";
  }
  var ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx: ctx, w: w, h: cssHeight, dpr: dpr };
};

// The visible time range [v0, v1] in µs, shared by every canvas of the page.
HR.View = function (t0, t1) {
  this.t0 = t0; this.t1 = Math.max(t1, t0 + 1);
  this.v0 = this.t0; this.v1 = this.t1;
  this.listeners = [];
  this.pending = false;
};
HR.View.prototype.set = function (v0, v1) {
  var full = this.t1 - this.t0, span = Math.max(10, Math.min(v1 - v0, full * 1.5));
  var mid = (v0 + v1) / 2;
  v0 = mid - span / 2; v1 = mid + span / 2;
  var lo = this.t0 - full * 0.25, hi = this.t1 + full * 0.25;
  if (v0 < lo) { v1 += lo - v0; v0 = lo; }
  if (v1 > hi) { v0 -= v1 - hi; v1 = hi; }
  this.v0 = v0; this.v1 = v1;
  this.schedule();
};
HR.View.prototype.whole = function () {
  var pad = (this.t1 - this.t0) * 0.01;
  this.set(this.t0 - pad, this.t1 + pad);
};
HR.View.prototype.onChange = function (fn) { this.listeners.push(fn); };
HR.View.prototype.schedule = function () {
  if (this.pending) return;
  this.pending = true;
  var self = this;
  requestAnimationFrame(function () { self.pending = false; self.draw(); });
};
HR.View.prototype.draw = function () {
  for (var i = 0; i < this.listeners.length; i++) this.listeners[i]();
};
// x of a time on a canvas of CSS width w.
HR.View.prototype.x = function (t, w) {
  return HR.GUTTER + (t - this.v0) / (this.v1 - this.v0) * (w - HR.GUTTER - HR.RIGHT);
};
HR.View.prototype.t = function (x, w) {
  return this.v0 + (x - HR.GUTTER) / (w - HR.GUTTER - HR.RIGHT) * (this.v1 - this.v0);
};

// Wheel zooms around the pointer, drag pans, double-click shows the whole run.
HR.View.prototype.attach = function (canvas) {
  var self = this, drag = null;
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var w = canvas.clientWidth, at = self.t(ev.offsetX, w);
    var k = Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.0015)));
    self.set(at - (at - self.v0) * k, at + (self.v1 - at) * k);
  }, { passive: false });
  canvas.addEventListener("mousedown", function (ev) {
    drag = { x: ev.clientX, v0: self.v0, v1: self.v1, w: canvas.clientWidth };
    canvas.classList.add("dragging");
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / (drag.w - HR.GUTTER - HR.RIGHT) * (drag.v1 - drag.v0);
    self.set(drag.v0 - dt, drag.v1 - dt);
  });
  window.addEventListener("mouseup", function () {
    drag = null; canvas.classList.remove("dragging");
  });
  canvas.addEventListener("dblclick", function () { self.whole(); });
  return function () { return drag !== null; };
};

// Nice tick positions for the visible range: 1, 2 or 5 times a power of ten.
HR.ticks = function (v0, v1, maxTicks) {
  var raw = (v1 - v0) / Math.max(1, maxTicks), p = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) { return s >= raw; });
  var out = [];
  for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) out.push(t);
  return { ticks: out, step: step };
};

// The time axis along the top of a canvas, and faint vertical grid lines down to h.
HR.drawAxis = function (ctx, view, w, h, top) {
  var tk = HR.ticks(view.v0, view.v1, Math.floor((w - HR.GUTTER) / 110));
  ctx.font = "11px sans-serif"; ctx.textBaseline = "middle"; ctx.textAlign = "center";
  for (var i = 0; i < tk.ticks.length; i++) {
    var x = view.x(tk.ticks[i], w);
    if (x < HR.GUTTER + 24 || x > w - HR.RIGHT - 20) continue;  // keep labels whole
    ctx.fillStyle = HR.COLORS.grid; ctx.fillRect(Math.round(x), top, 1, h - top);
    ctx.fillStyle = HR.COLORS.axis; ctx.fillText(HR.fmtTime(tk.ticks[i], tk.step), x, top - 9);
  }
};

// Fault windows shaded over [top, bottom] of a canvas.
HR.drawFaults = function (ctx, view, w, top, bottom, faults, t1) {
  for (var i = 0; i < faults.length; i++) {
    var f = faults[i], x0 = Math.max(HR.GUTTER, view.x(f.s, w));
    var x1 = Math.min(w - HR.RIGHT, view.x(f.e < 0 ? t1 : f.e, w));
    if (x1 < HR.GUTTER || x0 > w - HR.RIGHT) continue;
    ctx.fillStyle = f.ok ? HR.COLORS.fault : HR.COLORS.faultFailed;
    ctx.fillRect(x0, top, Math.max(1, x1 - x0), bottom - top);
    ctx.fillStyle = HR.COLORS.faultEdge;
    ctx.fillRect(x0, top, 1, bottom - top);
    if (f.e >= 0) ctx.fillRect(x1, top, 1, bottom - top);
  }
};
