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
