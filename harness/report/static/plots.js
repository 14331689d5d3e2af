// Latency and throughput over time, on the timeline's time view, fault windows shaded.
//
// Latency: one point per completed client operation (x: invocation, y: latency, log
// scale), coloured by outcome. Points are written straight into an image, one pixel block
// each, so 100,000 of them cost one pass and no path. Throughput: completions per second
// in buckets of a round width, stacked by outcome; each bucket is two binary searches in
// the sorted completion times.
"use strict";

HR.Plots = function (latCanvas, thrCanvas, data, view, timeline) {
  this.lat = latCanvas; this.thr = thrCanvas; this.data = data; this.view = view; this.tl = timeline;
  var client = [], ops = data.ops, i;
  for (i = 0; i < timeline.n; i++) {
    if (ops.e[i] >= 0 && data.lanes[ops.lane[i]].kind === "client") client.push(i);
  }
  var n = client.length;
  this.LI = Int32Array.from(client);          // op index, in invocation order
  this.LS = new Float64Array(n); this.LV = new Float64Array(n); this.LT = new Uint8Array(n);
  var lo = Infinity, hi = 0;
  for (i = 0; i < n; i++) {
    var k = client[i], lat = Math.max(1, ops.e[k] - ops.s[k]);
    this.LS[i] = ops.s[k]; this.LV[i] = lat; this.LT[i] = ops.t[k];
    lo = Math.min(lo, lat); hi = Math.max(hi, lat);
  }
  this.logLo = Math.floor(Math.log10(n ? lo : 1)); this.logHi = Math.max(this.logLo + 1, Math.ceil(Math.log10(n ? hi : 10)));
  this.done = [0, 1, 2].map(function (t) {
    var ends = [];
    for (var j = 0; j < n; j++) if (this.LT[j] === t) ends.push(ops.e[this.LI[j]]);
    return Float64Array.from(ends).sort();
  }, this);
};

HR.Plots.LAT_H = 170;
HR.Plots.THR_H = 130;
HR.Plots.TOP = 20;
HR.Plots.BOTTOM = 6;

HR.Plots.prototype.draw = function () { this.drawLatency(); this.drawThroughput(); };

HR.Plots.prototype.frame = function (canvas, height, title) {
  var f = HR.fit(canvas, height), ctx = f.ctx;
  ctx.clearRect(0, 0, f.w, height);
  ctx.save();
  ctx.beginPath(); ctx.rect(HR.GUTTER, 0, f.w - HR.GUTTER - HR.RIGHT, height); ctx.clip();
  HR.drawFaults(ctx, this.view, f.w, HR.Plots.TOP, height - HR.Plots.BOTTOM, this.data.faults, this.data.t1);
  HR.drawAxis(ctx, this.view, f.w, height - HR.Plots.BOTTOM, HR.Plots.TOP);
  ctx.restore();
  ctx.fillStyle = HR.COLORS.text; ctx.font = "bold 12px sans-serif"; ctx.textAlign = "left";
  ctx.textBaseline = "middle"; ctx.fillText(title, 8, 10);
  return f;
};

HR.Plots.prototype.yLat = function (lat, h) {
  var top = HR.Plots.TOP + 4, bottom = h - HR.Plots.BOTTOM - 2;
  return bottom - (Math.log10(lat) - this.logLo) / (this.logHi - this.logLo) * (bottom - top);
};

HR.Plots.prototype.drawLatency = function () {
  var h = HR.Plots.LAT_H, f = this.frame(this.lat, h, "latency (log)"), ctx = f.ctx, w = f.w, v = this.view;
  ctx.font = "11px sans-serif"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (var d = this.logLo; d <= this.logHi; d++) {
    var y = this.yLat(Math.pow(10, d), h);
    ctx.fillStyle = HR.COLORS.grid; ctx.fillRect(HR.GUTTER, Math.round(y), w - HR.GUTTER - HR.RIGHT, 1);
    ctx.fillStyle = HR.COLORS.axis; ctx.fillText(HR.Plots.decade(d), HR.GUTTER - 6, y);
  }
  var a = HR.lowerBound(this.LS, v.v0), b = HR.upperBound(this.LS, v.v1);
  if (b <= a) return;
  var dpr = f.dpr, W = this.lat.width, H = this.lat.height;
  var size = Math.max(2, Math.round((b - a > 20000 ? 2 : 3) * dpr));  // sparse points: bigger
  var img = ctx.createImageData(W, H), px = img.data, rank = new Uint8Array(W * H);
  var rgb = HR.OUTCOME_COLORS.map(HR.Plots.rgb), order = [1, 3, 2, 1];  // fail and info over ok
  var x0 = HR.GUTTER * dpr, x1 = (w - HR.RIGHT) * dpr;
  var scale = (w - HR.GUTTER - HR.RIGHT) / (v.v1 - v.v0);
  for (var i = a; i < b; i++) {
    var x = Math.round((HR.GUTTER + (this.LS[i] - v.v0) * scale) * dpr);
    var yy = Math.round(this.yLat(this.LV[i], h) * dpr), t = this.LT[i], r = order[t];
    if (x < x0 || x >= x1) continue;
    for (var dy = 0; dy < size; dy++) {
      for (var dx = 0; dx < size; dx++) {
        var p = (yy + dy) * W + x + dx;
        if (p < 0 || p >= W * H || rank[p] >= r) continue;
        rank[p] = r; p *= 4;
        px[p] = rgb[t][0]; px[p + 1] = rgb[t][1]; px[p + 2] = rgb[t][2]; px[p + 3] = 220;
      }
    }
  }
  var off = this.offscreen || (this.offscreen = document.createElement("canvas"));
  off.width = W; off.height = H;
  off.getContext("2d").putImageData(img, 0, 0);
  ctx.save(); ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.drawImage(off, 0, 0); ctx.restore();
};

// 10^d µs as a short label: 100 µs, 1 ms, 10 s.
HR.Plots.decade = function (d) {
  var units = [[6, "s"], [3, "ms"], [0, "µs"]];
  for (var i = 0; i < units.length; i++) {
    if (d >= units[i][0] || i === units.length - 1) return Math.pow(10, d - units[i][0]) + " " + units[i][1];
  }
};

HR.Plots.rgb = function (hex) {
  return [1, 3, 5].map(function (k) { return parseInt(hex.slice(k, k + 2), 16); });
};

// Bucket width: a round duration giving buckets about 8 px wide, no shorter than 10 ms,
// and long enough to hold about 5 completions on average (a rate over fewer is noise).
HR.Plots.MIN_BUCKET = 10000;
HR.Plots.prototype.buckets = function (w) {
  var v = this.view, span = v.v1 - v.v0, seen = 0;
  for (var k = 0; k < this.done.length; k++) {
    seen += HR.lowerBound(this.done[k], v.v1) - HR.lowerBound(this.done[k], v.v0);
  }
  var raw = Math.max(HR.Plots.MIN_BUCKET, span / Math.max(1, (w - HR.GUTTER - HR.RIGHT) / 8),
                     seen ? 5 * span / seen : span / 20);
  var p = Math.pow(10, Math.floor(Math.log10(raw)));
  var step = [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) { return s >= raw; });
  return { step: step, first: Math.floor(v.v0 / step) * step };
};

HR.Plots.prototype.rates = function (from, step) {
  return this.done.map(function (ends) {
    return (HR.lowerBound(ends, from + step) - HR.lowerBound(ends, from)) / (step / 1e6);
  });
};

HR.Plots.prototype.drawThroughput = function () {
  var h = HR.Plots.THR_H, f = this.frame(this.thr, h, "throughput (ops/s)"), ctx = f.ctx, w = f.w, v = this.view;
  var b = this.buckets(w), bars = [], max = 1;
  for (var t = b.first; t < v.v1; t += b.step) {
    var r = this.rates(t, b.step);
    bars.push([t, r]); max = Math.max(max, r[0] + r[1] + r[2]);
  }
  var top = HR.Plots.TOP + 4, bottom = h - HR.Plots.BOTTOM, tk = HR.ticks(0, max, 4);
  ctx.font = "11px sans-serif"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
  var ymax = tk.ticks[tk.ticks.length - 1] < max ? max : tk.ticks[tk.ticks.length - 1];
  var y = function (x) { return bottom - x / ymax * (bottom - top); };
  for (var i = 0; i < tk.ticks.length; i++) {
    ctx.fillStyle = HR.COLORS.grid; ctx.fillRect(HR.GUTTER, Math.round(y(tk.ticks[i])), w - HR.GUTTER - HR.RIGHT, 1);
    ctx.fillStyle = HR.COLORS.axis; ctx.fillText(String(Math.round(tk.ticks[i])), HR.GUTTER - 6, y(tk.ticks[i]));
  }
  ctx.save(); ctx.beginPath(); ctx.rect(HR.GUTTER, 0, w - HR.GUTTER - HR.RIGHT, h); ctx.clip();
  for (i = 0; i < bars.length; i++) {
    var x0 = v.x(bars[i][0], w), x1 = v.x(bars[i][0] + b.step, w), base = 0;
    for (var k = 0; k < 3; k++) {
      var val = bars[i][1][k];
      if (!val) continue;
      ctx.fillStyle = HR.OUTCOME_COLORS[k];
      ctx.fillRect(x0, y(base + val), Math.max(1, x1 - x0 - 0.5), y(base) - y(base + val));
      base += val;
    }
  }
  ctx.restore();
  this.bucket = b;
};

HR.Plots.prototype.hitLatency = function (x, y) {
  var w = this.lat.clientWidth, v = this.view, tol = 5 * (v.v1 - v.v0) / (w - HR.GUTTER);
  var t = v.t(x, w), a = HR.lowerBound(this.LS, t - tol), b = HR.upperBound(this.LS, t + tol), best = -1, bestD = 36;
  for (var i = a; i < b; i++) {
    var dx = v.x(this.LS[i], w) - x, dy = this.yLat(this.LV[i], HR.Plots.LAT_H) - y, d2 = dx * dx + dy * dy;
    if (d2 < bestD) { bestD = d2; best = i; }
  }
  return best < 0 ? null : HR.opTip(this.tl, this.LI[best]);
};

HR.Plots.prototype.hitThroughput = function (x) {
  if (!this.bucket) return null;
  var w = this.thr.clientWidth, t = this.view.t(x, w), b = this.bucket;
  var from = b.first + Math.floor((t - b.first) / b.step) * b.step, r = this.rates(from, b.step);
  return HR.tip(HR.fmtTime(from) + " + " + HR.fmtDur(b.step), [
    ["ok", r[0].toFixed(1) + " /s"], ["fail", r[1].toFixed(1) + " /s"], ["info", r[2].toFixed(1) + " /s"]]);
};
