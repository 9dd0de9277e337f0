/* flame.js - the flame graph: one absolutely placed <div> per frame wide
 * enough to see (at most MAX_FRAMES), each with its function's name, its
 * share of the whole (data-w) and its node (data-node) as attributes, so
 * that what is drawn can be read back. Icicle (roots on top) or flame
 * (roots at the bottom), top-down or inverted, click to focus. */
var ROW = 17, MAX_FRAMES = 12000;
var KIND_NAMES = ['program', 'library', 'runtime', 'JIT', 'unknown'];

/* A colour by module kind (hue), varied by the name (lightness) so that
 * neighbours differ and a function keeps its colour. */
function frameColour(kind, name) {
  var h = 0;
  for (var i = 0; i < name.length && i < 24; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  var v = (h >>> 0) % 100 / 100;
  switch (kind) {
    case 0: return 'hsl(' + (8 + 22 * v).toFixed(0) + ',80%,' + (58 + 10 * v).toFixed(0) + '%)';
    case 1: return 'hsl(' + (44 + 14 * v).toFixed(0) + ',75%,' + (55 + 10 * v).toFixed(0) + '%)';
    case 2: return 'hsl(' + (200 + 20 * v).toFixed(0) + ',60%,' + (66 + 10 * v).toFixed(0) + '%)';
    case 3: return 'hsl(' + (110 + 25 * v).toFixed(0) + ',55%,' + (55 + 10 * v).toFixed(0) + '%)';
    default: return 'hsl(0,0%,' + (72 + 10 * v).toFixed(0) + '%)';
  }
}
function diffColour(grew, of) {
  var a = Math.min(1, Math.abs(grew) / (of || 1));
  return grew >= 0 ? 'hsl(0,85%,' + (92 - 40 * a).toFixed(0) + '%)' : 'hsl(220,85%,' + (92 - 40 * a).toFixed(0) + '%)';
}

/* host: the element to draw in; st: the page's state (model, values,
 * metric, search hits...). */
function Flame(host, st) {
  this.host = host; this.st = st; this.focus = -1;
  var self = this;
  host.addEventListener('click', function (e) {
    var t = e.target.closest ? e.target.closest('.fr') : null;
    if (!t) return;
    self.focus = +t.getAttribute('data-node');
    self.draw();
  });
  /* a frame's tooltip, made when the pointer first comes over it (making
   * 12,000 up front was a fifth of the graph's drawing time) */
  host.addEventListener('mouseover', function (e) {
    var t = e.target.closest ? e.target.closest('.fr') : null;
    if (t && !t.title && self.titleOf) t.title = self.titleOf(+t.getAttribute('data-node'));
  });
}
/* A search's marks on the frames drawn, without drawing them again
 * (12,000 frames take 0.3-0.6 s to build; this, a few ms). */
Flame.prototype.mark = function () {
  var hits = this.st.hits ? this.st.hits.hit : null, fr = this.drawnFrames || [], divs = this.drawnDivs || [];
  for (var i = 0; i < divs.length; i++) {
    var on = !!(hits && hits[fr[i]]), c = divs[i].classList;
    if (c.contains('match') !== on) c.toggle('match', on);
  }
};
Flame.prototype.draw = function () {
  var st = this.st, m = st.model, tree = st.tree(), vals = st.values(tree), cum = vals.cum[st.metric];
  var base = st.diff ? st.baseValues(tree).cum[st.metric] : null;
  var W = Math.max(400, this.host.clientWidth || 1180), host = this.host;
  var total = 0, roots = tree.kids(-1), i;
  for (i = 0; i < roots.length; i++) total += cum[roots[i]];
  if (this.focus >= tree.n) this.focus = -1;
  var focus = this.focus, fsum = focus < 0 ? total : cum[focus];
  var path = [];
  for (var x = focus; x >= 0; x = tree.parent[x]) path.unshift(x);
  var frames = [], maxDepth = path.length, drawn = 0;
  /* the focused node's ancestors: full width above it */
  path.forEach(function (x, d) { frames.push([x, d, 0, W]); });
  var queue = focus < 0 ? [[-1, 0, 0]] : [[focus, path.length - 1, 0]];
  var minPx = 1;
  while (queue.length && drawn < MAX_FRAMES) {
    var q = queue.pop(), p = q[0], kids = Array.from(p < 0 ? roots : tree.kids(p));
    kids.sort(function (a, b) { return cum[b] - cum[a]; });
    var x0 = q[2], dk = p < 0 ? 0 : q[1] + 1;
    for (i = 0; i < kids.length; i++) {
      var k = kids[i], w = fsum > 0 ? cum[k] / fsum * W : 0;
      if (w < minPx) break;
      frames.push([k, dk, x0, w]); drawn++;
      if (dk + 1 > maxDepth) maxDepth = dk + 1;
      queue.push([k, dk, x0]);
      x0 += w;
    }
  }
  var H = (maxDepth + 1) * ROW, flame = st.flameUp, frag = document.createDocumentFragment();
  var hits = st.hits ? st.hits.hit : null, fmt = METRICS[st.metric][2];
  var drawnFrames = this.drawnFrames = [], drawnDivs = this.drawnDivs = [];
  var colours = this.colours || (this.colours = []); /* a function keeps its colour: made once */
  this.titleOf = function (node) {
    var fr = tree.frame[node], name = m.name(fr), v = cum[node], share = total > 0 ? v / total : 0;
    return name + (m.where(fr) ? '\n' + m.where(fr) : '') + '\n' + (m.module(fr) || '?') + ' (' +
      (KIND_NAMES[m.kind(fr)] || '?') + ')\n' + fmt(v) + ' ' + METRICS[st.metric][1] + ', ' +
      (share * 100).toFixed(2) + '%' + (base ? '\nbase ' + fmt(base[node]) + ', grew ' + fmt(v - base[node]) : '');
  };
  frames.forEach(function (f) {
    var node = f[0], fr = tree.frame[node], name = m.name(fr), div = el('div', f[3] > 35 ? name : '', 'fr');
    var v = cum[node], share = total > 0 ? v / total : 0;
    var colour;
    if (base) {
      var grew = v - base[node];
      colour = base[node] === 0 && v > 0 ? 'hsl(0,90%,50%)' : diffColour(grew, Math.max(v, base[node]));
      div.setAttribute('data-grew', String(Math.round(grew)));
    } else {
      colour = colours[fr] || (colours[fr] = frameColour(m.kind(fr), name));
    }
    /* one style string, not four properties set one by one */
    div.style.cssText = 'left:' + f[2].toFixed(1) + 'px;width:' + Math.max(0, f[3] - 1).toFixed(1) + 'px;top:' +
      (flame ? H - (f[1] + 1) * ROW : f[1] * ROW) + 'px;background:' + colour;
    if (hits && hits[fr]) div.className = 'fr match';
    if (node === focus) div.className += ' focus';
    drawnFrames.push(fr); drawnDivs.push(div);
    div.setAttribute('data-n', name);
    div.setAttribute('data-w', share.toFixed(4));
    div.setAttribute('data-node', String(node));
    div.setAttribute('data-kind', KIND_NAMES[m.kind(fr)] || 'unknown');
    frag.appendChild(div);
  });
  host.textContent = '';
  if (!frames.length) { /* nothing sampled (or nothing of this metric, process) */
    host.style.height = '';
    host.appendChild(el('p', 'No ' + METRICS[st.metric][1] + ' in the stacks of this profile.', 'note'));
    return;
  }
  host.style.height = H + 'px';
  host.setAttribute('data-frames', String(frames.length));
  host.setAttribute('data-total', String(Math.round(total)));
  host.appendChild(frag);
};
