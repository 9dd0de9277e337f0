/* diff.js - the diff page's lists: stacks that grew (the most first),
 * stacks that are new, stacks that shrank, by the chosen metric. Stacks of
 * both profiles are matched by their frames (one call tree holds both). */
function drawDiff(host, st) {
  var m = st.model, k = st.metric, fmt = METRICS[k][2];
  /* a stack's values: its innermost node's own (self) values in the tree */
  var cur = st.values(m.td).self[k], base = st.baseValues(m.td).self[k], seen = new Uint8Array(m.td.n), rows = [];
  ['stacks', 'base'].forEach(function (side) {
    var a = m.d[side] || [];
    for (var j = 0; j < a.length; j += 5) {
      var node = a[j];
      if (seen[node]) continue;
      seen[node] = 1;
      rows.push({ node: node, cur: cur[node], base: base[node], grew: cur[node] - base[node] });
    }
  });
  host.textContent = '';
  function list(id, title, pick, order) {
    var r = rows.filter(pick).sort(order);
    host.appendChild(el('h3', title + ' (' + r.length + ')'));
    var t = el('table');
    t.id = id;
    var hr = el('tr');
    ['stack', 'base', 'now', 'change'].forEach(function (h, i) { hr.appendChild(el('th', h, i ? '' : 'n')); });
    t.appendChild(hr);
    r.slice(0, 50).forEach(function (x) {
      var tr = el('tr');
      tr.setAttribute('data-node', String(x.node));
      tr.appendChild(el('td', m.stackLabel(x.node, 5), 'n'));
      tr.appendChild(el('td', fmt(x.base)));
      tr.appendChild(el('td', fmt(x.cur)));
      tr.appendChild(el('td', (x.grew > 0 ? '+' : '') + fmt(x.grew)));
      t.appendChild(tr);
    });
    host.appendChild(t);
  }
  var bigger = function (a, b) { return b.grew - a.grew; };
  list('diff-grew', 'Grew', function (x) { return x.grew > 0; }, bigger);
  list('diff-new', 'New stacks (not in the base)', function (x) { return x.base === 0 && x.cur > 0; }, bigger);
  list('diff-shrank', 'Shrank', function (x) { return x.grew < 0; }, function (a, b) { return a.grew - b.grew; });
}
