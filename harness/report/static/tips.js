// The timeline's tooltips: what is under the pointer (an operation, a holding, a lease, a
// session event, a write, a mark, a fault), as HTML rows of name and value.
"use strict";

// What is under the pointer, as HTML for the tooltip (null: nothing).
HR.Timeline.prototype.hit = function (x, y) {
  var w = this.canvas.clientWidth, v = this.view, t = v.t(x, w), tol = 4 * (v.v1 - v.v0) / (w - HR.GUTTER);
  if (x < HR.GUTTER) return null;
  for (var l = 0; l < this.lanes.length; l++) {
    var lane = this.lanes[l];
    if (y < lane.top || y >= lane.top + lane.h) continue;
    var dy = y - lane.top;
    if (lane.kind === "resource") return this.writeTip(t, tol);
    var lockish = lane.kind === "client" && lane.h > 30;
    if (lockish && dy >= 22 && dy < 35) return this.holdTip(l, t, tol);
    if (lockish && dy >= 35 && dy < 45) return this.sessionTip(l, t, tol) || this.leaseTip(l, t, tol);
    if (lockish && dy >= 45) return this.markTip(l, t, tol);
    var op = this.nearest(this.laneOps[l], this.S, this.E, t, tol);
    if (op >= 0) return HR.opTip(this, op);
    if (lane.kind === "nemesis") return this.faultTip(t);
    return null;
  }
  return null;
};

// The interval of a lane list containing t, else the nearest within tol (-1: none).
HR.Timeline.prototype.nearest = function (list, S, E, t, tol) {
  var r = this.visible(list, t - tol, t + tol), best = -1, bestD = Infinity;
  for (var j = r[0]; j < r[1]; j++) {
    var i = list.idx[j], dist = t < S[i] ? S[i] - t : (t > E[i] ? t - E[i] : 0);
    if (dist < bestD) { bestD = dist; best = i; }
  }
  return bestD <= tol ? best : -1;
};

HR.Timeline.prototype.holdTip = function (l, t, tol) {
  var i = this.nearest(this.holds[l], this.holds.S, this.holds.E, t, tol), d = this.data.holds;
  if (i < 0) return null;
  var W = this.data.words;
  return HR.tip(W.tenure + ", " + W.number + " " + d.token[i], [
    ["from", HR.fmtTime(d.s[i])], ["until", d.e[i] < 0 ? "the end of the run" : HR.fmtTime(d.e[i])],
    ["ended by", d.ended[i]], ["held for", HR.fmtDur(this.holds.E[i] - d.s[i])]]);
};

HR.Timeline.prototype.leaseTip = function (l, t, tol) {
  var i = this.nearest(this.leases[l], this.leases.S, this.leases.E, t, tol), d = this.data.leases;
  if (i < 0) return null;
  return HR.tip("lease " + d.id[i], [
    ["granted", HR.fmtTime(d.s[i])], ["last acknowledged", HR.fmtTime(d.ack[i])],
    ["alive at most until", d.e[i] < 0 ? "unknown (no TTL)" : HR.fmtTime(d.e[i])],
    ["loss noticed", d.lost[i] < 0 ? "never" : HR.fmtTime(d.lost[i])]]);
};

HR.Timeline.prototype.writeTip = function (t, tol) {
  var d = this.data.writes, a = HR.lowerBound(d.s, t - tol), best = -1, bestD = Infinity;
  for (var i = a; i < d.s.length && d.s[i] <= t + tol; i++) {
    var dist = Math.abs(d.s[i] - t) - (d.stale[i] ? tol : 0);
    if (dist < bestD) { bestD = dist; best = i; }
  }
  if (best < 0) return null;
  i = best;
  var lanes = this.data.lanes, N = this.data.words.number;
  return HR.tip((d.stale[i] ? "STALE write " : "write ") + ((this.acc || d.acc)[i] ? "accepted" : "rejected"), [
    ["arrived", HR.fmtTime(d.s[i])], ["writer", d.writer[i] >= 0 ? lanes[d.writer[i]].label : "?"],
    [N, d.token[i] === null ? "none" : d.token[i]], ["highest " + N + " before", d.hb[i] === null ? "none" : d.hb[i]],
    ["resource", d.res[i] >= 0 ? this.data.strs[d.res[i]] : "?"]]);
};

HR.Timeline.prototype.markTip = function (l, t, tol) {
  var m = this.data.marks;
  for (var i = 0; i < m.length; i++) {
    if (m[i].lane === l && t >= m[i].s - tol && t <= m[i].e + tol) {
      return HR.tip(m[i].label, [["from", HR.fmtTime(m[i].s)], ["to", HR.fmtTime(m[i].e)]]);
    }
  }
  return null;
};

HR.Timeline.prototype.faultTip = function (t) {
  var f = this.data.faults;
  for (var i = 0; i < f.length; i++) {
    if (t >= f[i].s && (f[i].e < 0 || t <= f[i].e)) {
      return HR.tip("fault " + f[i].name, [["from", HR.fmtTime(f[i].s)],
        ["to", f[i].e < 0 ? "the end of the run" : HR.fmtTime(f[i].e)],
        ["took effect", f[i].ok ? "yes, shown" : "not shown"], ["detail", f[i].detail]]);
    }
  }
  return null;
};

// Tooltip HTML: a title and rows of [name, value]; values are escaped.
HR.esc = function (s) {
  return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
};
HR.tip = function (title, rows) {
  return "<b>" + HR.esc(title) + "</b><table>" + rows.filter(function (r) { return r[1] !== "" && r[1] !== undefined; })
    .map(function (r) { return "<tr><td>" + HR.esc(r[0]) + "</td><td>" + HR.esc(r[1]) + "</td></tr>"; }).join("") + "</table>";
};
HR.opTip = function (tl, i) {
  var d = tl.data, ops = d.ops, e = ops.e[i];
  return HR.tip("p" + d.procs[ops.p[i]] + " " + d.fs[ops.f[i]] + " → " + d.outcomes[ops.t[i]], [
    ["value", ops.v[i]], ["key", ops.k[i] >= 0 ? d.keys[ops.k[i]] : ""],
    ["invoked", HR.fmtTime(ops.s[i])], ["completed", e < 0 ? "never" : HR.fmtTime(e)],
    ["latency", e < 0 ? "" : HR.fmtDur(e - ops.s[i])],
    ["error", ops.err[i] >= 0 ? d.strs[ops.err[i]] : ""], ["node", ops.node[i] >= 0 ? d.strs[ops.node[i]] : ""],
    ["history index", ops.x[i]],
    ["counterexample", tl.hl[i] ? (i === d.culprit ? "this operation cannot be linearized" : "in the window") : ""]]
    .concat(tl.linearization ? tl.linearization.rows(i) : []));
};
