// The report page: reads the embedded data, opens the timeline on the anomaly (or the
// whole run), links the plots to it, shows tooltips, and marks the first view rendered
// (<html data-rendered="1" data-render-ms="...">) for tests and benchmarks.
"use strict";

(function () {
  var root = document.documentElement;
  function fail(err) {
    root.setAttribute("data-rendered", "error");
    var box = document.getElementById("timeline-error");
    if (box) { box.hidden = false; box.textContent = "The timeline could not be drawn: " + err; }
    throw err;
  }
  try {
    var data = JSON.parse(document.getElementById("data").textContent);
    if (!data.timeline) { root.setAttribute("data-rendered", "1"); return; }
    var d = data.timeline, view = new HR.View(d.t0, d.t1);
    var tl = new HR.Timeline(document.getElementById("timeline"), d, view);
    var plots = new HR.Plots(document.getElementById("latency"), document.getElementById("throughput"), d, view, tl);
    if (d.lin) {
      tl.linearization = new HR.Linearization(tl, d.lin);
      tl.linearization.attach(document.getElementById("lin-pick"), view);
    }
    if (d.fencing && d.fencing.agrees) {
      tl.cursor = new HR.Cursor(tl, d, view);
      tl.cursor.attach(document.getElementById("cursor"), document.getElementById("fencing-switch"));
    }
    // A step of the side table, clicked: the timeline zooms on its operation.
    document.querySelectorAll("#lin-steps a[data-x]").forEach(function (a) {
      a.addEventListener("click", function () {
        var i = d.ops.x.indexOf(Number(a.dataset.x));
        if (i < 0) return;
        var s = tl.S[i], e = tl.E[i], pad = Math.max(e - s, 1000) * 4;
        view.set(s - pad, e + pad);
      });
    });
    var dim = document.getElementById("dim");
    tl.dim = dim.checked = d.highlight.length > 0;
    dim.parentElement.hidden = d.highlight.length === 0;
    dim.addEventListener("change", function () { tl.dim = dim.checked; view.schedule(); });
    var focusBtn = document.getElementById("focus");
    function focus() { if (d.focus) view.set(d.focus.s, d.focus.e); }
    if (d.focus) {
      focusBtn.hidden = false;
      focusBtn.textContent = "Zoom to " + d.focus.label;
      focusBtn.addEventListener("click", focus);
    }
    document.getElementById("whole").addEventListener("click", function () { view.whole(); });
    view.onChange(function () { tl.draw(); });
    view.onChange(function () { plots.draw(); });
    view.onChange(function () {
      document.getElementById("range").textContent =
        HR.fmtTime(view.v0, view.v1 - view.v0) + " – " + HR.fmtTime(view.v1, view.v1 - view.v0) +
        " (" + HR.fmtDur(view.v1 - view.v0) + " shown)";
    });
    var dragging = [view.attach(tl.canvas), view.attach(plots.lat), view.attach(plots.thr)];
    var tip = document.getElementById("tooltip");
    function hover(canvas, hit) {
      canvas.addEventListener("mousemove", function (ev) {
        var html = dragging.some(function (f) { return f(); }) ? null : hit(ev.offsetX, ev.offsetY);
        if (!html) { tip.hidden = true; return; }
        tip.innerHTML = html; tip.hidden = false;
        var x = ev.clientX + 14, y = ev.clientY + 14;
        if (x + tip.offsetWidth > window.innerWidth - 8) x = ev.clientX - tip.offsetWidth - 14;
        if (y + tip.offsetHeight > window.innerHeight - 8) y = ev.clientY - tip.offsetHeight - 14;
        tip.style.left = x + "px"; tip.style.top = y + "px";
      });
      canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
    }
    hover(tl.canvas, function (x, y) { return tl.hit(x, y); });
    hover(plots.lat, function (x, y) { return plots.hitLatency(x, y); });
    hover(plots.thr, function (x) { return plots.hitThroughput(x); });
    window.addEventListener("resize", function () { view.schedule(); });
    if (d.focus && d.focus.auto) focus(); else view.whole();
    view.draw();  // the first view, synchronously, then mark it
    root.setAttribute("data-render-ms", performance.now().toFixed(1));
    root.setAttribute("data-rendered", "1");
    HR.report = { view: view, timeline: tl, plots: plots, data: d, cursor: tl.cursor };
  } catch (err) {
    fail(err);
  }
})();
