/* census.js - the census (docs/JSON.md "Census"): in use, free and
 * unreachable; the blocks grouped by type and by size; the roots with the
 * bytes only they keep alive. */
function censusTable(id, cols, rows) {
  var t = el('table');
  t.id = id;
  var hr = el('tr');
  cols.forEach(function (c) { hr.appendChild(el('th', c[1], c[2] ? '' : 'n')); });
  t.appendChild(hr);
  rows.forEach(function (r) {
    var tr = el('tr');
    cols.forEach(function (c) {
      var v = r[c[0]];
      tr.appendChild(el('td', v === null || v === undefined ? '' : c[2] ? c[2](v) : String(v), c[2] ? '' : 'n'));
    });
    t.appendChild(tr);
  });
  return t;
}

function drawCensus(host, c, pid, comm) {
  host.appendChild(el('h2', 'Census' + (pid ? ' of pid ' + pid + (comm ? ' (' + comm + ')' : '') : '')));
  var inuse = c.in_use || {}, free = c.free || {}, un = c.unreachable || {};
  var sum = el('p');
  sum.id = 'census-summary';
  sum.textContent = 'in use ' + human(inuse.bytes || 0) + ' in ' + count(inuse.blocks || 0) + ' blocks; free ' +
    human(free.bytes || 0) + ' in ' + count(free.blocks || 0) + ' blocks; unreachable ' + human(un.bytes || 0) +
    ' in ' + count(un.blocks || 0) + ' blocks' + (c.mmapped ? '; mmapped ' + human(c.mmapped.bytes || 0) : '') +
    (c.wall_ms !== undefined ? '; took ' + c.wall_ms + ' ms (the process held ' + (c.stall_ms || 0) + ' ms)' : '');
  host.appendChild(sum);
  /* a bar: in use (reachable), unreachable, free */
  var total = (inuse.bytes || 0) + (free.bytes || 0), bar = el('div', null, 'cbar');
  bar.id = 'census-bar';
  [['reachable', Math.max(0, (inuse.bytes || 0) - (un.bytes || 0)), '#6a6'], ['unreachable', un.bytes || 0, '#d33'],
   ['free', free.bytes || 0, '#bbb']].forEach(function (p) {
    var s = el('span', p[1] / (total || 1) > 0.08 ? p[0] + ' ' + human(p[1]) : '');
    s.style.width = (p[1] / (total || 1) * 100).toFixed(2) + '%';
    s.style.background = p[2];
    s.title = p[0] + ': ' + human(p[1]);
    bar.appendChild(s);
  });
  host.appendChild(bar);
  var stackCol = ['since_attach_stack', 'allocated (since attach) by'];
  if (un.groups && un.groups.length) {
    host.appendChild(el('h3', 'Unreachable (no pointer found from any root)'));
    host.appendChild(censusTable('census-unreachable', [['type', 'type'], ['size', 'size', count],
      ['blocks', 'blocks', count], ['bytes', 'bytes', human]], un.groups));
  }
  if (c.types && c.types.length) {
    host.appendChild(el('h3', 'By type'));
    host.appendChild(censusTable('census-types', [['type', 'type'], ['blocks', 'blocks', count], ['bytes', 'bytes', human],
      ['unreachable_bytes', 'unreachable', human], ['since_attach_bytes', 'since attach', human], stackCol], c.types));
  }
  if (c.sizes && c.sizes.length) {
    host.appendChild(el('h3', 'By size'));
    host.appendChild(censusTable('census-sizes', [['size', 'size', count], ['blocks', 'blocks', count],
      ['bytes', 'bytes', human], ['unreachable_blocks', 'unreachable blocks', count], stackCol], c.sizes));
  }
  if (c.roots && c.roots.length) {
    host.appendChild(el('h3', 'Roots, by the bytes only they keep alive'));
    host.appendChild(censusTable('census-roots', [['name', 'root'], ['kind', 'kind'], ['retained_bytes', 'retained', human],
      ['retained_blocks', 'blocks', count]], c.roots));
  }
  if (c.python && c.python.types && c.python.types.length) {
    host.appendChild(el('h3', 'Python objects by type'));
    host.appendChild(censusTable('census-python', [['type', 'type'], ['objects', 'objects', count], ['bytes', 'bytes', human]],
      c.python.types));
  }
}
