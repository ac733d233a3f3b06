/* msgbench report: draws every figure of the page from the JSON embedded in it.
 * The JSON is read with JSON.parse from the element's text and handed to plot.js,
 * which puts results text into the page with textContent only. */
(function () {
  'use strict';
  var source = document.getElementById('msgbench-data');
  var data = JSON.parse(source.textContent);
  var nodes = document.querySelectorAll('[data-figure]');
  var failed = 0;
  Array.prototype.forEach.call(nodes, function (node) {
    var figure = data.figures[node.getAttribute('data-figure')];
    try {
      MsgPlot.draw(node, figure);
    } catch (err) {
      failed += 1;
      node.textContent = 'This figure could not be drawn: ' + err.message;
      node.setAttribute('data-error', 'true');
    }
  });
  document.body.setAttribute('data-rendered', failed ? 'with-errors' : 'true');
})();
