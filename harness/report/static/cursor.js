// The time cursor of a lock or election report (the seed's interactive timeline): at the
// instant it points to, what each client believed (holding, with which token or epoch,
// frozen or not, its lease), what the service saw (the holder or leader whose lease was
// alive, its number, the lease's expiry) and what the protected resource held (whose write:
// its process and number; the highest number seen, the verdict on the last write). The
// words are the run's (d.words: the lock's token, the election's epoch). The fencing switch shows the same recorded writes
// judged by the resource's rule with fencing on or off (the replay the report's writer
// computed from the resource log): the same timeline, both endings.
"use strict";

HR.Cursor = function (tl, d, view) {
  this.tl = tl; this.d = d; this.view = view; this.f = d.fencing;
  this.mode = this.f.ran || "on";
  var stale = d.writes.stale.indexOf(1);  // opens on the first stale write, else the end
  this.t = stale >= 0 ? d.writes.s[stale] : d.t1;
  var w = d.writes, n = w.s.length;
  this.last = {};  // per mode: the last write accepted at or before each write (-1: none)
  for (var mode in { on: 1, off: 1 }) {
    var acc = this.f[mode].acc, last = new Int32Array(n), k = -1;
    for (var i = 0; i < n; i++) { if (acc[i]) k = i; last[i] = k; }
    this.last[mode] = last;
  }
  this.setMode(this.mode);
};

HR.Cursor.prototype.setMode = function (mode) {
  this.mode = mode;
  this.tl.acc = this.f[mode].acc;  // the resource lane draws this mode's verdicts
};

HR.Cursor.prototype.draw = function (ctx, w, top, bottom) {
  var x = this.view.x(this.t, w);
  ctx.fillStyle = HR.COLORS.cursor; ctx.fillRect(Math.round(x) - 1, top - 4, 2, bottom - top + 4);
};

// One client lane at time t: its holding, the fault on it, its lease, in words.
HR.Cursor.prototype.belief = function (l, t) {
  var d = this.d, h = d.holds, hold = -1, i;
  for (i = 0; i < h.s.length; i++) {
    if (h.lane[i] === l && h.s[i] <= t && (h.e[i] < 0 || t < h.e[i])) hold = i;
  }
  var fault = d.faults.filter(function (f) {
    return f.ok && f.lanes.indexOf(l) >= 0 && f.s <= t && (f.e < 0 || t <= f.e);
  })[0];
  var W = d.words;
  var words = hold >= 0 ? "believes it holds the " + W.prize + " (" + W.number + " " + h.token[hold] + ")" :
    this.waiting(l, t) ? "waiting for the " + W.prize : "not holding";
  if (fault) words += ", frozen by " + fault.name;
  var lease = this.lease(l, t);
  if (lease.words && (hold >= 0 || lease.alive || lease.maybe)) words += "; " + lease.words;  // an old lease's end says nothing of a waiter
  return words;
};

// The lease of lane l at time t: alive, perhaps alive, expired; and its index.
HR.Cursor.prototype.lease = function (l, t) {
  var ls = this.d.leases, best = -1;
  for (var i = 0; i < ls.s.length; i++) if (ls.lane[i] === l && ls.s[i] <= t) best = i;
  if (best < 0) return { i: -1, words: "" };
  var e = ls.e[best], ack = ls.ack[best];
  if (t <= ack) return { i: best, alive: true, words: "lease alive" };
  if (e < 0 || t <= e) return { i: best, maybe: true, words: "lease perhaps alive" };
  return { i: best, words: "lease expired at " + HR.fmtTime(e) };
};

HR.Cursor.prototype.waiting = function (l, t) {
  var tl = this.tl, list = tl.laneOps[l], r = tl.visible(list, t, t), d = this.d;
  for (var j = r[0]; j < r[1]; j++) {
    var i = list.idx[j];
    if (tl.S[i] <= t && t < tl.E[i] && d.words.take.indexOf(d.fs[d.ops.f[i]]) >= 0) return true;
  }
  return false;
};

// The service's view at t: the clients that took the lock (the leadership) under a lease
// still alive (else perhaps alive) and had not given it up; two of them is the anomaly.
HR.Cursor.prototype.service = function (t) {
  var lanes = this.d.lanes, ls = this.d.leases, h = this.d.holds, sure = [], maybe = [], W = this.d.words;
  for (var l = 0; l < lanes.length; l++) {
    if (lanes[l].kind !== "client") continue;
    var i = -1, lease = this.lease(l, t);
    for (var k = 0; k < h.s.length; k++) if (h.lane[k] === l && h.s[k] <= t) i = k;
    if (i < 0 || lease.i < 0 || ls.s[lease.i] > h.s[i]) continue;
    if (h.ended[i] === "released" && h.e[i] >= 0 && h.e[i] <= t) continue;
    var who = lanes[l].label + " (" + W.number + " " + h.token[i] + "), lease until " +
      (ls.e[lease.i] < 0 ? "unknown" : HR.fmtTime(ls.e[lease.i]));
    if (lease.alive) sure.push(who); else if (lease.maybe) maybe.push(who);
  }
  if (sure.length) return (sure.length > 1 ? "two " + W.holder + "s: " : W.holder + " ") + sure.join("; ");
  if (maybe.length) return W.holder + " perhaps " + maybe.join("; ");
  return "no " + W.holder;
};

// The resource at t under the switch's mode: whose write it holds (the last accepted one:
// its process and number, as the resource logged them), the highest number seen and the
// verdict on the last write to arrive.
HR.Cursor.prototype.resource = function (t) {
  var w = this.d.writes, j = HR.upperBound(w.s, t) - 1, m = this.f[this.mode], N = this.d.words.number;
  if (j < 0) return { holds: "holds no write yet", token: "–", verdict: "no write yet" };
  var k = this.last[this.mode][j], stale = w.hb[j] !== null && w.token[j] !== null && w.token[j] < w.hb[j];
  var verdict = (stale ? "stale write (" + N + " " + w.token[j] + " < " + w.hb[j] + ") " : "write (" + N + " " + w.token[j] + ") ") +
    (m.acc[j] ? (stale ? "ACCEPTED: data overwritten" : "accepted") : (stale ? "rejected: protected" : "rejected"));
  var holds = k < 0 ? "holds no accepted write yet" : "holds the write of process " +
    (w.proc[k] === null ? "?" : w.proc[k]) + ", " + N + " " + (w.token[k] === null ? "none" : w.token[k]);
  return { holds: holds, token: m.high[j] === null ? "none" : String(m.high[j]), verdict: verdict };
};

// The panel's rows at the cursor, as [name, text] pairs (the page and tests read them).
HR.Cursor.prototype.rows = function () {
  var t = this.t, lanes = this.d.lanes, out = [];
  for (var l = 0; l < lanes.length; l++) if (lanes[l].kind === "client" && this.alive(l, t)) out.push([lanes[l].label, this.belief(l, t)]);
  out.push(["service", this.service(t)]);
  var r = this.resource(t);
  out.push(["resource", r.holds + " · highest " + this.d.words.number + " seen " + r.token]);
  out.push(["verdict", r.verdict]);
  return out;
};

// Whether lane l's process was there at t: from its first operation to the end of its
// last (a replaced process's row leaves the panel with it).
HR.Cursor.prototype.alive = function (l, t) {
  var list = this.tl.laneOps[l], n = list.idx.length;
  return n > 0 && list.s[0] <= t && t <= list.maxE[n - 1];
};

HR.Cursor.prototype.render = function () {
  document.getElementById("cursor-time").textContent = "t = " + HR.fmtTime(this.t);
  document.getElementById("cursor-state").innerHTML = this.rows().map(function (r) {
    return "<tr><th>" + HR.esc(r[0]) + "</th><td>" + HR.esc(r[1]) + "</td></tr>";
  }).join("");
  document.getElementById("ending").textContent = this.f[this.mode].ending +
    (this.mode === this.f.ran ? " (as the run went)" : " (the same writes replayed)");
};

HR.Cursor.prototype.attach = function (slider, toggle) {
  var self = this, d = this.d;
  slider.min = String(d.t0); slider.max = String(d.t1); slider.step = String(Math.max(1, (d.t1 - d.t0) / 2000));
  slider.value = String(this.t);
  toggle.checked = this.mode === "on";
  slider.addEventListener("input", function () { self.t = Number(slider.value); self.render(); self.view.schedule(); });
  toggle.addEventListener("change", function () { self.setMode(toggle.checked ? "on" : "off"); self.render(); self.view.schedule(); });
  document.getElementById("cursor-panel").hidden = false;
  this.render();
};
