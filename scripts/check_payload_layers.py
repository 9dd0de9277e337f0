#!/usr/bin/env python3
"""check_payload_layers.py - the payload's include rule (docs/DESIGN-NOTES.md, Layout).

payload/ is in folders by stage (sys < python < record < interpose < census
< serve: record reads Python frames, interpose/pymalloc.c samples with record).
The rule, checked on the #include "..." lines of every payload file:
  - a payload file includes only common/ and payload/ headers (nothing of
    cli/ or injector/);
  - common/ includes nothing of payload/, cli/ or injector/;
  - every payload source is in a folder (none at payload/'s top);
  - no include circle across folders: the folders form layers, each
    including only folders below it;
  - a file includes of another folder only that folder's face header,
    payload/F/F.h (payload/record/record.h...): what the stages above may
    use of a stage is that one header; the rest of the folder is its own.
    A folder nothing includes from outside (serve/, the top: its face is
    payload/exports.map) needs no face;
  - inside a folder, no circle of more than two units (a unit is x.c and
    x.h together).
Prints the layers found (lowest first) and exits 1 on any breach, naming
the includes that make it. Usage: check_payload_layers.py [ROOT] (default: .)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(d, f), root)


def includes(root, path):
    """The quoted includes of path, a name found beside the file (the
    compiler looks there first) given as its path from the root."""
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        names = INCLUDE.findall(f.read())
    here = os.path.dirname(path)
    return [os.path.join(here, n) if os.path.exists(os.path.join(root, here, n)) else n
            for n in names]


def unit(path):
    return os.path.splitext(path)[0]


def folder(path):
    return os.path.dirname(path)


def sccs(nodes, edges):
    """Strongly connected components (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    errors = []
    why = {}  # (from unit, to unit) -> "file includes header"
    unit_edges, folder_edges, units, folders = {}, {}, set(), set()

    for path in sources(root, 'common'):
        for inc in includes(root, path):
            if not inc.startswith('common/'):
                errors.append(f'{path}: includes "{inc}" (common/ includes only common/)')

    for path in sources(root, 'payload'):
        if folder(path) == 'payload':
            errors.append(f'{path}: not in a folder (payload/sys, record, interpose, census or serve)')
        u, fo = unit(path), folder(path)
        units.add(u)
        folders.add(fo)
        for inc in includes(root, path):
            if inc.startswith('common/'):
                continue
            if not inc.startswith('payload/'):
                errors.append(f'{path}: includes "{inc}" (a payload file includes only common/ '
                              'and payload/ headers)')
                continue
            if not os.path.exists(os.path.join(root, inc)):
                errors.append(f'{path}: includes "{inc}", which does not exist')
                continue
            v = unit(inc)
            if v == u:
                continue
            unit_edges.setdefault(u, set()).add(v)
            why.setdefault((u, v), f'{path} includes {inc}')
            if folder(inc) != fo:
                name = os.path.basename(folder(inc))
                face = f'{folder(inc)}/{name}.h'
                if inc != face:
                    errors.append(f'{path}: includes "{inc}"; of {folder(inc)}/ it may include only '
                                  f'its face header "{face}"')
                folder_edges.setdefault(fo, set()).add(folder(inc))
                why.setdefault((fo, folder(inc)), f'{path} includes {inc}')

    for comp in sccs(folders, folder_edges):
        if len(comp) > 1:
            lines = [f'  {why[(a, b)]}' for a in comp for b in sorted(folder_edges.get(a, ()))
                     if b in comp]
            errors.append('include circle across folders: ' + ' <-> '.join(comp) + '\n'
                          + '\n'.join(lines))

    for comp in sccs(units, unit_edges):
        if len(comp) > 2:
            lines = [f'  {why[(a, b)]}' for a in comp for b in sorted(unit_edges.get(a, ()))
                     if b in comp]
            errors.append(f'include circle of {len(comp)} units: ' + ', '.join(comp) + '\n'
                          + '\n'.join(lines))

    if errors:
        for e in errors:
            print('check_payload_layers: ' + e, file=sys.stderr)
        return 1

    # The layers, lowest first: a folder's layer is one more than the
    # highest layer it includes.
    level = {}

    def depth(f):
        if f not in level:
            level[f] = 1 + max((depth(g) for g in folder_edges.get(f, ())), default=-1)
        return level[f]

    for f in folders:
        depth(f)
    for f in sorted(folders, key=lambda f: (level[f], f)):
        below = ', '.join(sorted(os.path.basename(g) for g in folder_edges.get(f, ()))) or '-'
        print(f'layers: {level[f]} {f} (includes {below})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
