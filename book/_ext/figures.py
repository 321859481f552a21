"""Figures a reader can read and enlarge, on any screen.

- **Alt text that says what a figure shows.** myst-nb gives every PNG output the image file's
  path as its alt text. Here each figure's alt text is made when the book is built from the cell
  that drew it: the titles it passes to matplotlib (``title=``, ``set_title``, ``suptitle``), its
  panel count (``plots.figure(2, ...)``, ``subplots(1, 2)``) and axis labels; a cell that names no
  title gets the sentence of the text just above it. A scrubber's frames get the same description
  (its value follows: "..., at b = 0.50"), and its slider an accessible name.
- **No link to the bare image.** Sphinx wraps an image that has a size in a link to the image file
  (``html_scaled_image_link``, off in _config.yml); a tap opened a bare PNG. A tap now enlarges the
  figure in place (``reader.js``).
- **Readable on a phone.** Each figure sits in a ``toy-figure`` box that carries its design width
  (``--toy-w``, CSS px); below 600 px the figure keeps at least 75 % of it (tick labels, 10 pt at
  80 dpi, stay >= 8 CSS px) and the box scrolls sideways, with a hint (``reader.css``, ``reader.js``).
"""
import ast
import base64
import html
import json
import re
from pathlib import Path

from docutils import nodes

MIN_SCALE = 0.75          # of a figure's design width, below 600 px (reader.css uses the same)
TITLE_CALLS = {"set_title", "suptitle", "title"}
LABEL_KWS = {"xlabel", "ylabel"}
ROLE = re.compile(r"\{([a-z:]+)\}`([^`]*)`")
SCRUBBER_IMG = re.compile(r'<img id="([^"]*)-img" src="data:image/svg\+xml;base64,([^"]+)" alt="figure at ([^"]*)" style="([^"]*)"')
SCRUBBER_INPUT = re.compile(r'<input type="range"')
SCRUBBER_NAME = re.compile(r"<span>([^<]*?) = <b ")


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _const(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):   # an f-string: its literal parts
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    return None


def figure_text(src):
    """(titles, axis labels, panels) that the cell's code gives its figure."""
    lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return [], [], 1
    titles, labels, panels = [], [], 1
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if fn in TITLE_CALLS and node.args and _const(node.args[0]):
            titles.append(_const(node.args[0]))
        if fn in ("set_xlabel", "set_ylabel") and node.args and _const(node.args[0]):
            labels.append(_const(node.args[0]))
        for kw in node.keywords:
            value = _const(kw.value)
            if value and kw.arg == "title":
                titles.append(value)
            elif value and kw.arg in LABEL_KWS:
                labels.append(value)
        if fn == "figure" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, int):
            panels = max(panels, node.args[0].value)
        if fn == "subplots":
            dims = [a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, int)]
            if dims:
                panels = max(panels, dims[0] * (dims[1] if len(dims) > 1 else 1))
    return titles, labels, panels


def _plain(text, glued):
    """Markdown made plain: roles (a glued number as its value), maths, links, emphasis, fences."""
    from myst_nb.core.variables import format_plain_text
    from reader_site import tex_to_text

    def role(m):
        name, body = m.group(1), m.group(2)
        if name == "glue:text":
            key, _, fmt = body.partition(":")
            return format_plain_text(glued[key], fmt or "s") if key in glued else "…"
        return re.sub(r"\s*<[^>]*>$", "", body)

    keep = []
    fence = None
    for line in text.splitlines():
        m = re.match(r"^\s*(`{3,}|:{3,})", line)
        if m:
            fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1))
            continue
        if not line.lstrip().startswith(("#", "|", ":")):
            keep.append(line)
    t = ROLE.sub(role, "\n".join(keep))
    t = re.sub(r"\$\$(.+?)\$\$|\$(.+?)\$", lambda m: tex_to_text(m.group(1) or m.group(2)), t, flags=re.S)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"(?<!\w)[*_]{1,3}|[*_]{1,3}(?!\w)|`", "", t)
    return " ".join(t.split())


def _intro(cells, i, glued):
    """The last sentence of the text just above cell i (the sentence that introduces its figure)."""
    for j in range(i - 1, -1, -1):
        if cells[j]["cell_type"] == "markdown":
            text = _plain(_source(cells[j]), glued)
            sentences = [s for s in re.split(r"(?<=[.!?:])\s+", text) if len(s) > 20]
            return sentences[-1].rstrip(":") if sentences else ""
    return ""


def describe(cells, i, glued):
    """A sentence saying what cell i's figure shows."""
    from reader_site import tex_to_text
    titles, labels, panels = figure_text(_source(cells[i]))
    clean = lambda s: tex_to_text(s.replace("$", "")) if "$" in s else s
    titles, labels = [clean(t) for t in titles], [clean(s) for s in labels]
    kind = f"Figure in {panels} panels" if panels > 1 else "Figure"
    if titles:
        text = f"{kind}: " + "; ".join(dict.fromkeys(titles))
        if labels:
            text += " (axes: " + ", ".join(dict.fromkeys(labels)) + ")"
    else:
        intro = _intro(cells, i, glued)
        text = f"{kind} for: {intro}" if intro else kind + " drawn by the code above"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297].rsplit(" ", 1)[0] + " …"


def glued_values(nb):
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook")
            plain = out.get("data", {}).get((scrap or {}).get("mime_prefix", "") + "text/plain")
            if scrap and plain is not None:
                values[scrap["name"]] = plain
    return values


def svg_width_px(b64):
    """The width of a base64 SVG in CSS px (matplotlib writes it in pt)."""
    head = base64.b64decode(b64[:1200] + "=" * (-len(b64[:1200]) % 4), validate=False)[:700].decode("utf-8", "ignore")
    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)(pt|px)?"', head)
    if not m:
        return None
    return float(m.group(1)) * (4 / 3 if m.group(2) == "pt" else 1)


def scrubber(raw_html, desc):
    """A scrubber's HTML with the figure's description in its alt text, its slider named, and
    its figure in a ``toy-figure`` box that knows its design width."""
    name = SCRUBBER_NAME.search(raw_html)
    name = html.unescape(name.group(1)) if name else "value"

    def img(m):
        width = svg_width_px(m.group(2))
        style = (f"--toy-w: {width:.0f}; " if width else "") + m.group(4)
        alt = html.escape(f"{desc}, at {html.unescape(m.group(3))}", quote=True)
        return (f'<div class="toy-figure"><img id="{m.group(1)}-img" src="data:image/svg+xml;base64,{m.group(2)}" '
                f'alt="{alt}" style="{style}"')

    out = SCRUBBER_IMG.sub(img, raw_html, count=1)
    out = re.sub(r'(<img id="[^"]*-img"[^>]*>)', r"\1</div>", out, count=1)
    label = html.escape(f"{name}: the value the figure below is drawn at", quote=True)
    return SCRUBBER_INPUT.sub(f'<input type="range" aria-label="{label}"', out, count=1)


def _figures(app, doctree):
    path = Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells, glued = nb["cells"], glued_values(nb)
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code" or cell.get("cell_index") is None:
            continue
        i = cell["cell_index"]
        images = [im for im in cell.findall(nodes.image)]
        raws = [r for r in cell.findall(nodes.raw) if "toy-scrubber" in r.astext()]
        if not images and not raws:
            continue
        desc = describe(cells, i, glued)
        for k, im in enumerate(images):
            im["alt"] = desc + (f" ({k + 1} of {len(images)})" if len(images) > 1 else "")
            box = nodes.container(classes=["toy-figure"])
            im.replace_self(box)
            box += im
        for r in raws:
            r.replace_self(nodes.raw("", scrubber(r.astext(), desc), format=r.get("format", "html")))


# ---- after the pages are written: each PNG's box knows its design width (myst-nb's inline width)
FIGURE_IMG = re.compile(r'(<div class="toy-figure docutils container">\s*<img [^>]*?style=")width: (\d+(?:\.\d+)?)px;')


def mark_widths(text):
    return FIGURE_IMG.sub(lambda m: f"{m.group(1)}--toy-w: {float(m.group(2)):.0f}; width: {m.group(2)}px;", text)


def _mark_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        if page.relative_to(out).parts[0] in ("_static", "_sources", "_images"):
            continue
        text = page.read_text(encoding="utf-8")
        new = mark_widths(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("doctree-read", _figures)
    app.connect("build-finished", _mark_pages, priority=250)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
