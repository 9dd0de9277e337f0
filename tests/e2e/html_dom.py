"""html_dom - what headless Chromium's --dump-dom of an HTML report shows
(tests/e2e/format_html*.sh): the flame graph's frames, a table's rows, an
element's text. Parsed with the standard library's HTMLParser."""
from html.parser import HTMLParser
import re


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.frames = []       # the flame graph's <div class="fr ...">: attributes, style parsed
        self.tables = {}       # id -> rows, each a list of cell texts
        self.texts = {}        # id -> text of any element with an id
        self.attrs = {}        # id -> attributes
        self._table = None
        self._row = None
        self._cell = None
        self._open = []        # [id, depth, text] of elements with an id being read
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("input", "br", "img", "meta", "option"):
            self._depth += 1
        if tag == "div" and "fr" in (a.get("class") or "").split():
            style = dict(kv.split(":", 1) for kv in (a.get("style") or "").split(";") if ":" in kv)
            a["px"] = {k.strip(): float(re.sub("px$", "", v.strip())) for k, v in style.items()
                       if k.strip() in ("left", "width", "top")}
            self.frames.append(a)
        if "id" in a:
            self.attrs[a["id"]] = a
            if tag not in ("input", "br", "img", "meta", "option"):
                self._open.append([a["id"], self._depth, []])
        if tag == "table" and "id" in a:
            self._table = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = self._row = None
        while self._open and self._open[-1][1] >= self._depth:
            i, _, t = self._open.pop()
            self.texts[i] = "".join(t)
        if tag not in ("input", "br", "img", "meta", "option"):
            self._depth -= 1

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        for o in self._open:
            o[2].append(data)


def load(path):
    d = _Dom()
    d.feed(open(path, encoding="utf-8", errors="replace").read())
    return d


def frames_named(dom, name):
    return [f for f in dom.frames if f.get("data-n") == name]
