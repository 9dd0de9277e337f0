/* model.js - the page's data (cli/html/model.h) as typed arrays: the call
 * tree, its inverted (bottom-up) form built on first use, and each node's
 * values for one side (the profile, or a diff's base) and one process.
 * Values are 4 metrics: 0 live bytes, 1 live objects, 2 allocated bytes,
 * 3 allocated objects. */

/* A tree of n nodes, parents before children; its children lists as one
 * array (list[start[p + 1] .. start[p + 2]] are p's, p = -1 the roots).
 * leafTo: where a stack ending at original node L puts its values (null:
 * at L itself). */
function Tree(parent, frame, n, leafTo, inverted) {
  var depth = new Int32Array(n), cnt = new Int32Array(n + 2), i;
  for (i = 0; i < n; i++) {
    depth[i] = parent[i] < 0 ? 0 : depth[parent[i]] + 1;
    cnt[parent[i] + 2]++;
  }
  var start = new Int32Array(n + 2);
  for (i = 1; i < n + 2; i++) start[i] = start[i - 1] + cnt[i];
  var fill = start.slice(0, n + 1), list = new Int32Array(n);
  for (i = 0; i < n; i++) list[fill[parent[i] + 1]++] = i;
  this.n = n; this.parent = parent; this.frame = frame; this.depth = depth;
  this.start = start; this.list = list; this.leafTo = leafTo; this.inverted = !!inverted;
}
Tree.prototype.kids = function (p) { return this.list.subarray(this.start[p + 1], this.start[p + 2]); };

/* {self: [4 arrays], cum: [4 arrays]} of this tree from the values stacks
 * put at their innermost nodes (dep, 4 arrays over the original nodes). */
Tree.prototype.values = function (dep) {
  var self = [], cum = [], n = this.n, parent = this.parent, to = this.leafTo;
  for (var k = 0; k < 4; k++) {
    var s = new Float64Array(n), src = dep[k], i;
    if (!to) s.set(src);
    else for (i = 0; i < src.length; i++) if (src[i]) s[to[i]] += src[i];
    var c = s.slice();
    for (i = n - 1; i >= 0; i--) if (parent[i] >= 0) c[parent[i]] += c[i];
    self.push(s); cum.push(c);
  }
  return { self: self, cum: cum };
};

function Model(d) {
  var N = d.nodes || [], n = N.length >> 1, parent = new Int32Array(n), frame = new Int32Array(n);
  for (var i = 0; i < n; i++) { parent[i] = N[2 * i]; frame[i] = N[2 * i + 1]; }
  this.d = d; this.S = d.strings || []; this.F = d.frames || [];
  this.nf = this.F.length / 5;
  this.td = new Tree(parent, frame, n, null, false);
  this.inv = null;
  this.lower = null;
  /* The processes: one pid per stack in "pids" (and "base_pids") when a
   * profile covers several. */
  var seen = new Set();
  (d.pids || []).forEach(function (p) { seen.add(p); });
  (d.base_pids || []).forEach(function (p) { seen.add(p); });
  this.pids = Array.from(seen).sort(function (a, b) { return a - b; });
}
Model.prototype.name = function (f) { return this.S[this.F[5 * f]]; };
Model.prototype.where = function (f) {
  var file = this.S[this.F[5 * f + 1]];
  return file ? file + (this.F[5 * f + 2] ? ':' + this.F[5 * f + 2] : '') : '';
};
Model.prototype.module = function (f) { return this.S[this.F[5 * f + 3]]; };
Model.prototype.kind = function (f) { return this.F[5 * f + 4]; };
Model.prototype.lowerNames = function () {
  if (!this.lower) {
    this.lower = [];
    for (var f = 0; f < this.nf; f++) this.lower.push(this.name(f).toLowerCase());
  }
  return this.lower;
};
/* Frames whose name contains q (case-insensitive): a Uint8Array by frame. */
Model.prototype.matchFrames = function (q) {
  var hit = new Uint8Array(this.nf), low = this.lowerNames(), n = 0;
  q = q.toLowerCase();
  for (var f = 0; f < this.nf; f++) if (q && low[f].indexOf(q) >= 0) { hit[f] = 1; n++; }
  return { hit: hit, n: n };
};

/* The values stacks of a side ('stacks' or 'base') put at their innermost
 * node: 4 arrays over the original nodes; pid 0 = every process. */
Model.prototype.deposit = function (side, pid) {
  var st = this.d[side] || [], pids = this.d[side === 'base' ? 'base_pids' : 'pids'], n = this.td.n, dep = [];
  for (var k = 0; k < 4; k++) dep.push(new Float64Array(n));
  for (var j = 0, s = 0; j < st.length; j += 5, s++) {
    if (pid && pids && pids[s] !== pid) continue;
    for (k = 0; k < 4; k++) dep[k][st[j]] += st[j + 1 + k];
  }
  return dep;
};

/* The bottom-up tree: each stack read from its innermost frame out, the
 * stacks that end in the same function merged first. */
Model.prototype.inverted = function () {
  if (this.inv) return this.inv;
  var td = this.td, nf = this.nf, par = [], fr = [], map = new Map(), leafTo = new Int32Array(td.n);
  var leaves = new Uint8Array(td.n);
  ['stacks', 'base'].forEach(function (side) {
    var st = this.d[side] || [];
    for (var j = 0; j < st.length; j += 5) leaves[st[j]] = 1;
  }, this);
  for (var L = 0; L < td.n; L++) {
    if (!leaves[L]) continue;
    var v = -1;
    for (var x = L; x >= 0; x = td.parent[x]) {
      var key = (v + 1) * nf + td.frame[x], w = map.get(key);
      if (w === undefined) { w = par.length; par.push(v); fr.push(td.frame[x]); map.set(key, w); }
      v = w;
    }
    leafTo[L] = v;
  }
  this.inv = new Tree(Int32Array.from(par), Int32Array.from(fr), par.length, leafTo, true);
  return this.inv;
};

/* A stack named by its innermost functions: "f < caller < caller". */
Model.prototype.stackLabel = function (node, most) {
  var names = [], td = this.td;
  for (var x = node; x >= 0 && names.length < most; x = td.parent[x]) names.push(this.name(td.frame[x]));
  return names.join(' < ') + (td.depth[node] >= most ? ' < ...' : '');
};

function human(v) {
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, neg = v < 0;
  v = Math.abs(v);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (neg ? '-' : '') + (i ? v.toFixed(1) : String(Math.round(v))) + ' ' + u[i];
}
function count(v) { return Math.round(v).toLocaleString('en-US'); }
var METRICS = [['live_bytes', 'live bytes', human], ['live_objects', 'live objects', count],
               ['alloc_bytes', 'allocated bytes', human], ['alloc_objects', 'allocated objects', count]];
function el(tag, text, cls) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
