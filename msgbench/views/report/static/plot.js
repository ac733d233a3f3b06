/* msgbench plot: a small SVG charting module without dependencies.
 *
 * MsgPlot.draw(container, figure) draws one figure description as written by
 * msgbench/views/report/figures.py: "xy" (lines with markers and error bars, or grouped
 * bars; linear, log or category axes; an optional second y axis) or "heatmap".
 * A legend entry hides its trace when clicked; "Fill screen" gives one chart the
 * whole window; hovering a point shows its numbers.
 *
 * Results text (labels, titles, notes) only ever reaches the page through
 * textContent and setAttribute: nothing here parses data as markup.
 */
(function (root) {
  'use strict';

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b',
    '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  var MARKERS = ['circle', 'square', 'triangle', 'diamond'];
  // Line patterns by name (figures.py SOURCE_LINES and METRIC_LINES).
  var DASHES = {solid: 'none', dotted: '2 3', dashdot: '8 3 2 3', longdash: '12 4', dashed: '6 4'};
  var HEAT = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];  // viridis stops
  var STRIP = 18;  // px at the bottom of the plot area where n/a and failed points sit
  var colours = {};  // label -> colour, so a target keeps its colour in every chart
  var charts = [];

  // ------------------------------------------------------------ DOM helpers

  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (parent) parent.appendChild(node);
    return node;
  }

  function html(tag, className, parent, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  function svgText(parent, x, y, text, attrs) {
    var node = svg('text', Object.assign({x: x, y: y}, attrs || {}), parent);
    node.textContent = String(text);
    return node;
  }

  function colourFor(label) {
    if (!(label in colours)) {
      colours[label] = PALETTE[Object.keys(colours).length % PALETTE.length];
    }
    return colours[label];
  }

  // ------------------------------------------------------------ numbers

  function isNum(v) { return typeof v === 'number' && isFinite(v); }

  function trim(v) { return String(parseFloat(v.toPrecision(3))); }

  /* 1,400%: relative views are read as percentages, never as 1.4k. */
  function formatPercent(v) {
    if (!isNum(v)) return '';
    return (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : trim(v)) + '%';
  }

  function tickFormat(axis) {
    return axis && axis.format === 'percent' ? formatPercent : formatSI;
  }

  /* 12.3M, 450k, 1.5, 0.002: short numbers for ticks and cells. */
  function formatSI(v) {
    if (!isNum(v)) return '';
    var a = Math.abs(v);
    var units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][0]) return trim(v / units[i][0]) + units[i][1];
    }
    if (a === 0) return '0';
    if (a < 0.001) return v.toExponential(1);
    return trim(v);
  }

  /* Tooltip numbers: every significant digit people care about. */
  function formatFull(v) {
    if (!isNum(v)) return '';
    if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
    return String(parseFloat(v.toPrecision(4)));
  }

  function statusText(status) {
    if (status === 'unsupported') return 'n/a';
    if (status === 'missing') return '';
    return 'failed';
  }

  function compareX(a, b) {
    if (isNum(a) && isNum(b)) return a - b;
    if (isNum(a)) return -1;
    if (isNum(b)) return 1;
    return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  }

  // ------------------------------------------------------------ scales

  function niceStep(span, count) {
    var raw = span / Math.max(1, count);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  }

  function linearScale(lo, hi, r0, r1, tickCount) {
    if (lo === hi) { lo = lo === 0 ? 0 : lo - Math.abs(lo) * 0.1; hi = hi === 0 ? 1 : hi + Math.abs(hi) * 0.1; }
    var step = niceStep(hi - lo, tickCount);
    lo = Math.floor(lo / step + 1e-9) * step;
    hi = Math.ceil(hi / step - 1e-9) * step;
    var ticks = [];
    for (var v = lo; v <= hi + step / 2; v += step) ticks.push(Math.abs(v) < step / 1e6 ? 0 : v);
    return {
      kind: 'linear', lo: lo, hi: hi, ticks: ticks,
      map: function (v) { return r0 + (v - lo) / (hi - lo) * (r1 - r0); }
    };
  }

  function logScale(lo, hi, r0, r1) {
    var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
    if (a === b) b = a + 1;
    var ticks = [];
    for (var e = a; e <= b; e++) {
      ticks.push(Math.pow(10, e));
      if (b - a <= 2 && e < b) { ticks.push(2 * Math.pow(10, e)); ticks.push(5 * Math.pow(10, e)); }
    }
    return {
      kind: 'log', lo: Math.pow(10, a), hi: Math.pow(10, b), ticks: ticks,
      map: function (v) { return r0 + (Math.log10(v) - a) / (b - a) * (r1 - r0); }
    };
  }

  function categoryScale(values, r0, r1) {
    var step = (r1 - r0) / Math.max(1, values.length);
    var index = new Map();
    values.forEach(function (v, i) { index.set(String(v), i); });
    return {
      kind: 'category', ticks: values, step: step,
      map: function (v) { return r0 + step * (index.get(String(v)) + 0.5); }
    };
  }

  function valueScale(kind, values, r0, r1, tickCount, zero) {
    var nums = values.filter(function (v) { return isNum(v) && (kind !== 'log' || v > 0); });
    if (!nums.length) return linearScale(0, 1, r0, r1, tickCount);
    var lo = Math.min.apply(null, nums), hi = Math.max.apply(null, nums);
    if (kind === 'log') return logScale(lo, hi, r0, r1);
    if (zero) { lo = Math.min(0, lo); hi = Math.max(0, hi); }
    return linearScale(lo, hi, r0, r1, tickCount);
  }

  // ------------------------------------------------------------ chart frame

  /* The frame around every chart: title, fill-screen button, canvas, legend, note. */
  function Chart(container, figure, options) {
    this.container = container;
    this.figure = figure;
    this.options = options || {};
    this.hidden = new Set();
    this.full = false;
    container.textContent = '';
    var frame = this.frame = html('div', 'msgplot', container);
    frame.setAttribute('data-figure-id', figure.id || '');
    frame.setAttribute('data-kind', figure.kind);
    var head = html('div', 'msgplot-head', frame);
    html('div', 'msgplot-title', head, figure.title || '');
    var button = this.fillButton = html('button', 'msgplot-fill', head, 'Fill screen');
    button.type = 'button';
    var self = this;
    button.addEventListener('click', function () { self.setFull(!self.full); });
    if (figure.subtitle) html('div', 'msgplot-subtitle', frame, figure.subtitle);
    this.canvas = html('div', 'msgplot-canvas', frame);
    this.tip = html('div', 'msgplot-tip', null);
    this.legend = html('ul', 'msgplot-legend', frame);
    if (figure.note) html('div', 'msgplot-note', frame, figure.note);
    this.render();
    charts.push(this);
  }

  Chart.prototype.setFull = function (full) {
    this.full = full;
    this.frame.classList.toggle('msgplot-full', full);
    this.fillButton.textContent = full ? 'Exit full screen' : 'Fill screen';
    document.body.classList.toggle('msgplot-has-full', full);
    this.render();
  };

  Chart.prototype.toggle = function (index) {
    if (this.hidden.has(index)) this.hidden.delete(index); else this.hidden.add(index);
    this.render();
  };

  Chart.prototype.size = function () {
    if (this.full) {  // the window less the title, legend and note around the canvas
      var around = 0, canvas = this.canvas;
      Array.prototype.forEach.call(this.frame.children, function (child) {
        if (child !== canvas) around += child.offsetHeight;
      });
      return {w: Math.max(320, window.innerWidth - 44), h: Math.max(240, window.innerHeight - around - 56)};
    }
    var w = this.canvas.clientWidth || this.frame.clientWidth || 720;
    return {w: Math.max(320, w), h: this.options.height || 360};
  };

  Chart.prototype.render = function () {
    this.canvas.textContent = '';
    this.canvas.appendChild(this.tip);
    this.tip.style.display = 'none';
    var size = this.size();
    var root = svg('svg', {width: size.w, height: size.h, viewBox: '0 0 ' + size.w + ' ' + size.h,
      role: 'img', 'class': 'msgplot-svg'}, this.canvas);
    var title = svg('title', {}, root);
    title.textContent = this.figure.title || '';
    if (this.figure.kind === 'heatmap') drawHeatmap(this, root, size);
    else drawXY(this, root, size);
  };

  Chart.prototype.showTip = function (event, lines) {
    var tip = this.tip;
    tip.textContent = '';
    lines.filter(Boolean).forEach(function (line, i) { html('div', i ? '' : 'msgplot-tip-head', tip, line); });
    tip.style.display = 'block';
    var box = this.canvas.getBoundingClientRect();
    var x = event.clientX - box.left + 12, y = event.clientY - box.top + 12;
    if (x + tip.offsetWidth > box.width) x = Math.max(0, x - tip.offsetWidth - 24);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  };

  Chart.prototype.hideTip = function () { this.tip.style.display = 'none'; };

  Chart.prototype.hover = function (node, lines) {
    var self = this;
    node.addEventListener('mouseenter', function (e) { self.showTip(e, lines); });
    node.addEventListener('mousemove', function (e) { self.showTip(e, lines); });
    node.addEventListener('mouseleave', function () { self.hideTip(); });
  };

  /* A legend swatch shows what the line looks like: its colour, dash and marker. */
  function swatch(parent, entry) {
    var box = svg('svg', {width: 30, height: 12, 'class': 'msgplot-swatch', 'aria-hidden': 'true'}, parent);
    if (!entry.marker) {  // bars
      svg('rect', {x: 8, y: 1, width: 14, height: 10, fill: entry.colour}, box);
      return;
    }
    if (entry.line !== 'none') {
      svg('line', {x1: 1, x2: 29, y1: 6, y2: 6, stroke: entry.colour, 'stroke-width': 2,
        'stroke-dasharray': DASHES[entry.line] || 'none'}, box);
    }
    if (entry.marker === 'ring') {  // drawMarker's ring is sized to circle a point: too big here
      svg('circle', {cx: 15, cy: 6, r: 4.5, fill: 'none', stroke: entry.colour, 'stroke-width': 2}, box);
      return;
    }
    drawMarker(box, entry.marker, 15, 6, entry.colour);
  }

  /* Entries grouped by source (run or build) when the chart holds several: the groups
   * say which marker and dash belong to which run. */
  Chart.prototype.drawLegend = function (entries) {
    var self = this;
    this.legend.textContent = '';
    var sources = [];
    entries.forEach(function (e) { if (sources.indexOf(e.source) < 0) sources.push(e.source); });
    var grouped = sources.length > 1;
    this.legend.classList.toggle('msgplot-legend-grouped', grouped);
    sources.forEach(function (source) {
      var list = self.legend;
      if (grouped) {
        var group = html('li', 'msgplot-legend-group', self.legend);
        group.setAttribute('data-source', source);
        html('div', 'msgplot-legend-source', group, source || '(this run)');
        list = html('ul', 'msgplot-legend-items', group);
      }
      entries.forEach(function (entry) {
        if (entry.source !== source) return;
        // Under its source's heading an entry need not repeat the source in its label.
        var shown = grouped && source && entry.label.indexOf(source + ' ') === 0
          ? entry.label.slice(source.length + 1) : entry.label;
        self.legendEntry(list, Object.assign({}, entry, {shown: shown}));
      });
    });
  };

  Chart.prototype.legendEntry = function (list, entry) {
    var self = this;
    (function () {
      var item = html('li', self.hidden.has(entry.index) ? 'msgplot-off' : '', list);
      var button = html('button', 'msgplot-legend-entry', item);
      button.type = 'button';
      button.setAttribute('data-index', entry.index);
      button.setAttribute('aria-pressed', self.hidden.has(entry.index) ? 'false' : 'true');
      button.title = 'click to hide or show this line';
      swatch(button, entry);
      html('span', 'msgplot-label', button, entry.shown || entry.label);
      button.setAttribute('aria-label', entry.label);
      button.addEventListener('click', function () { self.toggle(entry.index); });
    })();
  };

  // ------------------------------------------------------------ xy charts

  function xValues(traces) {
    var seen = new Map();
    traces.forEach(function (t) { t.x.forEach(function (x) { seen.set(String(x), x); }); });
    return Array.from(seen.values()).sort(compareX);
  }

  function drawXY(chart, root, size) {
    var fig = chart.figure;
    var traces = fig.x.scale === 'series' ? bySeries(fig.traces || []) : (fig.traces || []);
    var visible = traces.filter(function (t, i) { return !chart.hidden.has(i); });
    var hasY2 = !!fig.y2 && traces.some(function (t) { return t.axis === 'y2'; });
    var m = {l: 72, r: hasY2 ? 72 : 16, t: 12, b: 48};
    var px0 = m.l, px1 = size.w - m.r, py0 = m.t, py1 = size.h - m.b;
    var xs = fig.x.scale === 'series' ? seriesNames(traces) : xValues(traces);
    var bars = !!fig.bars;
    var xKind = bars || fig.x.scale === 'series' ? 'category' : (fig.x.scale || 'linear');
    if (xKind !== 'category' && !xs.every(isNum)) xKind = 'category';
    var xScale = xKind === 'category' ? categoryScale(xs, px0, px1)
      : valueScale(xKind, xs, px0 + 8, px1 - 8, Math.max(2, Math.floor((px1 - px0) / 90)), false);
    if (fig.x.ticks === 'data' && xKind !== 'category') xScale.ticks = xs;

    function axisValues(axis) {
      var out = [];
      visible.forEach(function (t) {
        if ((t.axis || 'y') !== axis) return;
        t.y.forEach(function (v, i) {
          if (t.status && t.status[i] !== 'ok') return;
          out.push(v);
          if (t.lo && isNum(t.lo[i])) out.push(t.lo[i]);
          if (t.hi && isNum(t.hi[i])) out.push(t.hi[i]);
        });
      });
      var axisFig = axis === 'y' ? fig.y : fig.y2;
      if (axisFig && axisFig.range && out.length) out = out.concat(axisFig.range);  // facets share it
      return out;
    }
    var yTicks = Math.max(2, Math.floor((py1 - py0) / 50));
    var yScale = valueScale(fig.y.scale, axisValues('y'), py1 - STRIP, py0, yTicks, true);
    var y2Scale = hasY2 ? valueScale(fig.y2.scale, axisValues('y2'), py1 - STRIP, py0, yTicks, true) : null;

    drawAxes(root, fig, xScale, yScale, y2Scale, {x0: px0, x1: px1, y0: py0, y1: py1}, size);
    var plot = svg('g', {'class': 'msgplot-plot'}, root);
    var legend = [];
    var barSlots = visible.length;
    var slot = 0;
    chart.noValueSlots = noValueSlots(traces, chart.hidden);
    traces.forEach(function (t, index) {
      var colour = t.colour || colourFor(t.colour_key || t.label);
      legend.push({index: index, label: t.label + (t.axis === 'y2' ? ' (right axis)' : ''), colour: colour,
        marker: bars ? null : (t.marker || MARKERS[index % MARKERS.length]), line: lineOf(t), source: t.source || ''});
      if (chart.hidden.has(index)) return;
      var scale = t.axis === 'y2' ? y2Scale : yScale;
      t.__index = index;
      var g = svg('g', {'class': 'msgplot-trace', 'data-label': t.label, 'data-index': index,
        'data-colour': colour, 'data-marker': t.marker || '', 'data-line': lineOf(t), 'data-source': t.source || ''}, plot);
      if (bars) drawBars(chart, g, t, index, xScale, scale, colour, slot++, barSlots, py1);
      else drawLine(chart, g, t, index, xScale, scale, colour, py1);
    });
    chart.drawLegend(legend);
    if (!axisValues('y').concat(axisValues('y2')).some(isNum)) {
      svgText(root, (px0 + px1) / 2, (py0 + py1) / 2, visible.length
        ? 'no numbers to plot: every point is n/a or failed' : 'every line is hidden',
        {'text-anchor': 'middle', 'class': 'msgplot-empty'});
    }
  }

  /* A chart of one x value (figures.SERIES_SCALE): each trace at its series' category,
   * the traces of one series (sent, received; p50, p99) side by side within it. */
  function seriesNames(traces) {
    var names = [];
    traces.forEach(function (t) { if (names.indexOf(t.x[0]) < 0) names.push(t.x[0]); });
    return names;
  }

  function bySeries(traces) {
    var count = new Map(), slot = [];
    traces.forEach(function (t) {
      var name = t.series || t.label;
      slot.push(count.get(name) || 0);
      count.set(name, (count.get(name) || 0) + 1);
    });
    return traces.map(function (t, i) {
      var name = t.series || t.label, n = count.get(name);
      return Object.assign({}, t, {x: t.x.map(function () { return name; }), at: t.x,
        offset: n > 1 ? (slot[i] - (n - 1) / 2) * 0.7 / n : 0});
    });
  }

  /* Where several traces have no number at one x, their marks sit side by side. */
  function noValueSlots(traces, hidden) {
    var perX = new Map(), slots = new Map();
    traces.forEach(function (t, index) {
      if (hidden.has(index)) return;
      t.x.forEach(function (x, i) {
        if (!t.status || t.status[i] === 'ok' || t.status[i] === 'missing') return;
        var key = String(x);
        if (!perX.has(key)) perX.set(key, []);
        perX.get(key).push(index);
      });
    });
    perX.forEach(function (indexes, key) {
      indexes.forEach(function (index, k) {
        slots.set(index + '|' + key, (k - (indexes.length - 1) / 2) * 20);
      });
    });
    return slots;
  }

  function drawAxes(root, fig, xScale, yScale, y2Scale, box, size) {
    var axes = svg('g', {'class': 'msgplot-axes'}, root);
    svg('rect', {x: box.x0, y: box.y0, width: box.x1 - box.x0, height: box.y1 - box.y0,
      'class': 'msgplot-area'}, axes);
    yScale.ticks.forEach(function (v) {
      var y = yScale.map(v);
      if (y < box.y0 - 1 || y > box.y1) return;
      svg('line', {x1: box.x0, x2: box.x1, y1: y, y2: y, 'class': 'msgplot-grid'}, axes);
      svgText(axes, box.x0 - 6, y + 4, tickFormat(fig.y)(v), {'text-anchor': 'end', 'class': 'msgplot-tick'});
    });
    if (y2Scale) {
      y2Scale.ticks.forEach(function (v) {
        var y = y2Scale.map(v);
        if (y < box.y0 - 1 || y > box.y1) return;
        svgText(axes, box.x1 + 6, y + 4, tickFormat(fig.y2)(v), {'class': 'msgplot-tick'});
      });
      var r = svgText(axes, 0, 0, fig.y2.label || '', {'text-anchor': 'middle', 'class': 'msgplot-axis-label',
        transform: 'translate(' + (size.w - 14) + ',' + ((box.y0 + box.y1) / 2) + ') rotate(90)'});
      r.setAttribute('data-axis', 'y2');
    }
    var last = -Infinity;
    xScale.ticks.forEach(function (v) {
      var x = xScale.map(v);
      if (x < box.x0 - 1 || x > box.x1 + 1) return;
      svg('line', {x1: x, x2: x, y1: box.y1, y2: box.y1 + 4, 'class': 'msgplot-axis'}, axes);
      var label = isNum(v) ? formatSI(v) : String(v);
      // A series name breaks after its target ("rabbitmq/" over "default") to fit its slot.
      var lines = fig.x.scale === 'series' ? label.replace(/\/| \[/g, function (m) { return m + '\n'; })
        .split('\n') : [label];
      var widest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
      if (fig.x.scale === 'series' && xScale.step < widest * 6.5 + 6) {  // redis_/benchmark
        lines = [].concat.apply([], lines.map(function (l) { return l.replace(/_/g, '_\n').split('\n'); }));
        widest = Math.max.apply(null, lines.map(function (l) { return l.length; }));
      }
      if (x - last < widest * 6.5 + 6) return;  // skip labels that would overlap
      last = x;
      lines.forEach(function (line, k) {
        svgText(axes, x, box.y1 + 18 + 12 * k, line, {'text-anchor': 'middle', 'class': 'msgplot-tick'});
      });
    });
    svg('line', {x1: box.x0, x2: box.x1, y1: box.y1, y2: box.y1, 'class': 'msgplot-axis'}, axes);
    svg('line', {x1: box.x0, x2: box.x0, y1: box.y0, y2: box.y1, 'class': 'msgplot-axis'}, axes);
    svg('line', {x1: box.x0, x2: box.x1, y1: box.y1 - STRIP, y2: box.y1 - STRIP, 'class': 'msgplot-strip'}, axes);
    svgText(axes, (box.x0 + box.x1) / 2, size.h - 8, (fig.x.label || '') +
      (xScale.kind === 'log' ? ' (log scale)' : ''), {'text-anchor': 'middle', 'class': 'msgplot-axis-label'});
    svgText(axes, 0, 0, (fig.y.label || '') + (yScale.kind === 'log' ? ' (log scale)' : ''),
      {'text-anchor': 'middle', 'class': 'msgplot-axis-label',
        transform: 'translate(14,' + ((box.y0 + box.y1) / 2) + ') rotate(-90)'});
  }

  function pointLines(t, i, fig) {
    var x = t.at ? t.at[i] : t.x[i];  // a one-x chart's category is the series; say the x
    var xText = t.at ? (fig.subtitle || '') : (fig.x.label || 'x') + ' = ' + (isNum(x) ? formatFull(x) : String(x));
    if (t.status && t.status[i] !== 'ok') {
      return [t.label, xText, statusText(t.status[i]) + (t.status[i] === 'unsupported' || t.status[i] === 'failed'
        ? '' : ' (' + t.status[i] + ')'), t.note && t.note[i]];
    }
    var shown = fig.y.format === 'percent' ? formatPercent(t.y[i]) : formatFull(t.y[i]);
    var lines = [t.label, xText, (fig.y.label || 'y') + ' = ' + shown];
    if (t.lo && isNum(t.lo[i]) && isNum(t.hi[i])) {
      lines.push('min–max ' + formatFull(t.lo[i]) + ' – ' + formatFull(t.hi[i]) +
        (t.n && t.n[i] ? ' (' + t.n[i] + ' repetitions)' : ''));
    }
    if (t.note && t.note[i]) lines.push(t.note[i]);
    return lines;
  }

  function drawMarker(g, shape, x, y, colour) {
    var r = 4;
    if (shape === 'ring') return svg('circle', {cx: x, cy: y, r: r + 3, fill: 'none', stroke: colour, 'stroke-width': 2}, g);
    if (shape === 'square') return svg('rect', {x: x - r, y: y - r, width: 2 * r, height: 2 * r, fill: colour}, g);
    if (shape === 'triangle') {
      return svg('path', {d: 'M' + x + ',' + (y - r - 1) + 'L' + (x + r + 1) + ',' + (y + r) + 'L' + (x - r - 1) + ',' + (y + r) + 'Z', fill: colour}, g);
    }
    if (shape === 'diamond') {
      return svg('path', {d: 'M' + x + ',' + (y - r - 1) + 'L' + (x + r + 1) + ',' + y + 'L' + x + ',' + (y + r + 1) + 'L' + (x - r - 1) + ',' + y + 'Z', fill: colour}, g);
    }
    if (shape === 'star') {  // a reference tool: its system's colour, a mark no system has
      var d = '';
      for (var k = 0; k < 10; k++) {
        var a = Math.PI / 5 * k - Math.PI / 2, rr = k % 2 ? r * 0.5 : r + 2.5;
        d += (k ? 'L' : 'M') + (x + rr * Math.cos(a)) + ',' + (y + rr * Math.sin(a));
      }
      return svg('path', {d: d + 'Z', fill: colour, stroke: '#222', 'stroke-width': 0.6}, g);
    }
    return svg('circle', {cx: x, cy: y, r: r, fill: colour}, g);
  }

  /* A point without a number sits in the strip above the x axis: "n/a" or a cross. */
  function drawNoValue(chart, g, t, i, x, bottom, colour) {
    var status = t.status[i];
    if (status === 'missing') return;
    var y = bottom - STRIP / 2;
    if (chart.noValueSlots) x += chart.noValueSlots.get(t.__index + '|' + String(t.x[i])) || 0;
    var mark = svg('g', {'class': 'msgplot-novalue', 'data-status': status, 'data-x': String(t.x[i])}, g);
    if (status === 'unsupported') {
      svgText(mark, x, y + 4, 'n/a', {'text-anchor': 'middle', fill: colour, 'class': 'msgplot-na'});
    } else {
      svg('path', {d: 'M' + (x - 4) + ',' + (y - 4) + 'L' + (x + 4) + ',' + (y + 4) + 'M' + (x - 4) + ',' + (y + 4) + 'L' + (x + 4) + ',' + (y - 4),
        stroke: colour, 'stroke-width': 2.5, 'class': 'msgplot-failed'}, mark);
    }
    svg('rect', {x: x - 9, y: y - 8, width: 18, height: 16, fill: 'transparent'}, mark);
    chart.hover(mark, pointLines(t, i, chart.figure));
  }

  function drawErrorBar(g, x, lo, hi, scale, colour) {
    if (!isNum(lo) || !isNum(hi) || (scale.kind === 'log' && (lo <= 0 || hi <= 0))) return;
    var y0 = scale.map(lo), y1 = scale.map(hi);
    svg('path', {d: 'M' + x + ',' + y0 + 'L' + x + ',' + y1 + 'M' + (x - 4) + ',' + y0 + 'L' + (x + 4) + ',' + y0 +
      'M' + (x - 4) + ',' + y1 + 'L' + (x + 4) + ',' + y1, stroke: colour, 'class': 'msgplot-errorbar'}, g);
  }

  function okAt(t, i, scale) {
    var ok = (!t.status || t.status[i] === 'ok') && isNum(t.y[i]);
    return ok && !(scale.kind === 'log' && t.y[i] <= 0);
  }

  function lineOf(t) { return t.line || (t.dash ? 'dashed' : 'solid'); }

  function drawLine(chart, g, t, index, xScale, scale, colour, bottom) {
    var order = t.x.map(function (x, i) { return i; }).sort(function (a, b) { return compareX(t.x[a], t.x[b]); });
    var d = '', pen = false;
    order.forEach(function (i) {
      if (!okAt(t, i, scale)) { pen = false; return; }  // a gap, never a dip to zero
      d += (pen ? 'L' : 'M') + xScale.map(t.x[i]) + ',' + scale.map(t.y[i]);
      pen = true;
    });
    if (d && lineOf(t) !== 'none') {  // 'none': marks only (history's step changes)
      svg('path', {d: d, fill: 'none', stroke: colour, 'stroke-width': 2, 'class': 'msgplot-line',
        'stroke-dasharray': DASHES[lineOf(t)] || 'none'}, g);
    }
    var shape = t.marker || MARKERS[index % MARKERS.length];
    var shift = (t.offset || 0) * (xScale.step || 0);
    order.forEach(function (i) {
      var x = xScale.map(t.x[i]) + shift;
      if (!okAt(t, i, scale)) { drawNoValue(chart, g, t, i, x, bottom, colour); return; }
      var y = scale.map(t.y[i]);
      if (t.lo && t.hi) drawErrorBar(g, x, t.lo[i], t.hi[i], scale, colour);
      var marker = drawMarker(g, shape, x, y, colour);
      marker.setAttribute('class', 'msgplot-point');
      marker.setAttribute('data-x', String(t.x[i]));
      marker.setAttribute('data-y', String(t.y[i]));
      chart.hover(marker, pointLines(t, i, chart.figure));
    });
  }

  function drawBars(chart, g, t, index, xScale, scale, colour, slot, slots, bottom) {
    var group = xScale.step * 0.8;
    var width = group / Math.max(1, slots);
    var base = scale.kind === 'log' ? scale.lo : 0;
    t.x.forEach(function (xv, i) {
      var x = xScale.map(xv) - group / 2 + slot * width;
      if (!okAt(t, i, scale)) { drawNoValue(chart, g, t, i, x + width / 2, bottom, colour); return; }
      var y = scale.map(t.y[i]), y0 = scale.map(base);
      var bar = svg('rect', {x: x + 1, y: Math.min(y, y0), width: Math.max(1, width - 2),
        height: Math.abs(y0 - y), fill: colour, 'class': 'msgplot-point msgplot-bar'}, g);
      bar.setAttribute('data-x', String(xv));
      bar.setAttribute('data-y', String(t.y[i]));
      if (t.lo && t.hi) drawErrorBar(g, x + width / 2, t.lo[i], t.hi[i], scale, '#333');
      chart.hover(bar, pointLines(t, i, chart.figure));
    });
  }

  // ------------------------------------------------------------ heatmaps

  function mix(a, b, f) {
    var pa = parseInt(a.slice(1), 16), pb = parseInt(b.slice(1), 16);
    var out = [16, 8, 0].map(function (shift) {
      var ca = (pa >> shift) & 255, cb = (pb >> shift) & 255;
      return Math.round(ca + (cb - ca) * f);
    });
    return 'rgb(' + out.join(',') + ')';
  }

  function heatColour(f) {
    f = Math.max(0, Math.min(1, f));
    var pos = f * (HEAT.length - 1), i = Math.min(HEAT.length - 2, Math.floor(pos));
    return mix(HEAT[i], HEAT[i + 1], pos - i);
  }

  function drawHeatmap(chart, root, size) {
    var fig = chart.figure;
    var cols = fig.x.values, rows = fig.y.values;
    var m = {l: 90, r: 90, t: 12, b: 48};
    if (!chart.full) {  // compact cells unless the chart fills the screen
      size.w = Math.min(size.w, m.l + m.r + 130 * cols.length);
      size.h = m.t + m.b + 30 * rows.length;
      root.setAttribute('width', size.w);
      root.setAttribute('height', size.h);
      root.setAttribute('viewBox', '0 0 ' + size.w + ' ' + size.h);
    }
    var cw = (size.w - m.l - m.r) / Math.max(1, cols.length);
    var ch = (size.h - m.t - m.b) / Math.max(1, rows.length);
    var nums = [];
    fig.z.forEach(function (row) { row.forEach(function (v) { if (isNum(v) && (fig.scale !== 'log' || v > 0)) nums.push(v); }); });
    // A range shared by the heatmaps of one comparison keeps their colours comparable.
    if (fig.z_range && isNum(fig.z_range[0]) && isNum(fig.z_range[1])) nums = nums.concat(fig.z_range);
    var lo = nums.length ? Math.min.apply(null, nums) : 0, hi = nums.length ? Math.max.apply(null, nums) : 1;
    function frac(v) {
      if (hi === lo) return 0.5;
      return fig.scale === 'log' ? (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) : (v - lo) / (hi - lo);
    }
    var g = svg('g', {'class': 'msgplot-heatmap'}, root);
    rows.forEach(function (rv, r) {
      svgText(g, m.l - 6, m.t + ch * (r + 0.5) + 4, formatFull(rv), {'text-anchor': 'end', 'class': 'msgplot-tick'});
      cols.forEach(function (cv, c) {
        var v = fig.z[r][c], status = fig.status[r][c];
        var x = m.l + c * cw, y = m.t + r * ch;
        var ok = status === 'ok' && isNum(v);
        var f = ok ? frac(v) : 0;
        var cell = svg('rect', {x: x + 1, y: y + 1, width: Math.max(1, cw - 2), height: Math.max(1, ch - 2),
          fill: ok ? heatColour(f) : '#e8e8e8', 'class': 'msgplot-cell', 'data-status': status,
          'data-x': String(cv), 'data-y': String(rv), 'data-z': ok ? String(v) : ''}, g);
        var text = ok ? formatSI(v) : statusText(status);
        if (text) {
          svgText(g, x + cw / 2, y + ch / 2 + 4, text, {'text-anchor': 'middle',
            'class': 'msgplot-cell-text', fill: ok && f < 0.6 ? '#fff' : '#222'});
        }
        chart.hover(cell, [(fig.y.label || 'y') + ' = ' + formatFull(rv), (fig.x.label || 'x') + ' = ' + formatFull(cv),
          ok ? (fig.z_label || 'value') + ' = ' + formatFull(v) : statusText(status) || 'not measured']);
      });
    });
    cols.forEach(function (cv, c) {
      svgText(g, m.l + cw * (c + 0.5), size.h - m.b + 18, formatFull(cv), {'text-anchor': 'middle', 'class': 'msgplot-tick'});
    });
    svgText(g, m.l + (size.w - m.l - m.r) / 2, size.h - 8, fig.x.label || '', {'text-anchor': 'middle', 'class': 'msgplot-axis-label'});
    svgText(g, 0, 0, fig.y.label || '', {'text-anchor': 'middle', 'class': 'msgplot-axis-label',
      transform: 'translate(14,' + (m.t + (size.h - m.t - m.b) / 2) + ') rotate(-90)'});
    // The colour bar: lowest value at the bottom, highest at the top.
    var barX = size.w - m.r + 24, barH = size.h - m.t - m.b;
    var gradId = 'heat-' + (fig.id || 'fig') + '-' + Math.random().toString(36).slice(2, 8);
    var defs = svg('defs', {}, root);
    var grad = svg('linearGradient', {id: gradId, x1: 0, y1: 1, x2: 0, y2: 0}, defs);
    HEAT.forEach(function (c, i) { svg('stop', {offset: (i / (HEAT.length - 1) * 100) + '%', 'stop-color': c}, grad); });
    svg('rect', {x: barX, y: m.t, width: 14, height: barH, fill: 'url(#' + gradId + ')'}, g);
    if (nums.length) {
      svgText(g, barX + 18, m.t + 10, formatSI(hi), {'class': 'msgplot-tick'});
      svgText(g, barX + 18, m.t + barH, formatSI(lo), {'class': 'msgplot-tick'});
    }
    svgText(g, 0, 0, (fig.z_label || '') + (fig.scale === 'log' ? ' (log)' : ''), {'text-anchor': 'middle',
      'class': 'msgplot-axis-label', transform: 'translate(' + (size.w - 8) + ',' + (m.t + barH / 2) + ') rotate(90)'});
    chart.legend.textContent = '';
  }

  // ------------------------------------------------------------ page-wide

  function draw(container, figure, options) {
    return new Chart(container, figure, options);
  }

  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      charts = charts.filter(function (c) { return c.frame.isConnected; });
      charts.forEach(function (c) { c.render(); });
    }, 150);
  });
  document.addEventListener('keydown', function (e) {
    if (e.key !== 'Escape') return;
    charts.forEach(function (c) { if (c.full) c.setFull(false); });
  });

  root.MsgPlot = {draw: draw, formatSI: formatSI, formatFull: formatFull, formatPercent: formatPercent,
    statusText: statusText, compareX: compareX, colourFor: colourFor, isNum: isNum,
    MARKERS: MARKERS, SOURCE_LINES: ['solid', 'dotted', 'dashdot', 'longdash']};
})(window);
