// The faults on the timeline: the lanes a fault window aimed at, shaded; the fault's
// name over its window on the nemesis lane; the clock offsets of clock faults, one lane
// per node.
"use strict";

HR.Timeline.prototype.drawClock = function (ctx, w) {
  var c = this.data.clock, v = this.view;
  ctx.font = "11px sans-serif"; ctx.textBaseline = "middle"; ctx.textAlign = "left";
  for (var i = 0; i < c.length; i++) {
    var lane = this.lanes[c[i].lane], x = v.x(c[i].s, w);
    var next = c.slice(i + 1).find(function (o) { return o.lane === c[i].lane; });
    var x1 = next ? v.x(next.s, w) : w;
    ctx.fillStyle = c[i].offset ? "rgba(142, 68, 173, 0.18)" : "transparent";
    ctx.fillRect(x, lane.top + 3, Math.max(1, x1 - x), lane.h - 6);
    ctx.fillStyle = HR.COLORS.handover;
    ctx.fillText((c[i].offset >= 0 ? "+" : "") + (c[i].offset * 1000).toFixed(0) + " ms", x + 3, lane.top + lane.h / 2);
  }
};

HR.Timeline.prototype.drawFaultTargets = function (ctx, w) {
  var f = this.data.faults, v = this.view;
  for (var i = 0; i < f.length; i++) {
    var x0 = v.x(f[i].s, w), x1 = v.x(f[i].e < 0 ? this.data.t1 : f[i].e, w);
    for (var k = 0; k < f[i].lanes.length; k++) {
      var lane = this.lanes[f[i].lanes[k]];
      ctx.fillStyle = HR.COLORS.faultTarget; ctx.fillRect(x0, lane.top, Math.max(1, x1 - x0), lane.h);
    }
  }
};

HR.Timeline.prototype.drawFaultLabels = function (ctx, w) {
  var f = this.data.faults, v = this.view, lane = this.lanes[0];
  ctx.font = "bold 11px sans-serif"; ctx.textBaseline = "middle"; ctx.textAlign = "left";
  for (var i = 0; i < f.length; i++) {
    var x0 = Math.max(HR.GUTTER + 2, v.x(f[i].s, w)), x1 = v.x(f[i].e < 0 ? this.data.t1 : f[i].e, w);
    if (x1 - x0 < 30) continue;
    var who = f[i].lanes.map(function (l) { return this.data.lanes[l].label; }, this).join(", ");
    var text = f[i].name + (who ? " of " + who : "") + (f[i].ok ? "" : " (not shown to take effect)");
    ctx.fillStyle = "#a33";
    ctx.fillText(HR.Timeline.clip(ctx, text, x1 - x0 - 8), x0 + 4, lane.top + lane.h - 6);
  }
};
