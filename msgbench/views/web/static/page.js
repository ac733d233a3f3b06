/* msgbench results page: sources in, graphs out.
 *
 * Each paste, dropped file or stored run is sent to the server, which reads it
 * (msgbench JSON, CSV or the OTP page's format) and answers with graphs in one shape
 * (msgbench/views/web/shape.py). Graphs with the same key from several sources are one
 * scenario: their series are relabelled "<source name> <label>" (all but the first
 * source's, as the OTP page does) and drawn on the same axes, in the views the
 * options ask for. Text from the results only reaches the page through textContent.
 */
(function () {
  'use strict';

  var state = {sources: []};
  var VIEWS = ['throughput', 'more', 'less'];

  function $(id) { return document.getElementById(id); }

  function el(tag, className, parent, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (parent) parent.appendChild(node);
    return node;
  }

  function say(kind, text) {
    el('div', 'msg msg-' + kind, $('messages'), text);
  }

  function clearMessages() { $('messages').textContent = ''; }

  // ------------------------------------------------------------ reading sources

  function nextName() { return 'Ver: ' + (state.sources.length + 1); }

  function readText(text, name) {
    return fetch('/api/parse', {
      method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({text: text, name: name})
    }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(name + ': ' + ((body.error && body.error.message) || response.statusText));
        return body;
      });
    });
  }

  function addSource(source) {
    state.sources.push(source);
    var count = source.graphs.length;
    say('info', source.name + ': read ' + (source.format || '') + ', ' + count + ' graph' + (count === 1 ? '' : 's') + '.');
    render();
  }

  function addPaste() {
    clearMessages();
    var text = $('paste-text').value;
    if (!text.trim()) { say('error', 'Nothing to add: paste results into the box first.'); return Promise.resolve(); }
    return readText(text, nextName()).then(function (source) {
      $('paste-text').value = '';
      addSource(source);
    }, function (err) { say('error', err.message); });
  }

  function addFiles(files) {
    clearMessages();
    return Array.prototype.reduce.call(files, function (chain, file) {
      return chain.then(function () { return file.text(); })
        .then(function (text) { return readText(text, file.name); })
        .then(addSource, function (err) { say('error', err.message); });
    }, Promise.resolve());
  }

  function addStoredRun(id) {
    clearMessages();
    return fetch('/api/runs/' + encodeURIComponent(id)).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(id + ': ' + ((body.error && body.error.message) || response.statusText));
        addSource(body);
      });
    }).catch(function (err) { say('error', err.message); });
  }

  function loadStore() {
    var box = $('store-runs');
    fetch('/api/runs').then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
        return body;
      });
    }).then(function (runs) {
      box.textContent = '';
      if (!runs.length) { el('p', 'hint', box, 'No runs in the store yet.'); return; }
      var table = el('table', 'runs', box);
      var head = el('tr', '', el('thead', '', table));
      ['', 'run', 'started', 'suite', 'status', 'command'].forEach(function (h) { el('th', '', head, h); });
      var body = el('tbody', '', table);
      runs.forEach(function (run) {
        var row = el('tr', '', body);
        var button = el('button', 'add-run', el('td', '', row), 'Add');
        button.type = 'button';
        button.setAttribute('data-run-id', run.id);
        button.addEventListener('click', function () { addStoredRun(run.id); });
        el('td', 'id', row, run.id);
        el('td', '', row, run.created_at || '');
        el('td', '', row, run.suite || '');
        el('td', '', row, run.status || '');
        el('td', 'command', row, run.command || '');
      });
    }).catch(function (err) {
      box.textContent = '';
      el('p', 'hint', box, 'The store could not be listed: ' + err.message);
    });
  }

  // ------------------------------------------------------------ shaping

  /* Graphs with one key from every source, series relabelled where sources meet. */
  function mergeGraphs(sources, allMetrics) {
    var byKey = new Map();
    sources.forEach(function (source, si) {
      source.graphs.forEach(function (graph) {
        if (!allMetrics && !graph.primary) return;
        if (!byKey.has(graph.key)) byKey.set(graph.key, {graph: graph, parts: []});
        byKey.get(graph.key).parts.push({source: si, graph: graph});
      });
    });
    return Array.from(byKey.values()).map(function (entry) {
      var involved = [];
      entry.parts.forEach(function (p) { if (involved.indexOf(p.source) < 0) involved.push(p.source); });
      var used = new Set();
      var series = [];
      var origins = [];  // the sources of this graph's series: one marker and dash each
      // A graph of several metrics per series keeps its lines for the metrics (figures.style).
      var metricLines = entry.parts.some(function (p) { return p.graph.series.some(function (s) { return s.dash; }); });
      entry.parts.forEach(function (part) {
        part.graph.series.forEach(function (s) {
          var label = s.label;
          if (involved.length > 1 && part.source !== involved[0]) label = sources[part.source].name + ' ' + label;
          var unique = label;
          for (var k = 2; used.has(unique); k++) unique = label + ' #' + k;
          used.add(unique);
          var styled = {label: unique};
          if (involved.length > 1) {
            // Overlaid sources: the target keeps its colour; the source sets marker and dash.
            var origin = sources[part.source].name + (s.source ? ' ' + s.source : '');
            if (origins.indexOf(origin) < 0) origins.push(origin);
            var n = origins.indexOf(origin);
            styled.source = origin;
            styled.marker = MsgPlot.MARKERS[n % MsgPlot.MARKERS.length];
            styled.line = metricLines ? s.line : MsgPlot.SOURCE_LINES[n % MsgPlot.SOURCE_LINES.length];
          }
          series.push(Object.assign({}, s, styled));
        });
      });
      return Object.assign({}, entry.graph, {series: series, sources: involved.length});
    });
  }

  /* figures.auto_scale: y log from a decade of span (LOG_SPAN), x from two (X_LOG_SPAN). */
  function autoScale(values, span) {
    var nums = values.filter(MsgPlot.isNum);
    if (!nums.length || Math.min.apply(null, nums) <= 0) return 'linear';
    return Math.max.apply(null, nums) / Math.min.apply(null, nums) >= (span || 10) ? 'log' : 'linear';
  }

  function okValue(s, i) { return s.status[i] === 'ok' && MsgPlot.isNum(s.y[i]); }

  /* % more than worst / % less than best at each x, the direction taken from `better`. */
  function relative(graph, which) {
    var lowerIsBetter = graph.better === 'lower';
    var atX = new Map();
    graph.series.forEach(function (s) {
      s.x.forEach(function (x, i) {
        if (!okValue(s, i)) return;
        var key = String(x);
        if (!atX.has(key)) atX.set(key, []);
        atX.get(key).push(s.y[i]);
      });
    });
    return graph.series.map(function (s) {
      var y = s.x.map(function (x, i) {
        if (!okValue(s, i)) return null;
        var values = atX.get(String(x));
        var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
        var v = s.y[i];
        if (which === 'more') {  // how much better than the worst at this x
          return lowerIsBetter ? (v > 0 ? (hi / v - 1) * 100 : null) : (lo > 0 ? (v / lo - 1) * 100 : null);
        }
        return lowerIsBetter ? (v > 0 ? (1 - lo / v) * 100 : null) : (hi > 0 ? (1 - v / hi) * 100 : null);
      });
      var status = s.status.map(function (st, i) { return st === 'ok' && y[i] === null ? 'missing' : st; });
      return Object.assign({}, s, {y: y, lo: s.x.map(function () { return null; }),
        hi: s.x.map(function () { return null; }), status: status});
    });
  }

  function viewTitles(graph) {
    var throughput = /Second|\/s\)/.test(graph.y_label || '');
    if (graph.better === 'lower') {
      return {throughput: graph.y_label, more: '% Better Than Worst', less: '% Worse Than Best'};
    }
    return {
      throughput: throughput ? 'Throughput' : graph.y_label,
      more: throughput ? '% More Throughput Than Worst' : '% More Than Worst',
      less: throughput ? '% Less Throughput Than Best' : '% Less Than Best'
    };
  }

  function figureFor(graph, view, index, options) {
    var titles = viewTitles(graph);
    var series = view === 'throughput' ? graph.series : relative(graph, view);
    var xs = [];
    graph.series.forEach(function (s) { xs = xs.concat(s.x); });
    var numericX = xs.every(MsgPlot.isNum);
    // One x value (figures.SERIES_SCALE): a dot per series, the x said in the subtitle.
    var oneX = !options.bar && new Set(xs.map(String)).size === 1 && graph.series.length > 1;
    var values = [];
    series.forEach(function (s) { values = values.concat(s.y); });
    return {
      kind: 'xy', id: 'graph-' + index + '-' + view, title: titles[view],
      subtitle: oneX && numericX ? 'at ' + (graph.x_label || 'x') + ' = ' + MsgPlot.formatFull(xs[0]) : '',
      note: view === 'throughput' ? (series.some(function (s) { return s.lo && s.lo.some(MsgPlot.isNum); })
        ? 'error bars: min–max of the repetitions' : '') : 'relative to the ' +
        (view === 'more' ? 'worst' : 'best') + ' value at each x among the lines drawn here',
      bars: options.bar,
      x: {label: oneX ? '' : graph.x_label,
        scale: oneX ? 'series' : options.sameX || !numericX ? 'category' : autoScale(xs, 100),
        ticks: graph.x_ticks || 'auto'},
      y: {label: view === 'throughput' ? graph.y_label : titles[view],
        scale: view === 'throughput' ? (graph.y_scale || autoScale(values)) : 'linear',
        format: view === 'throughput' ? 'si' : 'percent'},
      y2: null,
      traces: series
    };
  }

  // ------------------------------------------------------------ rendering

  function options() {
    return {
      throughput: $('view-throughput').checked, more: $('view-more').checked,
      less: $('view-less').checked, bar: $('view-bar').checked,
      sameX: $('view-same-x').checked, allMetrics: $('view-all-metrics').checked
    };
  }

  function renderSources() {
    var list = $('sources');
    list.textContent = '';
    $('no-sources').hidden = state.sources.length > 0;
    state.sources.forEach(function (source, index) {
      var item = el('li', 'source', list);
      item.setAttribute('data-format', source.format || '');
      el('strong', 'name', item, source.name);
      el('span', 'meta', item, (source.format || '') + ', ' + source.graphs.length + ' graphs');
      var remove = el('button', 'remove', item, 'Remove');
      remove.type = 'button';
      remove.addEventListener('click', function () { state.sources.splice(index, 1); render(); });
    });
  }

  function render() {
    renderSources();
    var opts = options();
    var box = $('graphs');
    box.textContent = '';
    var graphs = mergeGraphs(state.sources, opts.allMetrics);
    var views = VIEWS.filter(function (v) { return opts[v]; });
    renderIndex(box, graphs);
    graphs.forEach(function (graph, index) {
      var section = el('section', 'graph', box);
      section.id = 'graph-' + index;
      section.setAttribute('data-key', graph.key);
      section.setAttribute('data-sources', graph.sources);
      el('h3', '', section, graph.title);
      if (graph.subtitle) el('div', 'subtitle', section, graph.subtitle);
      views.forEach(function (view) {
        if (view !== 'throughput' && graph.better !== 'higher' && graph.better !== 'lower') {
          el('p', 'view-note', section, 'No ' + view + ' view: ' + graph.y_label + ' is neither better high nor low.');
          return;
        }
        var holder = el('div', 'view', section);
        holder.setAttribute('data-view', view);
        MsgPlot.draw(holder, figureFor(graph, view, index, opts));
      });
    });
    document.body.setAttribute('data-graphs', String(graphs.length));
  }

  /* An index of the graphs (with "All metrics" there are dozens): one link each,
   * grouped by the workload or scenario the key starts with. */
  function renderIndex(box, graphs) {
    if (graphs.length < 2) return;
    var nav = el('nav', 'graph-index', box);
    nav.id = 'graph-index';
    el('h3', '', nav, 'Index (' + graphs.length + ' graphs)');
    var list = el('ol', '', nav);
    graphs.forEach(function (graph, index) {
      var link = el('a', '', el('li', '', list), graph.title + (graph.subtitle ? ' — ' + graph.subtitle : ''));
      link.href = '#graph-' + index;
    });
  }

  // ------------------------------------------------------------ wiring

  function init() {
    $('add-paste').addEventListener('click', addPaste);
    $('file-input').addEventListener('change', function (e) {
      addFiles(e.target.files).then(function () { e.target.value = ''; });
    });
    $('remove-all').addEventListener('click', function () { state.sources = []; clearMessages(); render(); });
    ['view-throughput', 'view-more', 'view-less', 'view-bar', 'view-same-x', 'view-all-metrics']
      .forEach(function (id) { $(id).addEventListener('change', render); });
    var zone = $('drop-zone');
    zone.addEventListener('dragover', function (e) { e.preventDefault(); zone.classList.add('dragging'); });
    zone.addEventListener('dragleave', function () { zone.classList.remove('dragging'); });
    zone.addEventListener('drop', function (e) {
      e.preventDefault();
      zone.classList.remove('dragging');
      if (e.dataTransfer.files && e.dataTransfer.files.length) { addFiles(e.dataTransfer.files); return; }
      var text = e.dataTransfer.getData('text/plain');
      if (text) { $('paste-text').value = text; addPaste(); }
    });
    loadStore();
    render();
    document.body.setAttribute('data-ready', 'true');
  }

  window.MsgPage = {mergeGraphs: mergeGraphs, relative: relative, state: state};
  init();
})();
