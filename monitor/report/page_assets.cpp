#include "page_assets.hpp"

namespace ddp::monitor {

const char* const kPageStyle = R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; color: #222; margin: 24px auto; max-width: 1000px; padding: 0 12px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 3px 10px 3px 0; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.nodes th { border-bottom: 1px solid #999; }
table.nodes tr.flagged td { background: #fff4e5; }
.idle { color: #d62728; }
.slow { color: #c45f00; }
.flags li { margin: 2px 0; }
figure.chart { margin: 16px 0 24px; }
figcaption { font-weight: 600; margin-bottom: 2px; }
.unit { font-weight: normal; color: #666; }
svg { width: 100%; height: auto; display: block; }
svg text { font-size: 11px; fill: #555; }
svg .ylabel { text-anchor: end; }
svg .xlabel { text-anchor: middle; }
svg .xlabel.last { text-anchor: end; }
svg .xcaption { text-anchor: start; fill: #888; }
svg .grid { stroke: #e4e4e4; }
svg .tick { stroke: #999; }
svg .series path { fill: none; stroke-width: 1.6; stroke-linejoin: round; stroke-linecap: round; }
svg .series.line.idle path, svg .series.line.slow path { stroke-width: 2.4; }
svg .series.line.slow path { stroke-dasharray: 7 3; }
svg .band.outer path { fill: #dbe9f6; stroke: none; }
svg .band.inner path { fill: #9ec2e6; stroke: none; }
svg .median path { stroke: #1f4e8c; stroke-width: 2; }
svg .cursor { stroke: #222; stroke-width: 1; }
.readout { min-height: 1.4em; font-size: 12px; color: #333; }
ul.legend { list-style: none; padding: 0; margin: 4px 0; display: flex; flex-wrap: wrap; gap: 2px 18px; font-size: 12px; }
.swatch { display: inline-block; width: 14px; height: 4px; margin: 0 6px 3px 0; vertical-align: middle; }
.swatch.outer { background: #dbe9f6; height: 10px; }
.swatch.inner { background: #9ec2e6; height: 10px; }
.swatch.median { background: #1f4e8c; }
footer { margin-top: 32px; color: #777; font-size: 12px; }
)CSS";

const char* const kPageScript = R"JS(
(function () {
  "use strict";
  window.addEventListener("error", function (e) { document.body.dataset.error = String(e.message); });
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  function show(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit === "B/s") {
      var u = 0;
      while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
      return (u ? v.toFixed(1) : v.toFixed(0)) + " " + units[u] + "/s";
    }
    return (unit === "GiB" ? v.toFixed(1) : v.toFixed(0)) + (unit === "%" ? "%" : " " + unit);
  }
  function when(t) {
    if (t < 120) return t.toFixed(1) + " s";
    if (t < 7200) return (t / 60).toFixed(1) + " min";
    return (t / 3600).toFixed(2) + " h";
  }
  var wired = 0;
  data.charts.forEach(function (c) {
    var fig = document.getElementById(c.figure);
    var svg = fig.querySelector("svg"), cursor = fig.querySelector(".cursor");
    var out = fig.querySelector(".readout");
    var plot = data.plot;
    svg.addEventListener("mousemove", function (e) {
      var box = svg.getBoundingClientRect();
      var x = (e.clientX - box.left) / box.width * plot.width;
      if (x < plot.left || x > plot.right) return;
      var t = (x - plot.left) / (plot.right - plot.left) * c.span;
      var bin = Math.min(c.bins - 1, Math.floor(t / c.bin_seconds));
      var middle = Math.min(1, (bin + 0.5) * c.bin_seconds / c.span);
      var cx = plot.left + (plot.right - plot.left) * middle;
      cursor.setAttribute("x1", cx);
      cursor.setAttribute("x2", cx);
      cursor.setAttribute("visibility", "visible");
      out.textContent = "at " + when((bin + 0.5) * c.bin_seconds) + ": " + c.series.map(function (s) {
        return s.label + " " + show(s.values[bin], c.unit);
      }).join(", ");
    });
    svg.addEventListener("mouseleave", function () {
      cursor.setAttribute("visibility", "hidden");
      out.textContent = "";
    });
    wired++;
  });
  document.body.dataset.ready = String(wired);
})();
)JS";

}  // namespace ddp::monitor
