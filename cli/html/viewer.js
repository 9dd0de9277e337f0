/* viewer.js - the HTML report's viewer (cli/html/page.c embeds it after
 * model.js, flame.js, tables.js, census.js and diff.js, all in one
 * function scope). Reads the page's data from #hi-data; every name from
 * the target goes into the page as text (textContent), never as markup.
 * The URL's #... sets the first view: search=NAME, metric=0..3,
 * mode=flame|icicle, inverted=1, pid=PID, focus=NAME; and for tests and
 * the bench, click=NAME and bench_search=Q1|Q2... (clickFrame, benchSearch). */
var app = document.getElementById('app');
var errors = el('div');
errors.id = 'errors';
window.addEventListener('error', function (e) { errors.textContent += 'script error: ' + e.message + '\n'; });
app.appendChild(errors);
var t0 = performance.now();
var d = JSON.parse(document.getElementById('hi-data').textContent);
var parseMs = performance.now() - t0;
var hash = {};
location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
  var i = kv.indexOf('=');
  if (i > 0) hash[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
});

function section(title, id) {
  var s = el('section');
  if (id) s.id = id;
  if (title) s.appendChild(el('h2', title));
  app.appendChild(s);
  return s;
}

/* Summary: the process, the session, the memory by holder, what could not be seen. */
function drawSummary(p, st) {
  var s = section(null, 'top');
  var title = d.kind === 'diff' ? 'heapinject diff: pid ' + p.pid : 'heapinject: pid ' + p.pid;
  if (st.model.pids.length > 1) title = 'heapinject: ' + st.model.pids.length + ' processes';
  s.appendChild(el('h1', title));
  var sum = el('p');
  sum.id = 'summary';
  sum.textContent = 'duration ' + p.duration_s + ' s, rate ' + p.rate + ' B, RSS ' + human(p.rss_bytes) +
    ', live ' + human(p.live_bytes) + ', allocated ' + human(p.alloc_bytes) + ', stacks ' + p.stacks +
    (p.dropped_samples ? ', dropped samples ' + p.dropped_samples : '');
  s.appendChild(sum);
  if (d.note) s.appendChild(el('p', d.note, 'note'));
  if (d.base_profile) {
    var b = d.base_profile;
    s.appendChild(el('p', 'base: duration ' + b.duration_s + ' s, live ' + human(b.live_bytes) + ', allocated ' +
      human(b.alloc_bytes) + ', stacks ' + b.stacks));
  }
  var mem = d.memory;
  if (mem && mem.parts) {
    var ul = el('ul');
    ul.id = 'memory';
    Object.keys(mem.parts).forEach(function (k) {
      if (mem.parts[k]) ul.appendChild(el('li', k.replace(/_/g, ' ') + ': ' + human(mem.parts[k])));
    });
    if (mem.allocator && mem.allocator.name)
      ul.appendChild(el('li', 'allocator ' + mem.allocator.name + ': in use ' + human(mem.allocator.in_use_bytes || 0) +
        ', free ' + human(mem.allocator.free_bytes || 0) + ', mapped ' + human(mem.allocator.mapped_bytes || 0)));
    s.appendChild(el('h3', 'RSS ' + human(mem.rss_bytes || 0) + ' by holder'));
    s.appendChild(ul);
    (mem.notes || []).forEach(function (n) { s.appendChild(el('p', n, 'note')); });
  }
  var unseen = [];
  if (p.dropped_samples) unseen.push(p.dropped_samples + ' samples dropped (a full table)');
  if (d.no_debuginfo && d.no_debuginfo.length)
    unseen.push('no debug information (no file:line) for ' + d.no_debuginfo.map(baseName).join(', '));
  if (unseen.length) s.appendChild(el('p', 'Not seen: ' + unseen.join('; '), 'note'));
}

/* The leak rankings: oldest live memory, and stacks that keep growing. */
function drawLeaks(st) {
  var st5 = d.stacks || [], m = st.model;
  function label(i) { return m.name(m.td.frame[st5[5 * i]]); }
  if (d.leaks && d.leaks.length) {
    var s = section('Oldest live memory'), ol = el('ol');
    ol.id = 'leaks';
    for (var i = 0; i < d.leaks.length && i < 30; i += 3)
      ol.appendChild(el('li', label(d.leaks[i]) + ': ' + human(st5[5 * d.leaks[i] + 1]) + ' live, oldest ' +
        d.leaks[i + 1].toFixed(1) + ' s'));
    s.appendChild(ol);
  }
  if (d.growing && d.growing.length) {
    var g = section('Growing steadily'), gl = el('ol');
    gl.id = 'growing';
    for (var j = 0; j < d.growing.length && j < 20; j += 2)
      gl.appendChild(el('li', m.stackLabel(st5[5 * d.growing[j]], 4) + ': ' + human(d.growing[j + 1]) + '/s'));
    g.appendChild(gl);
  }
}

/* Memory over time: RSS and estimated live bytes at each tick; below, on
 * the same time axis and a scale of its own, the stacks that grew most
 * from one tick to the next over the ticks their growth points cover
 * (d.tick_stacks, model.c). Each line carries what it draws (data-*). */
var TICK_COLOURS = ['#c33', '#e80', '#393', '#36c', '#939', '#0aa', '#a60', '#666', '#c6c', '#6a0'];
function polyline(svg, pts, colour, attrs) {
  var pl = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
  pl.setAttribute('points', pts.join(' ')); pl.setAttribute('fill', 'none'); pl.setAttribute('stroke', colour);
  pl.setAttribute('stroke-width', '1.5');
  Object.keys(attrs).forEach(function (k) { pl.setAttribute(k, attrs[k]); });
  svg.appendChild(pl);
}
function chart(id, W, H) {
  var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.id = id; svg.setAttribute('width', W); svg.setAttribute('height', H);
  return svg;
}
function drawTicks(st) {
  var tk = d.ticks || [], n = tk.length / 4;
  if (!n) return;
  var W = 800, H = 200, i;
  var svg = chart('ticks', W, H);
  var tmax = tk[4 * (n - 1)] || 1, vmax = 1;
  function x(t) { return (t / tmax * (W - 10) + 5).toFixed(1); }
  for (i = 0; i < n; i++) vmax = Math.max(vmax, tk[4 * i + 1], tk[4 * i + 2]);
  [['rss_bytes', 1, '#36c'], ['live_bytes', 2, '#c33']].forEach(function (k) {
    var pts = [];
    for (i = 0; i < n; i++) pts.push(x(tk[4 * i]) + ',' + (H - 5 - tk[4 * i + k[1]] / vmax * (H - 10)).toFixed(1));
    polyline(svg, pts, k[2], { 'data-series': k[0], 'data-ticks': String(n) });
  });
  var s = section('Memory over time (blue RSS, red live, ' + n + ' ticks, ' + tmax.toFixed(1) + ' s, max ' + human(vmax) + ')',
    'memory-over-time');
  s.appendChild(svg);
  drawTickStacks(s, st, x, W);
}
function drawTickStacks(s, st, x, W) {
  var ts = d.tick_stacks, tk = d.ticks, H = 160, m = st.model;
  if (!ts || !ts.series || !ts.series.length) return;
  var np = ts.points, per = np + 1, sd = ts.stride || 1, ns = ts.series.length / per, vmax = 1, j, k;
  for (j = 0; j < ns; j++) for (k = 0; k < np; k++) vmax = Math.max(vmax, ts.series[j * per + 1 + k]);
  var svg = chart('tick-stacks', W, H), ol = el('ol', null, 'series');
  ol.id = 'tick-stacks-legend';
  for (j = 0; j < ns; j++) {
    var stack = ts.series[j * per], node = d.stacks[5 * stack], pts = [], vals = [], times = [];
    var colour = TICK_COLOURS[j % TICK_COLOURS.length];
    for (k = 0; k < np; k++) {
      var v = ts.series[j * per + 1 + k];
      var at = Math.min(ts.first_tick + k * sd + sd - 1, tk.length / 4 - 1); /* the window's last tick */
      vals.push(v); times.push(tk[4 * at]);
      if (v >= 0) pts.push(x(tk[4 * at]) + ',' + (H - 5 - v / vmax * (H - 10)).toFixed(1));
    }
    var fn = m.name(m.td.frame[node]);
    polyline(svg, pts, colour, { 'data-series': 'stack', 'data-stack': String(stack), 'data-fn': fn,
      'data-values': vals.join(','), 'data-t': times.join(',') });
    var li = el('li'), sw = el('span', '\u25a0 ');
    sw.style.color = colour;
    li.appendChild(sw);
    var known = vals.filter(function (v) { return v >= 0; }), first = known[0], last = known[known.length - 1];
    li.appendChild(document.createTextNode(m.stackLabel(node, 4) + ': ' + human(first) + ' \u2192 ' + human(last)));
    ol.appendChild(li);
  }
  s.appendChild(el('h3', 'Top growing stacks, ' + (ts.first_tick === 0 && ts.stride ? 'the whole session, ' + np +
    ' points' : 'the last ' + np + ' ticks') + ' (max ' + human(vmax) + ')'));
  s.appendChild(svg);
  s.appendChild(ol);
}

/* The page's state: what every view draws from. */
function State(model) {
  this.model = model; this.metric = 0; this.pid = 0; this.inverted = false; this.flameUp = false;
  this.filter = ''; this.hits = null; this.diff = d.kind === 'diff'; this.cache = new Map();
}
State.prototype.dep = function (side) {
  var key = side + ':' + this.pid;
  if (!this.cache.has(key)) this.cache.set(key, this.model.deposit(side, this.pid));
  return this.cache.get(key);
};
State.prototype.tree = function () { return this.inverted ? this.model.inverted() : this.model.td; };
State.prototype.valuesOf = function (tree, side) {
  var key = side + ':' + this.pid + ':' + (tree.inverted ? 'i' : 't');
  if (!this.cache.has(key)) this.cache.set(key, tree.values(this.dep(side)));
  return this.cache.get(key);
};
State.prototype.values = function (tree) { return this.valuesOf(tree, 'stacks'); };
State.prototype.baseValues = function (tree) { return this.valuesOf(tree, 'base'); };

function control(parent, label, node) {
  var l = el('label', label + ' ');
  l.appendChild(node);
  parent.appendChild(l);
  return node;
}
function select(options, value) {
  var s = el('select');
  options.forEach(function (o) {
    var op = el('option', o[1]);
    op.value = String(o[0]);
    s.appendChild(op);
  });
  s.value = String(value);
  return s;
}

/* How long each view took to draw, last time (body's data-timing). */
var timing = {};
function timed(what, f) {
  var t = performance.now();
  f();
  timing[what] = Math.round(performance.now() - t);
}

function main() {
  if (d.kind === 'census') {
    var only = section(null, 'top');
    only.appendChild(el('h1', 'heapinject census: pid ' + d.census_pid));
    drawCensus(section(null, 'census'), d.census, d.census_pid, d.census_comm);
    return;
  }
  var model, st, p = d.profile;
  timed('model', function () { model = new Model(d); });
  st = new State(model);
  if (hash.metric) st.metric = +hash.metric || 0;
  if (hash.mode === 'flame') st.flameUp = true;
  if (hash.inverted === '1') st.inverted = true;
  if (hash.pid) st.pid = +hash.pid;
  drawSummary(p, st);
  if (!st.diff) drawLeaks(st);
  drawTicks(st);

  /* the flame graph and its controls */
  var fs = section(st.diff ? 'Flame graph of the growth (red grew, blue shrank)' : 'Flame graph', 'flamegraph');
  var bar = el('div', null, 'controls');
  fs.appendChild(bar);
  var pidSel = null;
  /* ' (comm)' of a pid, from the profile's processes (pid and name). */
  var commOf = function (pid) {
    var p = (d.processes || []).find(function (x) { return x && x.pid === pid; });
    return p && p.comm ? ' (' + p.comm + ')' : '';
  };
  if (model.pids.length > 1) {
    pidSel = control(bar, 'process', select([[0, 'all ' + model.pids.length + ' processes']].concat(
      model.pids.map(function (x) { return [x, 'pid ' + x + commOf(x)]; })), st.pid));
    pidSel.id = 'process';
  }
  var metSel = control(bar, 'show', select(METRICS.map(function (x, i) { return [i, x[1]]; }), st.metric));
  metSel.id = 'metric';
  var modeSel = control(bar, 'as', select([['icicle', 'icicle (callers on top)'], ['flame', 'flame (callers at the bottom)']],
    st.flameUp ? 'flame' : 'icicle'));
  modeSel.id = 'mode';
  var inv = control(bar, 'inverted (bottom-up)', el('input'));
  inv.type = 'checkbox'; inv.id = 'inverted'; inv.checked = st.inverted;
  var search = control(bar, 'search', el('input'));
  search.type = 'search'; search.id = 'flame-search'; search.placeholder = 'function name';
  var reset = el('button', 'reset zoom');
  bar.appendChild(reset);
  var fm = el('span', '', 'matched');
  fm.id = 'flame-matched';
  bar.appendChild(fm);
  var legend = el('div', null, 'legend');
  KIND_NAMES.forEach(function (k, i) {
    var sw = el('span', k);
    sw.style.background = frameColour(i, k);
    legend.appendChild(sw);
  });
  if (!st.diff) fs.appendChild(legend);
  var host = el('div', null, 'flame');
  host.id = 'flame';
  fs.appendChild(host);
  var flame = new Flame(host, st);

  var ds = null;
  if (st.diff) ds = section('What changed', 'diff');

  var ts = section('Functions', 'functions-section');
  var filter = el('input');
  filter.placeholder = 'filter functions'; filter.id = 'search';
  ts.appendChild(filter);
  st.matched = el('p');
  st.matched.id = 'matched';
  ts.appendChild(st.matched);
  var fhost = el('div');
  ts.appendChild(fhost);
  var ftable = new FunctionsTable(fhost, st);
  var tds = section('Call tree: top-down (expand to callees)', 'topdown-section'), tdh = el('div');
  tds.appendChild(tdh);
  /* bottom-up: its tree is built when first opened (a second or so for
   * 100,000 stacks), not before the page shows */
  var bus = section(null, 'bottomup-section'), bud = el('details'), buh = el('div');
  bud.appendChild(el('summary', 'Call tree: bottom-up (expand to callers)'));
  bud.appendChild(buh);
  bus.appendChild(bud);
  bud.open = hash.bottomup === '1';
  bud.addEventListener('toggle', function () { if (bud.open) timed('bottomup', function () { bottomup.draw(); }); });
  var topdown = new TreeTable(tdh, st, false), bottomup = new TreeTable(buh, st, true);
  if (d.census) drawCensus(section(null, 'census'), d.census, d.census_pid, d.census_comm);

  /* a search highlights the matching frames and says their share */
  /* redraw: the graph changed (metric, inverted...); else a search only
   * marks the frames already drawn */
  function searchFlame(redraw) {
    var t = performance.now(), q = search.value;
    st.hits = q ? model.matchFrames(q) : null;
    if (redraw === true) flame.draw(); else flame.mark();
    if (!q) { fm.textContent = ''; return; }
    var tree = st.tree(), cum = st.values(tree).cum[st.metric], hit = st.hits.hit, under = new Uint8Array(tree.n);
    var sum = 0, total = 0, roots = tree.kids(-1);
    for (var i = 0; i < roots.length; i++) total += cum[roots[i]];
    for (i = 0; i < tree.n; i++) {
      var pa = tree.parent[i], m = hit[tree.frame[i]];
      under[i] = pa >= 0 && under[pa] ? 1 : m;
      if (m && !(pa >= 0 && under[pa])) sum += cum[i];
    }
    fm.textContent = 'Matched: ' + st.hits.n + ' functions, ' + (total ? (sum / total * 100).toFixed(1) : '0') + '% (' +
      METRICS[st.metric][2](sum) + '), ' + (performance.now() - t).toFixed(0) + ' ms';
    fm.setAttribute('data-share', (total ? sum / total : 0).toFixed(4));
  }
  function drawAll() {
    timed('flame', function () { searchFlame(true); });
    timed('functions', function () { ftable.draw(); });
    timed('topdown', function () { topdown.draw(); });
    if (bud.open) timed('bottomup', function () { bottomup.draw(); });
    if (ds) timed('diff', function () { drawDiff(ds, st); });
  }
  metSel.onchange = function () { st.metric = +metSel.value; drawAll(); };
  modeSel.onchange = function () { st.flameUp = modeSel.value === 'flame'; flame.draw(); };
  inv.onchange = function () { st.inverted = inv.checked; flame.focus = -1; searchFlame(true); };
  if (pidSel) pidSel.onchange = function () { st.pid = +pidSel.value; drawAll(); };
  search.oninput = searchFlame;
  reset.onclick = function () { flame.focus = -1; flame.draw(); };
  filter.oninput = function () {
    st.filter = filter.value;
    ftable.draw();
    topdown.draw();
    if (bud.open) bottomup.draw();
  };
  if (hash.search) { search.value = filter.value = st.filter = hash.search; }
  if (hash.focus) { /* the widest node of that function */
    var tree = st.tree(), cum = st.values(tree).cum[st.metric], best = -1;
    for (var i = 0; i < tree.n; i++)
      if (model.name(tree.frame[i]) === hash.focus && (best < 0 || cum[i] > cum[best])) best = i;
    flame.focus = best;
  }
  drawAll();
  if (hash.click) clickFrame(hash.click);
  if (hash.bench_search) benchSearch(search, host, hash.bench_search.split('|'));
}

/* Test and bench hooks (the URL's #click=NAME, #bench_search=Q1|Q2...):
 * they act through the page's own listeners, as a user does. */

/* A click on the widest frame named name, where a user's pointer would
 * land: the element at the frame's centre (document.elementFromPoint), given
 * a MouseEvent 'click' that bubbles to the flame graph's listener. Body's
 * data-clicked says what was hit. */
function clickFrame(name) {
  var best = null;
  document.querySelectorAll('#flame .fr').forEach(function (f) {
    if (f.getAttribute('data-n') === name && (!best || f.offsetWidth > best.offsetWidth)) best = f;
  });
  if (!best) { document.body.setAttribute('data-clicked', 'no frame ' + name); return; }
  best.scrollIntoView({ block: 'center', inline: 'nearest' });
  var r = best.getBoundingClientRect(), cx = r.left + Math.min(r.width / 2, 20), cy = r.top + r.height / 2;
  var hit = document.elementFromPoint(cx, cy), fr = hit && hit.closest ? hit.closest('.fr') : null;
  if (fr !== best) {
    document.body.setAttribute('data-clicked', 'covered: ' + (fr ? fr.getAttribute('data-n') : hit ? hit.tagName : 'nothing'));
    return;
  }
  hit.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, view: window, clientX: cx, clientY: cy }));
  document.body.setAttribute('data-clicked', name);
}

/* Each query typed into the flame graph's search box (its 'input'
 * listener), timed from setting it until the marks are laid out (a layout
 * forced by reading the graph's size): body's data-search-ms, one number
 * a query, in ms; data-search-hits the frames marked by each. */
function benchSearch(search, host, queries) {
  var ms = [], hits = [];
  /* the page's first layout (all of it) happens here, not in the first
   * query: a user types into a page already shown */
  void document.body.getBoundingClientRect().height;
  queries.forEach(function (q) {
    var t = performance.now();
    search.value = q;
    search.dispatchEvent(new Event('input', { bubbles: true }));
    void host.getBoundingClientRect().height;
    ms.push(+(performance.now() - t).toFixed(1));
    hits.push(host.querySelectorAll('.fr.match').length);
  });
  document.body.setAttribute('data-search-ms', ms.join(','));
  document.body.setAttribute('data-search-hits', hits.join(','));
}
main();
document.body.setAttribute('data-start-ms', t0.toFixed(0)); /* the script's start: the page's HTML read before it */
document.body.setAttribute('data-parse-ms', parseMs.toFixed(0));
document.body.setAttribute('data-ready-ms', performance.now().toFixed(0));
document.body.setAttribute('data-timing', JSON.stringify(timing));
