// The results index: filter the table of runs as you type (every word must match).
"use strict";
(function () {
  var input = document.getElementById("filter"), rows = document.querySelectorAll("#runs tbody tr");
  var count = document.getElementById("shown");
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      row.hidden = !ok; shown += ok ? 1 : 0;
    });
    count.textContent = shown + " of " + rows.length + " runs";
  }
  input.addEventListener("input", apply);
  apply();
  document.documentElement.setAttribute("data-rendered", "1");
})();
