// The timeline: one lane per process, operations as bars coloured by outcome, fault
// windows shaded, lock holdings with their fencing tokens, lease lifetimes, the protected
// resource's writes (stale ones highlighted), clock offsets, and the anomaly's marks.
//
// It stays fluid with 100,000 operations: operations of a lane never overlap in time
// except for a bar left open, so each lane keeps its operations sorted by start with a
// running maximum of their ends, and a frame binary-searches the first visible one and
// stops at the first that starts after the view. Operations narrower than a pixel are
// not drawn one by one: they are counted per pixel column and drawn as one stacked column.
"use strict";

HR.Timeline = function (canvas, data, view) {
  this.canvas = canvas; this.data = data; this.view = view;
  this.dim = false;
  var ops = data.ops, n = ops.s.length, t1 = data.t1;
  this.n = n;
  this.S = Float64Array.from(ops.s);
  this.E = new Float64Array(n);
  this.T = Uint8Array.from(ops.t);
  this.L = Int32Array.from(ops.lane);
  for (var i = 0; i < n; i++) this.E[i] = ops.e[i] < 0 ? t1 : ops.e[i];
  this.laneOps = HR.Timeline.byLane(this.L, data.lanes.length, this.S, this.E);
  this.holds = HR.Timeline.intervals(data.holds, data.lanes.length, t1);
  this.leases = HR.Timeline.intervals(data.leases, data.lanes.length, t1);
  this.hl = new Uint8Array(n);
  for (i = 0; i < data.highlight.length; i++) this.hl[data.highlight[i]] = 1;
  this.layout();
};

// Per lane: the op indices in start order, their starts and the running max of their ends.
HR.Timeline.byLane = function (laneOf, lanes, S, E) {
  var lists = [], i;
  for (i = 0; i < lanes; i++) lists.push([]);
  for (i = 0; i < laneOf.length; i++) if (laneOf[i] >= 0) lists[laneOf[i]].push(i);
  return lists.map(function (list) {
    list.sort(function (a, b) { return S[a] - S[b]; });
    var idx = Int32Array.from(list), s = new Float64Array(idx.length), maxE = new Float64Array(idx.length);
    var m = -Infinity;
    for (var j = 0; j < idx.length; j++) {
      s[j] = S[idx[j]]; m = Math.max(m, E[idx[j]]); maxE[j] = m;
    }
    return { idx: idx, s: s, maxE: maxE };
  });
};

// Columns {lane, s, e} (e < 0: to the end) grouped by lane, in the same searchable form.
HR.Timeline.intervals = function (cols, lanes, t1) {
  var n = cols.s.length, S = new Float64Array(n), E = new Float64Array(n);
  for (var i = 0; i < n; i++) { S[i] = cols.s[i]; E[i] = cols.e[i] < 0 ? t1 : cols.e[i]; }
  var out = HR.Timeline.byLane(Int32Array.from(cols.lane), lanes, S, E);
  out.S = S; out.E = E;
  return out;
};

HR.Timeline.AXIS = 28;
HR.Timeline.prototype.layout = function () {
  var d = this.data, top = HR.Timeline.AXIS, lockish = d.holds.s.length > 0 || d.leases.s.length > 0;
  this.lanes = d.lanes.map(function (lane) {
    var h = { nemesis: 30, client: lockish ? 60 : 28, resource: 36, clock: 22 }[lane.kind] || 28;
    var l = { top: top, h: h, kind: lane.kind, label: lane.label };
    top += h;
    return l;
  });
  this.height = top + 6;
};

// Visible range [first, last) of a lane list for [v0, v1].
HR.Timeline.prototype.visible = function (list, v0, v1) {
  return [HR.upperBound(list.maxE, v0), HR.upperBound(list.s, v1)];
};

HR.Timeline.prototype.draw = function () {
  var f = HR.fit(this.canvas, this.height), ctx = f.ctx, w = f.w, v = this.view, d = this.data;
  var top = HR.Timeline.AXIS, bottom = this.height - 6;
  ctx.clearRect(0, 0, w, this.height);
  for (var l = 0; l < this.lanes.length; l++) {
    var lane = this.lanes[l];
    if (l % 2) { ctx.fillStyle = HR.COLORS.laneAlt; ctx.fillRect(0, lane.top, w, lane.h); }
  }
  ctx.save();
  ctx.beginPath(); ctx.rect(HR.GUTTER, 0, w - HR.GUTTER - HR.RIGHT, this.height); ctx.clip();
  HR.drawFaults(ctx, v, w, top, bottom, d.faults, d.t1);
  this.drawFaultTargets(ctx, w);
  this.drawWindows(ctx, w, top, bottom);
  HR.drawAxis(ctx, v, w, bottom, top);
  for (l = 0; l < this.lanes.length; l++) {
    lane = this.lanes[l];
    if (lane.kind === "client" || lane.kind === "nemesis") this.drawOps(ctx, w, l);
    if (lane.kind === "client") { this.drawHolds(ctx, w, l); this.drawLeases(ctx, w, l); this.drawSessions(ctx, w, l); }
  }
  this.drawLinks(ctx, w);
  if (this.linearization) this.linearization.draw(ctx, w);
  this.drawWrites(ctx, w);
  this.drawClock(ctx, w);
  this.drawFaultLabels(ctx, w);
  this.drawMarks(ctx, w);
  if (this.cursor) this.cursor.draw(ctx, w, top, bottom);
  ctx.restore();
  this.drawLabels(ctx);
};

// A replacement process's lane is linked to the lane of the process it replaces: a dashed
// elbow from the end of the replaced process's last operation to its replacement's first.
HR.Timeline.prototype.drawLinks = function (ctx, w) {
  var lanes = this.data.lanes, v = this.view;
  ctx.strokeStyle = HR.COLORS.faint; ctx.lineWidth = 1; ctx.setLineDash([3, 3]);
  for (var l = 0; l < lanes.length; l++) {
    var from = lanes[l].after, a = from >= 0 ? this.laneOps[from] : null, b = this.laneOps[l];
    if (!a || !a.idx.length || !b.idx.length) continue;
    var x0 = v.x(a.maxE[a.idx.length - 1], w), x1 = v.x(b.s[0], w);
    if (Math.max(x0, x1) < HR.GUTTER || Math.min(x0, x1) > w) continue;
    var y0 = this.lanes[from].top + 13, y1 = this.lanes[l].top + 13;
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x0, y1); ctx.lineTo(x1, y1); ctx.stroke();
  }
  ctx.setLineDash([]);
};

HR.Timeline.prototype.drawLabels = function (ctx) {
  ctx.font = "12px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  for (var l = 0; l < this.lanes.length; l++) {
    var lane = this.lanes[l];
    ctx.fillStyle = lane.kind === "client" ? HR.COLORS.text : HR.COLORS.faint;
    ctx.fillText(HR.Timeline.clip(ctx, lane.label, HR.GUTTER - 14), 8, lane.top + Math.min(13, lane.h / 2));
  }
  ctx.fillStyle = HR.COLORS.faint; ctx.font = "11px sans-serif";
  ctx.fillText(HR.AXIS_LABEL || "run clock →", 8, HR.Timeline.AXIS - 9);
};

HR.Timeline.clip = function (ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  while (text.length > 1 && ctx.measureText(text + "…").width > width) text = text.slice(0, -1);
  return text + "…";
};

// Operation bars; sub-pixel ones counted per pixel column and drawn stacked by outcome.
HR.Timeline.prototype.drawOps = function (ctx, w, l) {
  var lane = this.lanes[l], list = this.laneOps[l], v = this.view;
  var range = this.visible(list, v.v0, v.v1), y = lane.top + 4, h = lane.kind === "nemesis" ? 20 : 18;
  var scale = (w - HR.GUTTER - HR.RIGHT) / (v.v1 - v.v0), W = Math.ceil(w) + 2;
  var counts = this.counts && this.counts.length >= W * 4 ? this.counts : (this.counts = new Uint32Array(W * 4));
  counts.fill(0, 0, W * 4);
  var any = false, dimmed = this.dim && this.data.highlight.length > 0, labels = [];
  for (var j = range[0]; j < range[1]; j++) {
    var i = list.idx[j], s = this.S[i], e = this.E[i];
    if (e < v.v0) continue;
    var x0 = HR.GUTTER + (s - v.v0) * scale, x1 = HR.GUTTER + (e - v.v0) * scale;
    if (x1 - x0 < 1 && !this.hl[i]) {
      var px = Math.max(0, Math.min(W - 1, x0 | 0));
      counts[px * 4 + this.T[i]]++; any = true;
      continue;
    }
    ctx.globalAlpha = dimmed && !this.hl[i] ? 0.2 : 1;
    ctx.fillStyle = HR.OUTCOME_COLORS[this.T[i]];
    var bx = Math.max(x0, HR.GUTTER - 2), bw = Math.max(1, Math.min(x1, w) - bx);
    ctx.fillRect(bx, y, bw, h);
    if (this.hl[i]) labels.push(i);
    else if (bw > 38) this.opLabel(ctx, i, bx, y, bw, h);
  }
  ctx.globalAlpha = dimmed ? 0.2 : 1;
  if (any) this.drawColumns(ctx, counts, W, y, h);
  ctx.globalAlpha = 1;
  for (j = 0; j < labels.length; j++) this.drawHighlighted(ctx, labels[j], w, y, h, scale);
};

HR.Timeline.prototype.drawColumns = function (ctx, counts, W, y, h) {
  for (var px = 0; px < W; px++) {
    var o = px * 4, total = counts[o] + counts[o + 1] + counts[o + 2] + counts[o + 3];
    if (!total) continue;
    var yy = y;
    for (var t = 0; t < 4; t++) {
      if (!counts[o + t]) continue;
      var hh = Math.max(2, h * counts[o + t] / total);
      ctx.fillStyle = HR.OUTCOME_COLORS[t];
      ctx.fillRect(px, yy, 1, Math.min(hh, y + h - yy));
      yy += hh;
    }
  }
};

HR.Timeline.prototype.drawHighlighted = function (ctx, i, w, y, h, scale) {
  var v = this.view, x0 = HR.GUTTER + (this.S[i] - v.v0) * scale;
  var x1 = HR.GUTTER + (this.E[i] - v.v0) * scale, bw = Math.max(3, x1 - x0);
  var culprit = i === this.data.culprit;
  ctx.fillStyle = HR.OUTCOME_COLORS[this.T[i]];
  ctx.fillRect(x0, y, bw, h);
  ctx.lineWidth = culprit ? 3 : 2;
  ctx.strokeStyle = culprit ? HR.COLORS.culprit : HR.COLORS.highlight;
  ctx.strokeRect(x0 - 1, y - 1, bw + 2, h + 2);
  this.opLabel(ctx, i, x0, y, Math.max(bw, 90), h, true);
  if (culprit) {
    ctx.fillStyle = HR.COLORS.culprit; ctx.font = "bold 11px sans-serif"; ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText("✗ cannot be linearized", x0, y + h + 3);
  }
};

// The short text of an operation: "r 3", "w 4", "cas 1→2", "acquire #7", with its key.
HR.Timeline.prototype.opText = function (i) {
  var d = this.data, ops = d.ops, f = d.fs[ops.f[i]], v = ops.v[i], t = this.T[i];
  var key = ops.k[i] >= 0 && d.keys.length > 1 ? "k" + d.keys[ops.k[i]] + " " : "";
  var val;
  try { val = v === "" ? null : JSON.parse(v); } catch (e) { val = v; }
  var shown = val === null ? (t === 0 ? "nil" : "?") : (typeof val === "object" ? JSON.stringify(val) : String(val));
  if (f === "read") return key + "r " + shown;
  if (f === "write" && typeof val !== "object") return key + "w " + shown;
  if (f === "cas" && Array.isArray(val) && val.length === 2) {
    return key + "cas " + (val[0] === null ? "nil" : val[0]) + "→" + (val[1] === null ? "nil" : val[1]);
  }
  if (val && typeof val === "object" && !Array.isArray(val)) {
    var tok = val.token !== undefined ? val.token : val.epoch;
    if (tok !== undefined) return key + f + " #" + tok;
    return key + f;
  }
  return key + f + (val === null ? "" : " " + shown);
};

HR.Timeline.prototype.opLabel = function (ctx, i, x, y, bw, h, bold) {
  ctx.font = (bold ? "bold " : "") + "11px sans-serif";
  ctx.textAlign = "left"; ctx.textBaseline = "middle";
  ctx.fillStyle = bold ? "#000" : "#fff";
  var text = HR.Timeline.clip(ctx, this.opText(i), bw - 6);
  if (bold) {  // highlighted ops may be narrow: label on a white tag above the bar
    var tw = ctx.measureText(text).width + 6;
    ctx.fillStyle = "rgba(255,255,255,0.9)"; ctx.fillRect(x, y + 1, tw, h - 2);
    ctx.fillStyle = "#000";
  }
  ctx.fillText(text, x + 3, y + h / 2 + 0.5);
};

HR.Timeline.prototype.drawHolds = function (ctx, w, l) {
  var list = this.holds[l], v = this.view, d = this.data.holds;
  if (!list.idx.length) return;
  var lane = this.lanes[l], y = lane.top + 24, h = 10, r = this.visible(list, v.v0, v.v1), lastPx = -1;
  ctx.font = "10px sans-serif"; ctx.textBaseline = "middle"; ctx.textAlign = "left";
  for (var j = r[0]; j < r[1]; j++) {
    var i = list.idx[j], x0 = v.x(this.holds.S[i], w), x1 = v.x(this.holds.E[i], w);
    if (x1 - x0 < 1 && (x0 | 0) === lastPx) continue;
    lastPx = x0 | 0;
    ctx.fillStyle = d.ended[i] === "lease-lost" ? HR.COLORS.holdLost : HR.COLORS.hold[j % 2];
    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    if (x1 - x0 > 26 && d.token[i] !== null) {
      ctx.fillStyle = "#fff";
      ctx.fillText(HR.Timeline.clip(ctx, this.data.words.number + " " + d.token[i], x1 - x0 - 4), Math.max(x0, HR.GUTTER) + 2, y + h / 2 + 0.5);
    }
  }
};

HR.Timeline.prototype.drawLeases = function (ctx, w, l) {
  var list = this.leases[l], v = this.view, d = this.data.leases;
  if (!list.idx.length) return;
  var y = this.lanes[l].top + 37, h = 6, r = this.visible(list, v.v0, v.v1), lastPx = -1;
  for (var j = r[0]; j < r[1]; j++) {
    var i = list.idx[j], xs = v.x(d.s[i], w), xa = v.x(Math.max(d.ack[i], d.s[i]), w);
    var xe = d.e[i] < 0 ? xa : v.x(this.leases.E[i], w);
    if (xe - xs < 1 && (xs | 0) === lastPx) continue;
    lastPx = xs | 0;
    ctx.fillStyle = HR.COLORS.lease; ctx.fillRect(xs, y, Math.max(1, xa - xs), h);
    if (xe > xa) { ctx.fillStyle = HR.COLORS.leaseMaybe; ctx.fillRect(xa, y, xe - xa, h); }
    if (d.lost[i] >= 0) HR.Timeline.cross(ctx, v.x(d.lost[i], w), y + h / 2, HR.COLORS.holdLost);
  }
};

// Session events (failed renewals, connection states, an abandoned worker's late completion
// and stop): small diamonds on the lease band, explained by their tooltip.
HR.Timeline.prototype.drawSessions = function (ctx, w, l) {
  var d = this.data.sessions, v = this.view, y = this.lanes[l].top + 40;
  if (!d || !d.s.length) return;
  ctx.fillStyle = HR.COLORS.session;
  for (var i = 0; i < d.s.length; i++) {
    if (d.lane[i] !== l || d.s[i] < v.v0 || d.s[i] > v.v1) continue;
    var x = v.x(d.s[i], w);
    ctx.beginPath(); ctx.moveTo(x, y - 5); ctx.lineTo(x + 4, y); ctx.lineTo(x, y + 5); ctx.lineTo(x - 4, y);
    ctx.closePath(); ctx.fill();
  }
};

HR.Timeline.prototype.sessionTip = function (l, t, tol) {
  var d = this.data.sessions, best = -1, bestD = Infinity;
  if (!d) return null;
  for (var i = 0; i < d.s.length; i++) {
    var dist = Math.abs(d.s[i] - t);
    if (d.lane[i] === l && dist <= tol && dist < bestD) { bestD = dist; best = i; }
  }
  if (best < 0) return null;
  return HR.tip(this.data.strs[d.what[best]], [["at", HR.fmtTime(d.s[best])]]);
};

HR.Timeline.cross = function (ctx, x, y, color) {
  ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
  ctx.moveTo(x - 4, y - 4); ctx.lineTo(x + 4, y + 4); ctx.moveTo(x + 4, y - 4); ctx.lineTo(x - 4, y + 4);
  ctx.stroke();
};

HR.Timeline.prototype.drawWrites = function (ctx, w) {
  var d = this.data.writes, v = this.view, n = d.s.length, acc = this.acc || d.acc;
  if (!n) return;
  var lane = this.lanes[d.lane[0]], mid = lane.top + 12, a = HR.upperBound(d.s, v.v0 - 1), b = HR.upperBound(d.s, v.v1 + 1);
  var lastPx = -1, stale = [];
  for (var i = a; i < b; i++) {
    if (d.stale[i]) { stale.push(i); continue; }
    var x = v.x(d.s[i], w);
    if ((x | 0) === lastPx) continue;
    lastPx = x | 0;
    ctx.fillStyle = acc[i] ? HR.COLORS.write : HR.COLORS.rejected;
    ctx.fillRect(x - 1, mid - 7, 2, 14);
  }
  ctx.font = "bold 11px sans-serif"; ctx.textBaseline = "top"; ctx.textAlign = "left";
  for (var k = 0; k < stale.length; k++) {
    i = stale[k]; x = v.x(d.s[i], w);
    var color = acc[i] ? HR.COLORS.staleAccepted : HR.COLORS.staleRejected;
    ctx.fillStyle = color; ctx.beginPath();
    ctx.moveTo(x, mid - 8); ctx.lineTo(x + 7, mid); ctx.lineTo(x, mid + 8); ctx.lineTo(x - 7, mid); ctx.closePath();
    ctx.fill();
    var text = "stale " + this.data.words.number + " " + d.token[i] + (acc[i] ? " ACCEPTED" : " rejected") + " (resource had " + d.hb[i] + ")";
    var tw = ctx.measureText(text).width;
    ctx.fillText(text, x + 10 + tw > w - HR.RIGHT ? x - 10 - tw : x + 10, mid + 6);
  }
};

HR.Timeline.prototype.drawWindows = function (ctx, w, top, bottom) {
  var m = this.data.marks, v = this.view;
  for (var i = 0; i < m.length; i++) {
    if (m[i].kind !== "window") continue;
    var x0 = v.x(m[i].s, w), x1 = v.x(m[i].e, w);
    ctx.fillStyle = HR.COLORS.window; ctx.fillRect(x0, top, Math.max(2, x1 - x0), bottom - top);
    ctx.strokeStyle = HR.COLORS.windowEdge; ctx.lineWidth = 1; ctx.setLineDash([4, 3]);
    ctx.strokeRect(x0, top + 0.5, Math.max(2, x1 - x0), bottom - top - 1);
    ctx.setLineDash([]);
  }
};

// Danger windows, handover delays and lease expiries, on their lanes. A lock lane keeps
// its bottom row (below the lease band) for their labels, clear of the operation bars.
HR.Timeline.prototype.drawMarks = function (ctx, w) {
  var m = this.data.marks, v = this.view;
  ctx.font = "bold 11px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
  var windows = 0;  // window labels one under the other, never over each other
  for (var i = 0; i < m.length; i++) {
    var k = m[i], x0 = v.x(k.s, w), x1 = v.x(k.e, w), lane = k.lane >= 0 ? this.lanes[k.lane] : null;
    if (k.kind === "window") {
      ctx.fillStyle = HR.COLORS.windowEdge; ctx.textBaseline = "top";
      ctx.fillText(k.label, Math.max(HR.GUTTER + 2, x0 + 3), HR.Timeline.AXIS + 1 + 12 * windows++);
      ctx.textBaseline = "alphabetic";
      continue;
    }
    if (!lane) continue;
    var row = lane.top + lane.h - 5, tx = Math.max(HR.GUTTER + 2, x0 + 4);
    if (k.kind === "danger") {
      ctx.fillStyle = HR.COLORS.danger; ctx.fillRect(x0, lane.top + 22, Math.max(2, x1 - x0), lane.h - 23);
      HR.Timeline.dashed(ctx, x0, lane.top, lane.top + lane.h, HR.COLORS.staleAccepted);
      ctx.fillStyle = HR.COLORS.staleAccepted; ctx.fillText(k.label, tx, row);
    } else if (k.kind === "handover") {
      ctx.strokeStyle = HR.COLORS.handover; ctx.lineWidth = 2; ctx.beginPath();
      var xe = Math.max(x1, x0 + 2);
      ctx.moveTo(x0, row - 9); ctx.lineTo(x0, row - 4); ctx.lineTo(xe, row - 4); ctx.lineTo(xe, row - 9);
      ctx.stroke();
      ctx.fillStyle = HR.COLORS.handover; ctx.fillText(k.label, Math.max(HR.GUTTER + 2, xe + 4), row);
    } else if (k.kind === "expiry") {
      HR.Timeline.dashed(ctx, x0, lane.top, lane.top + lane.h, HR.COLORS.staleAccepted);
      ctx.fillStyle = HR.COLORS.staleAccepted; ctx.fillText(k.label, tx, row);
    }
  }
};

HR.Timeline.dashed = function (ctx, x, y0, y1, color) {
  ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.setLineDash([3, 2]);
  ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y1); ctx.stroke();
  ctx.setLineDash([]);
};

