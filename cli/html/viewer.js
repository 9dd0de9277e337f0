/* viewer.js - the HTML report's viewer (cli/html/page.c embeds it after
 * model.js, flame.js, tables.js, census.js and diff.js, all in one
 * function scope). Reads the page's data from #hi-data; every name from
 * the target goes into the page as text (textContent), never as markup.
 * The URL's #... sets the first view: search=NAME, metric=0..3,
 * mode=flame|icicle, inverted=1, pid=PID, focus=NAME. */
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

/* Memory over time: RSS, estimated live and allocated bytes at each tick. */
function drawTicks() {
  var tk = d.ticks || [], n = tk.length / 4;
  if (!n) return;
  var NS = 'http://www.w3.org/2000/svg', W = 800, H = 200;
  var svg = document.createElementNS(NS, 'svg');
  svg.id = 'ticks'; svg.setAttribute('width', W); svg.setAttribute('height', H);
  var tmax = tk[4 * (n - 1)] || 1, vmax = 1, i;
  for (i = 0; i < n; i++) vmax = Math.max(vmax, tk[4 * i + 1], tk[4 * i + 2]);
  [['rss_bytes', 1, '#36c'], ['live_bytes', 2, '#c33']].forEach(function (k) {
    var pts = [];
    for (i = 0; i < n; i++)
      pts.push((tk[4 * i] / tmax * (W - 10) + 5).toFixed(1) + ',' + (H - 5 - tk[4 * i + k[1]] / vmax * (H - 10)).toFixed(1));
    var pl = document.createElementNS(NS, 'polyline');
    pl.setAttribute('points', pts.join(' ')); pl.setAttribute('fill', 'none'); pl.setAttribute('stroke', k[2]);
    pl.setAttribute('data-series', k[0]); pl.setAttribute('data-ticks', String(n));
    svg.appendChild(pl);
  });
  var s = section('Memory over time (blue RSS, red live, ' + n + ' ticks, ' + tmax.toFixed(1) + ' s, max ' + human(vmax) + ')');
  s.appendChild(svg);
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
  drawTicks();

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
  function searchFlame() {
    var t = performance.now(), q = search.value;
    st.hits = q ? model.matchFrames(q) : null;
    flame.draw();
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
    timed('flame', searchFlame);
    timed('functions', function () { ftable.draw(); });
    timed('topdown', function () { topdown.draw(); });
    if (bud.open) timed('bottomup', function () { bottomup.draw(); });
    if (ds) timed('diff', function () { drawDiff(ds, st); });
  }
  metSel.onchange = function () { st.metric = +metSel.value; drawAll(); };
  modeSel.onchange = function () { st.flameUp = modeSel.value === 'flame'; flame.draw(); };
  inv.onchange = function () { st.inverted = inv.checked; flame.focus = -1; searchFlame(); };
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
}
main();
document.body.setAttribute('data-parse-ms', parseMs.toFixed(0));
document.body.setAttribute('data-ready-ms', performance.now().toFixed(0));
document.body.setAttribute('data-timing', JSON.stringify(timing));
