"""Every glued number can be traced: its standard error and the cell that computed it.

The notebooks put computed numbers into the prose with ``{glue:text}`name:fmt``` (``toy.prose``);
a number ``name`` whose ``name_se`` is glued too has that standard error. When a page is read,
myst-nb's glue role is wrapped so that its node remembers the name and format; then every such
number becomes ``<span class="toy-glue" data-se="..." data-cell="N">`` (the s.e. formatted as the
number is), and the page ends with a closed "Where this page's numbers come from" list holding
the source of each cell that glued a number — also of the cells whose input the page hides
(``remove-input``). ``reader.js`` shows, on a tap, a click or a hover, the number ± its s.e. and
a link to its cell's source.
"""
import html
import json
from pathlib import Path

from docutils import nodes

SOURCES_ID = "toy-glue-sources"


def _patch_glue_role():
    from myst_nb.ext.glue import roles
    cls = roles.PasteTextRole
    if getattr(cls.run, "_toy_glue", False):
        return
    original = cls.run

    def run(self):
        result, messages = original(self)
        key, _, fmt = self.text.rpartition(":") if ":" in self.text else (self.text, "", "")
        if "::" not in key:
            for node in result:
                if isinstance(node, nodes.inline):
                    node["toy_glue"], node["toy_fmt"] = key, fmt or "s"
        return result, messages

    run._toy_glue = True
    cls.run = run


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def glue_cells(nb):
    """{name: (cell index, text/plain)} of every value the notebook glues."""
    out = {}
    for i, cell in enumerate(nb["cells"]):
        for o in cell.get("outputs", []):
            scrap = o.get("metadata", {}).get("scrapbook")
            if scrap:
                data = o.get("data", {})
                out[scrap["name"]] = (i, data.get(scrap.get("mime_prefix", "") + "text/plain", data.get("text/plain")))
    return out


def _trace(app, doctree):
    path = Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    marked = [n for n in doctree.findall(nodes.inline) if n.get("toy_glue")]
    if not marked:
        return
    from myst_nb.core.variables import format_plain_text
    nb = json.loads(path.read_text(encoding="utf-8"))
    glued, used = glue_cells(nb), {}
    formats = {n["toy_glue"]: n["toy_fmt"] for n in marked}     # how the page shows each name
    for node in marked:
        name, fmt = node["toy_glue"], node["toy_fmt"]
        if name not in glued:
            continue
        cell, _ = glued[name]
        se = ""
        if name + "_se" in glued and glued[name + "_se"][1] is not None:
            # as the page shows the s.e. where it does, else as glued (toy.prose rounds it already)
            se = glued[name + "_se"][1]
            if name + "_se" in formats:
                try:
                    se = format_plain_text(se, formats[name + "_se"])
                except Exception:
                    pass
        used.setdefault(cell, []).append(name)
        attrs = (f'class="toy-glue" tabindex="0" role="button" aria-haspopup="true" aria-expanded="false" '
                 f'data-glue="{html.escape(name)}" data-cell="{cell + 1}"'
                 + (f' data-se="{html.escape(se)}"' if se else ""))
        parent = node.parent
        i = parent.index(node)
        parent.insert(i + 1, nodes.raw("", "</span>", format="html"))
        parent.insert(i, nodes.raw("", f"<span {attrs}>", format="html"))
    if not used:
        return
    items = []
    for cell in sorted(used):
        names = ", ".join(dict.fromkeys(used[cell]))
        tags = nb["cells"][cell].get("metadata", {}).get("tags", [])
        hidden = " (its code is hidden on the page)" if {"remove-input", "remove_input"} & set(tags) else ""
        items.append(f'<div class="toy-glue-cell" id="toy-cell-{cell + 1}"><p>Cell {cell + 1}{hidden} computes '
                     f'<code>{html.escape(names)}</code>:</p>'
                     f'<pre><code>{html.escape(_source(nb["cells"][cell]))}</code></pre></div>')
    block = (f'<section class="toy-glue-sources" id="{SOURCES_ID}"><details>'
             f"<summary>Where this page’s numbers come from ({len(used)} cells)</summary>"
             + "".join(items) + "</details></section>")
    sections = [s for s in doctree.children if isinstance(s, nodes.section)]
    (sections[-1] if sections else doctree).append(nodes.raw("", block, format="html"))


def setup(app):
    _patch_glue_role()
    app.connect("doctree-read", _trace)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
