// For a history that records only the order of its events (Knossos, porcupine): the
// timeline's tick is one event, so times read "event 12" and durations "3 events", and
// the latency and throughput plots, which need a clock, are not shown. Loaded after
// view.js and before the canvases are drawn, only in such a history's report.
"use strict";

HR.fmtTime = function (t) { return "event " + Math.round(t); };
HR.fmtDur = function (t) {
  if (t < 0) return "–";
  var n = Math.round(t);
  return n + (n === 1 ? " event" : " events");
};
HR.AXIS_LABEL = "order of events →";
["latency", "throughput"].forEach(function (id) {
  var canvas = document.getElementById(id);
  if (canvas) canvas.parentElement.hidden = true;
});
