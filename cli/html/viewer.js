/* viewer.js - the HTML report's viewer (cli/html/page.c embeds it). Reads
 * the profile's JSON from #hi-data; every name from the target goes into
 * the page as text (textContent), never as markup. */
(function () {
  'use strict';
  var app = document.getElementById('app');
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function human(v) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(Math.round(v))) + ' ' + u[i];
  }
  var errors = el('div'); errors.id = 'errors';
  window.addEventListener('error', function (e) { errors.textContent += 'script error: ' + e.message + '\n'; });
  app.appendChild(errors);
  var d = JSON.parse(document.getElementById('hi-data').textContent);
  app.appendChild(el('h1', 'heapinject: pid ' + d.pid));
  var sum = el('p');
  sum.id = 'summary';
  sum.textContent = 'duration ' + d.duration_s + ' s, rate ' + d.rate + ' B, RSS ' + human(d.rss_bytes) +
    ', live ' + human(d.totals.live_bytes) + ', allocated ' + human(d.totals.alloc_bytes) +
    ', stacks ' + d.stacks.length + (d.totals.dropped_samples ? ', dropped samples ' + d.totals.dropped_samples : '');
  app.appendChild(sum);
  if (d.note) app.appendChild(el('p', d.note));
  /* The leak ranking: stacks by age of their oldest live block. */
  function topName(s) {
    var f = s && s.frames.length ? d.frames[s.frames[0]] : null;
    return f ? (f.function || (f.module || '') + '+' + f.module_offset) : '?';
  }
  if (d.leaks && d.leaks.length) {
    var ol = el('ol'); ol.id = 'leaks';
    d.leaks.slice(0, 10).forEach(function (l) {
      ol.appendChild(el('li', topName(d.stacks[l.stack]) + ': ' + human(l.live_bytes) + ' live, oldest ' +
                        l.oldest_age_s.toFixed(1) + ' s'));
    });
    app.appendChild(el('h2', 'Oldest live memory'));
    app.appendChild(ol);
  }
  /* Memory over time: RSS and estimated live bytes at each tick. */
  if (d.ticks && d.ticks.length) {
    var NS = 'http://www.w3.org/2000/svg', W = 800, H = 200;
    var svg = document.createElementNS(NS, 'svg');
    svg.id = 'ticks'; svg.setAttribute('width', W); svg.setAttribute('height', H);
    var tmax = d.ticks[d.ticks.length - 1].t_s || 1, vmax = 1;
    d.ticks.forEach(function (t) { vmax = Math.max(vmax, t.rss_bytes, t.live_bytes); });
    [['rss_bytes', '#36c'], ['live_bytes', '#c33']].forEach(function (k) {
      var pts = d.ticks.map(function (t) {
        return (t.t_s / tmax * (W - 10) + 5).toFixed(1) + ',' + (H - 5 - t[k[0]] / vmax * (H - 10)).toFixed(1);
      });
      var pl = document.createElementNS(NS, 'polyline');
      pl.setAttribute('points', pts.join(' ')); pl.setAttribute('fill', 'none'); pl.setAttribute('stroke', k[1]);
      pl.setAttribute('data-series', k[0]); pl.setAttribute('data-ticks', String(d.ticks.length));
      svg.appendChild(pl);
    });
    app.appendChild(el('h2', 'Memory over time (blue RSS, red live, ' + d.ticks.length + ' ticks, max ' + human(vmax) + ')'));
    app.appendChild(svg);
  }
  /* Functions: flat (innermost frame) and cumulative (once per stack). */
  var fns = new Map();
  d.stacks.forEach(function (s) {
    var seen = new Set();
    s.frames.forEach(function (id, k) {
      var f = d.frames[id], name = f.function || ((f.module || '') + '+' + f.module_offset);
      var r = fns.get(name);
      if (!r) fns.set(name, r = { name: name, file: f.file ? f.file + ':' + f.line : '', module: f.module || '',
                                  flat: 0, cum: 0, aflat: 0, acum: 0 });
      if (k === 0) { r.flat += s.live_bytes; r.aflat += s.alloc_bytes; }
      if (!seen.has(name)) { seen.add(name); r.cum += s.live_bytes; r.acum += s.alloc_bytes; }
    });
  });
  var rows = Array.from(fns.values()), key = 'flat';
  var search = el('input'); search.placeholder = 'filter functions'; search.id = 'search';
  var matched = el('p'); matched.id = 'matched';
  var table = el('table'); table.id = 'functions';
  var cols = [['name', 'function'], ['file', 'file:line'], ['module', 'module'], ['flat', 'live flat'],
              ['cum', 'live cum'], ['aflat', 'alloc flat'], ['acum', 'alloc cum']];
  function draw() {
    var t0 = performance.now(), q = search.value;
    table.textContent = '';
    var hr = el('tr');
    cols.forEach(function (c) {
      var th = el('th', c[1], c[0].length > 5 || c[0] === 'name' || c[0] === 'file' ? 'n' : '');
      th.onclick = function () { key = c[0]; draw(); };
      hr.appendChild(th);
    });
    table.appendChild(hr);
    var shown = rows.filter(function (r) { return !q || r.name.indexOf(q) >= 0; });
    shown.sort(function (a, b) { return typeof a[key] === 'number' ? b[key] - a[key] : (a[key] < b[key] ? -1 : 1); });
    shown.slice(0, 200).forEach(function (r) {
      var tr = el('tr');
      cols.forEach(function (c) {
        tr.appendChild(el('td', typeof r[c[0]] === 'number' ? human(r[c[0]]) : r[c[0]],
                          typeof r[c[0]] === 'number' ? '' : 'n'));
      });
      table.appendChild(tr);
    });
    matched.textContent = q ? 'Matched: ' + shown.length + ' functions (' + (performance.now() - t0).toFixed(0) + ' ms)' : '';
  }
  search.oninput = draw;
  app.appendChild(search);
  app.appendChild(matched);
  app.appendChild(table);
  var m = /#search=([^&]*)/.exec(location.hash);
  if (m) search.value = decodeURIComponent(m[1]);
  draw();
})();
