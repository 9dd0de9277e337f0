/* tables.js - the functions table (flat: each function once, expanding to
 * its callers and callees) and the call tree tables (top-down, bottom-up:
 * each row expanding to its callees, or its callers), sortable by any
 * column and filtered by name. Rows are built for what is shown only. */
var VALUE_COLS = [['self', 0, 'live B self'], ['cum', 0, 'live B total'], ['self', 1, 'live obj self'],
                  ['cum', 1, 'live obj total'], ['self', 2, 'alloc B self'], ['cum', 2, 'alloc B total'],
                  ['self', 3, 'alloc obj self'], ['cum', 3, 'alloc obj total']];
var ROWS_SHOWN = 200;

function headerRow(first, sortKey, onSort) {
  var hr = el('tr');
  first.forEach(function (t) { hr.appendChild(el('th', t, 'n')); });
  VALUE_COLS.forEach(function (c, i) {
    var th = el('th', c[2] + (sortKey === i ? ' \u25be' : ''));
    th.setAttribute('data-col', String(i));
    th.onclick = function () { onSort(i); };
    hr.appendChild(th);
  });
  return hr;
}
function valueCells(tr, get) {
  VALUE_COLS.forEach(function (c) {
    var v = get(c[0], c[1]);
    tr.appendChild(el('td', v === null ? '' : METRICS[c[1]][2](v)));
  });
}

/* Each function's values in a tree: self where its frame is innermost,
 * total once per stack however often it recurs (a node adds its total
 * only when no ancestor has its name). A depth-first walk marks those
 * nodes (inner) with only the names on the path; the values are then
 * summed in node order, one array at a time (walking all 8 value arrays
 * in depth-first order took twice as long: 100,000 stacks, 1.6 million
 * nodes). */
function functionValues(m, tree, vals) {
  var n = tree.n, nn = m.S.length, F = m.F, frame = tree.frame, start = tree.start, list = tree.list;
  var self = new Float64Array(nn * 4), cum = new Float64Array(nn * 4), onPath = new Int32Array(nn);
  var firstFrame = new Int32Array(nn).fill(-1), name = new Int32Array(n), inner = new Uint8Array(n), i, b, k;
  for (i = 0; i < n; i++) name[i] = F[5 * frame[i]];
  var stack = new Int32Array(2 * n + 2), sp = 0;
  for (i = start[1] - 1; i >= start[0]; i--) stack[sp++] = list[i];
  while (sp) {
    var x = stack[--sp];
    if (x < 0) { onPath[name[~x]]--; continue; }
    var nm = name[x];
    if (firstFrame[nm] < 0) firstFrame[nm] = frame[x];
    if (onPath[nm]) inner[x] = 1;
    onPath[nm]++;
    stack[sp++] = ~x;
    for (i = start[x + 2] - 1; i >= start[x + 1]; i--) stack[sp++] = list[i];
  }
  for (k = 0; k < 4; k++) {
    var s = vals.self[k], c = vals.cum[k];
    for (i = 0; i < n; i++) {
      b = 4 * name[i] + k;
      self[b] += s[i];
      if (!inner[i]) cum[b] += c[i];
    }
  }
  var rows = [];
  for (var f = 0; f < nn; f++) {
    if (firstFrame[f] < 0) continue;
    b = 4 * f;
    rows.push({ name: m.S[f], frame: firstFrame[f], nameId: f,
                self: [self[b], self[b + 1], self[b + 2], self[b + 3]], cum: [cum[b], cum[b + 1], cum[b + 2], cum[b + 3]] });
  }
  return rows;
}

/* The callers and callees of the function nameId: [name, live bytes total] pairs. */
function neighbours(m, tree, vals, nameId, metric) {
  var callers = new Map(), callees = new Map(), cum = vals.cum[metric], F = m.F;
  for (var i = 0; i < tree.n; i++) {
    if (F[5 * tree.frame[i]] !== nameId) continue;
    var p = tree.parent[i];
    if (p >= 0) { var a = m.name(tree.frame[p]); callers.set(a, (callers.get(a) || 0) + cum[i]); }
    var kids = tree.kids(i);
    for (var j = 0; j < kids.length; j++) {
      var b = m.name(tree.frame[kids[j]]);
      callees.set(b, (callees.get(b) || 0) + cum[kids[j]]);
    }
  }
  function sorted(mp) { return Array.from(mp.entries()).sort(function (x, y) { return y[1] - x[1]; }); }
  return { callers: sorted(callers), callees: sorted(callees) };
}

function FunctionsTable(host, st) {
  this.host = host; this.st = st; this.sort = 1; this.open = new Set();
}
FunctionsTable.prototype.draw = function () {
  var st = this.st, m = st.model, self = this, t0 = performance.now();
  var vals = st.values(m.td), q = st.filter.toLowerCase();
  if (this.rowsOf !== vals) { this.rows = functionValues(m, m.td, vals); this.rowsOf = vals; }
  var rows = this.rows;
  var shown = rows.filter(function (r) { return !q || r.name.toLowerCase().indexOf(q) >= 0; });
  var c = VALUE_COLS[this.sort];
  shown.sort(function (a, b) { return b[c[0]][c[1]] - a[c[0]][c[1]]; });
  var table = el('table');
  table.id = 'functions';
  table.appendChild(headerRow(['', 'function', 'file:line', 'module'], this.sort, function (i) { self.sort = i; self.draw(); }));
  shown.slice(0, ROWS_SHOWN).forEach(function (r) {
    var tr = el('tr'), open = self.open.has(r.nameId), tog = el('td', open ? '\u25be' : '\u25b8', 'tog');
    tog.onclick = function () { if (open) self.open.delete(r.nameId); else self.open.add(r.nameId); self.draw(); };
    tr.appendChild(tog);
    tr.appendChild(el('td', r.name, 'n'));
    tr.appendChild(el('td', m.where(r.frame), 'n'));
    tr.appendChild(el('td', baseName(m.module(r.frame)), 'n'));
    valueCells(tr, function (kind, k) { return r[kind][k]; });
    table.appendChild(tr);
    if (!open) return;
    var nb = neighbours(m, m.td, vals, r.nameId, st.metric);
    [['called from', nb.callers, 'callers'], ['calls', nb.callees, 'callees']].forEach(function (g) {
      g[1].slice(0, 20).forEach(function (e) {
        var sub = el('tr', null, 'sub ' + g[2]);
        sub.appendChild(el('td'));
        sub.appendChild(el('td', g[0] + ' ' + e[0], 'n'));
        var td = el('td', METRICS[st.metric][2](e[1]) + ' ' + METRICS[st.metric][1]);
        td.colSpan = 2 + VALUE_COLS.length;
        td.className = 'n';
        sub.appendChild(td);
        table.appendChild(sub);
      });
      if (!g[1].length) {
        var none = el('tr', null, 'sub');
        none.appendChild(el('td'));
        none.appendChild(el('td', g[0] + ': nothing', 'n'));
        table.appendChild(none);
      }
    });
  });
  this.host.textContent = '';
  this.host.appendChild(table);
  st.matched.textContent = q ? 'Matched: ' + shown.length + ' functions (' + (performance.now() - t0).toFixed(0) + ' ms)' : '';
};

function baseName(path) { return path ? path.replace(/.*\//, '') : ''; }

/* The call tree as a table: top-down (a row's children are its callees) or
 * bottom-up (its callers). With a filter, only rows on a path to a
 * matching function are shown, and those paths are open. */
function TreeTable(host, st, inverted) {
  this.host = host; this.st = st; this.inverted = inverted; this.sort = 1; this.open = new Set();
}
TreeTable.prototype.draw = function () {
  var st = this.st, m = st.model, self = this, tree = this.inverted ? m.inverted() : m.td;
  var vals = st.values(tree), c = VALUE_COLS[this.sort], q = st.filter, keep = null;
  if (!this.opened) { /* first shown: the heaviest path open */
    this.opened = true;
    for (var p = -1, depth = 0; depth < 64; depth++) {
      var best = -1, kids = tree.kids(p);
      for (var j = 0; j < kids.length; j++) if (best < 0 || vals.cum[st.metric][kids[j]] > vals.cum[st.metric][best]) best = kids[j];
      if (best < 0 || !tree.kids(best).length) break;
      this.open.add(best);
      p = best;
    }
  }
  if (q) { /* nodes with a match at or below them */
    var hit = m.matchFrames(q).hit;
    keep = new Uint8Array(tree.n);
    for (var i = tree.n - 1; i >= 0; i--) {
      if (hit[tree.frame[i]]) keep[i] = 1;
      if (keep[i] && tree.parent[i] >= 0) keep[tree.parent[i]] = 2;
    }
  }
  var table = el('table'), rows = 0;
  table.id = this.inverted ? 'bottomup' : 'topdown';
  table.appendChild(headerRow(['function', 'file:line', 'module'], this.sort, function (i) { self.sort = i; self.draw(); }));
  function value(x, kind, k) {
    if (kind === 'self' && self.inverted) return tree.depth[x] === 0 ? vals.cum[k][x] : null;
    return vals[kind][k][x];
  }
  function add(p, depth) {
    var kids = Array.from(tree.kids(p)).filter(function (x) { return !keep || keep[x]; });
    kids.sort(function (a, b) { return (value(b, c[0], c[1]) || 0) - (value(a, c[0], c[1]) || 0); });
    kids.slice(0, 100).forEach(function (x) {
      if (rows >= ROWS_SHOWN * 2) return;
      rows++;
      var fr = tree.frame[x], hasKids = tree.kids(x).length > 0;
      var open = self.open.has(x) || (keep && keep[x] === 2), tr = el('tr');
      var name = el('td', null, 'n');
      name.style.paddingLeft = (4 + 14 * depth) + 'px';
      var tog = el('span', hasKids ? (open ? '\u25be ' : '\u25b8 ') : '\u2003', 'tog');
      tog.onclick = function () { if (self.open.has(x)) self.open.delete(x); else self.open.add(x); self.draw(); };
      name.appendChild(tog);
      name.appendChild(el('span', m.name(fr), 'fn'));
      tr.appendChild(name);
      tr.setAttribute('data-depth', String(depth));
      tr.appendChild(el('td', m.where(fr), 'n'));
      tr.appendChild(el('td', baseName(m.module(fr)), 'n'));
      valueCells(tr, function (kind, k) { return value(x, kind, k); });
      table.appendChild(tr);
      if (open && hasKids) add(x, depth + 1);
    });
  }
  add(-1, 0);
  this.host.textContent = '';
  this.host.appendChild(table);
};
