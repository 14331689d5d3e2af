// Porcupine's view of a linearizability counterexample on the timeline: the chosen
// longest partial linearization, each of its operations with a dot at its linearization
// point (the moment of its interval at which it takes effect), the dots joined in order;
// hovering an operation adds its place in the order and the model state before and after
// it. The toolbar's select picks which of the longest linearizations is drawn.
"use strict";

HR.Linearization = function (tl, lin) {
  this.tl = tl; this.lin = lin; this.pick = 0;
  this.byOp = lin.lins.map(function (l) {
    var m = new Map();
    for (var j = 0; j < l.pos.length; j++) m.set(l.pos[j], j);
    return m;
  });
};

HR.Linearization.prototype.current = function () { return this.lin.lins[this.pick]; };

// The y of the middle of an operation's bar.
HR.Linearization.prototype.y = function (i) {
  return this.tl.lanes[this.tl.L[i]].top + 13;
};

// Points are in order and never go back in time: the visible ones are a range.
HR.Linearization.prototype.draw = function (ctx, w) {
  var l = this.current(), v = this.tl.view;
  if (!l.at.length) return;
  var a = Math.max(0, HR.lowerBound(l.at, v.v0) - 1), b = Math.min(l.at.length, HR.upperBound(l.at, v.v1) + 1);
  ctx.strokeStyle = HR.COLORS.lin; ctx.lineWidth = 1.5; ctx.beginPath();
  for (var j = a; j < b; j++) {
    var x = v.x(l.at[j], w), y = this.y(l.pos[j]);
    if (j === a) ctx.moveTo(x, y); else ctx.lineTo(x, y);
  }
  ctx.stroke();
  var lastX = -1, lastY = -1;
  ctx.fillStyle = HR.COLORS.lin; ctx.strokeStyle = "#fff"; ctx.lineWidth = 1;
  for (j = a; j < b; j++) {
    x = v.x(l.at[j], w); y = this.y(l.pos[j]);
    if (Math.abs(x - lastX) < 2 && y === lastY) continue;
    lastX = x; lastY = y;
    ctx.beginPath(); ctx.arc(x, y, 3.5, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
  }
};

// Tooltip rows of operation i: its place in the order, its point, the states around it;
// for the operation that cannot be linearized, the state the order leaves it.
HR.Linearization.prototype.rows = function (i) {
  var l = this.current(), s = this.lin.states, j = this.byOp[this.pick].get(i);
  var name = "linearization #" + (this.pick + 1);
  if (j === undefined) {
    if (i !== this.tl.data.culprit) return [];
    var last = l.state.length ? l.state[l.state.length - 1] : l.before;
    return [[name, "cannot follow its " + l.length + " operations"],
      ["state it finds", last >= 0 ? s[last] : "?"]];
  }
  return [[name, "operation " + l.order[j] + " of " + l.length],
    ["takes effect at", HR.fmtTime(l.at[j])],
    ["state before", l.prev[j] >= 0 ? s[l.prev[j]] : "?"], ["state after", s[l.state[j]]]];
};

// The toolbar's select: one entry per longest linearization.
HR.Linearization.prototype.attach = function (select, view) {
  var self = this;
  select.innerHTML = "";
  this.lin.lins.forEach(function (l, n) {
    var o = document.createElement("option");
    o.value = String(n);
    o.textContent = "linearization #" + (n + 1) + " (" + l.length + " ops)";
    select.appendChild(o);
  });
  select.parentElement.hidden = false;
  select.addEventListener("change", function () { self.pick = Number(select.value); view.schedule(); });
};
