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

/* {self: [4 arrays], cum: [4 arrays]} of this tree from the stacks of a
 * side (dep: their innermost nodes and 4 values each, model.deposit). The
 * totals of the 4 metrics in one pass over the parents (4 passes took
 * about 1.5 times as long on 1.6 million nodes). */
Tree.prototype.values = function (dep) {
  var n = this.n, parent = this.parent, to = this.leafTo, nodes = dep.nodes, i, k;
  var self = [new Float64Array(n), new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  for (k = 0; k < 4; k++) {
    var s = self[k], v = dep.v[k];
    for (i = 0; i < nodes.length; i++) s[to ? to[nodes[i]] : nodes[i]] += v[i];
  }
  var c0 = self[0].slice(), c1 = self[1].slice(), c2 = self[2].slice(), c3 = self[3].slice();
  for (i = n - 1; i >= 0; i--) {
    var p = parent[i];
    if (p >= 0) { c0[p] += c0[i]; c1[p] += c1[i]; c2[p] += c2[i]; c3[p] += c3[i]; }
  }
  return { self: self, cum: [c0, c1, c2, c3] };
};

/* The numbers of a string written by model.c's put_varint: 5 bits a
 * character (base64url's alphabet), low bits first, 32 set on all but a
 * number's last character. */
var VARINT_VALUE = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('').forEach(function (c, i) {
  VARINT_VALUE[c.charCodeAt(0)] = i;
});
function varints(s) {
  var n = 0, i, len = s ? s.length : 0, V = VARINT_VALUE;
  for (i = 0; i < len; i++) if (V[s.charCodeAt(i)] < 32) n++;
  /* 30 bits in an int (fast), the rest (bytes past 1 GiB) as a double */
  var out = new Float64Array(n), k = 0, v = 0, shift = 0, big = 0;
  for (i = 0; i < len; i++) {
    var c = V[s.charCodeAt(i)];
    if (c < 0) throw new Error('bad character in the page data at ' + i);
    if (shift < 30) v |= (c & 31) << shift;
    else big += (c & 31) * Math.pow(2, shift);
    if (c < 32) { out[k++] = big ? big + v : v; v = 0; shift = 0; big = 0; }
    else shift += 5;
  }
  return out;
}

function Model(d) {
  var n = d.node_count || 0, parent = new Int32Array(n), frame = new Int32Array(n), N = varints(d.nodes), i = 0;
  for (var j = 0; j < N.length && i < n;) {
    var p = N[j++] - 1, cnt = N[j++];
    for (var k = 0; k < cnt; k++, i++) { parent[i] = k ? i - 1 : p; frame[i] = N[j++]; }
  }
  d.stacks = varints(d.stacks);
  if (d.base) d.base = varints(d.base);
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

/* The stacks of a side ('stacks' or 'base') of one process (pid 0: all):
 * {nodes: innermost node of each, v: [4 arrays of their values]}. */
Model.prototype.deposit = function (side, pid) {
  var st = this.d[side] || [], pids = this.d[side === 'base' ? 'base_pids' : 'pids'], n = st.length / 5, m = 0, j, k;
  var nodes = new Int32Array(n), v = [new Float64Array(n), new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  for (j = 0; j < n; j++) {
    if (pid && pids && pids[j] !== pid) continue;
    nodes[m] = st[5 * j];
    for (k = 0; k < 4; k++) v[k][m] = st[5 * j + 1 + k];
    m++;
  }
  return { nodes: nodes.subarray(0, m), v: v.map(function (a) { return a.subarray(0, m); }) };
};

/* The bottom-up tree: each stack read from its innermost frame out, the
 * stacks that end in the same function merged first. Built a level at a
 * time: the items of a level (an original node, the stack's leaf, the
 * inverted node they hang under) come grouped by that node, so a small map
 * of frame -> child, cleared between groups, finds each child. */
Model.prototype.inverted = function () {
  if (this.inv) return this.inv;
  var td = this.td, parent = td.parent, frame = td.frame, n = td.n, isLeaf = new Uint8Array(n), i, j;
  ['stacks', 'base'].forEach(function (side) {
    var st = this.d[side];
    if (st) for (var k = 0; k < st.length; k += 5) isLeaf[st[k]] = 1;
  }, this);
  var nl = 0;
  for (i = 0; i < n; i++) nl += isLeaf[i];
  var X = new Int32Array(nl), L, V = new Int32Array(nl).fill(-1);
  for (i = 0, j = 0; i < n; i++) if (isLeaf[i]) X[j++] = i;
  L = X.slice();
  /* the child of the current group's node for a frame: kidOf[f] when
   * kidGroup[f] is the group (no map to clear between groups) */
  var kidOf = new Int32Array(this.nf), kidGroup = new Int32Array(this.nf).fill(-1), group = -1;
  var cap = nl * 2 + 16, par = new Int32Array(cap), fr = new Int32Array(cap), nn = 0, leafTo = new Int32Array(n).fill(-1);
  while (X.length) {
    var cnt = X.length, made = new Int32Array(cnt), base = nn;
    for (j = 0; j < cnt; j++) {
      if (j === 0 || V[j] !== V[j - 1]) group++;
      var f = frame[X[j]], w;
      if (kidGroup[f] === group) w = kidOf[f];
      else {
        if (nn === cap) {
          cap *= 2;
          var p2 = new Int32Array(cap), f2 = new Int32Array(cap);
          p2.set(par); f2.set(fr); par = p2; fr = f2;
        }
        w = nn++; par[w] = V[j]; fr[w] = f; kidGroup[f] = group; kidOf[f] = w;
      }
      made[j] = w;
    }
    /* the next level: items whose node has a parent, grouped by the node they made */
    var nmade = nn - base, off = new Int32Array(nmade + 1), keep = 0;
    for (j = 0; j < cnt; j++) {
      if (parent[X[j]] >= 0) { off[made[j] - base + 1]++; keep++; } else leafTo[L[j]] = made[j];
    }
    for (j = 0; j < nmade; j++) off[j + 1] += off[j];
    var X2 = new Int32Array(keep), L2 = new Int32Array(keep), V2 = new Int32Array(keep);
    for (j = 0; j < cnt; j++) {
      if (parent[X[j]] < 0) continue;
      var at = off[made[j] - base]++;
      X2[at] = parent[X[j]]; L2[at] = L[j]; V2[at] = made[j];
    }
    X = X2; L = L2; V = V2;
  }
  this.inv = new Tree(par.slice(0, nn), fr.slice(0, nn), nn, leafTo, true);
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
