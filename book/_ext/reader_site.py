"""The book's own Sphinx additions for readers (loaded from _config.yml, `local_extensions`).

- **Section numbers per part.** The sidebar, headings and exercises say "I.8", "II.4", "III.5":
  part (roman) and the section number of the notebook's file name (``part1/s08_...`` -> I.8), so
  they match the prose's "§I.8" references (``scripts/link_sections.py``) even where a part has
  gaps (Part III has §3, §5, §6).
- **Maths typeset when the book is built** (``static_math.py``): each formula is MathJax's SVG,
  made under node at build time; no page loads MathJax or a maths font (they were 1.7 MB).
- **Theme CSS cut to what the pages use** (``slim_css.py``: PurgeCSS over the built pages).
- **Figures** (``figures.py``): alt text from the cell that drew the figure; no link to the bare
  image file; on a phone a figure keeps a readable width and scrolls sideways in its box.
- **Traceable numbers** (``glue_trace.py``): every glued number shows its ± s.e. and the cell that
  computed it.
- **No icon script.** The theme loads Font Awesome's 1.49 MB script to draw some fifteen icons.
  ``templates/static/webpack-macros.html`` is the theme's own file without that script (a unit
  test compares the two), and ``_static/icons.css`` draws the icons the pages use from the same
  icon set, as CSS masks.
- **Search results a reader can use.** Sphinx's search page fetches each result's page to show a
  line of its text (which a browser refuses from file://), and shows whatever comes first: the
  page's buttons and contents list, or raw TeX. ``_static/search-text.js`` holds each page's
  title, section number and prose as sentences under their section titles (no furniture, no code,
  TeX turned into plain text); ``reader.js`` shows the sentence that holds the query under its
  section's title, and ranks a page whose title matches the query first.
- **Solution titles.** "Solution to" and the exercise's link are separated by a space outside
  the link.
- **No widget JavaScript.** The live ipywidgets view is dropped from the HTML (there is no
  kernel), so the widget state is left out of every page (and ``nb_ipywidgets_js: {}`` in
  _config.yml leaves out require.js and the widget embed script); the kernel-free scrubber needs
  none of them. Scripts that two extensions both add (sphinx-thebe's
  ``const THEBE_JS_URL``, the togglebutton selector) are kept once.
"""
import json
import os
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

from docutils import nodes

import toc_sections  # noqa: E402  (book/_ext is on the path: _config.yml)

TEMPLATES = Path(__file__).resolve().parent / "templates"


def section_label(docname, toc=None):
    """'I.8' for the eighth file of Part I in _toc.yml, None for pages outside the parts."""
    return toc_sections.labels(toc or toc_sections.TOC).get(docname)


def _relabel(env):
    """Replace each section's book-wide chapter number by its part label: (8, 2) -> ('I.8', 2)."""
    toc = Path(env.srcdir) / "_toc.yml"
    for docname, secnums in env.toc_secnumbers.items():
        label = section_label(docname, toc if toc.exists() else None)
        if label is None:
            continue
        new = lambda num: (label,) + tuple(num[1:]) if num else num
        env.toc_secnumbers[docname] = {anchor: new(num) for anchor, num in secnums.items()}
        for ref in env.tocs[docname].findall(nodes.reference):
            if ref.get("secnumber"):
                ref["secnumber"] = new(ref["secnumber"])
        if env.titles[docname].get("secnumber"):
            env.titles[docname]["secnumber"] = new(env.titles[docname]["secnumber"])


def _wrap_section_numbering(app):
    # at builder-inited every extension has installed its numbering (sphinx-multitoc-numbering
    # patches the base class, sphinx-external-toc replaces the collector by a subclass)
    try:
        from sphinx_external_toc.collectors import TocTreeCollectorWithStyles as TocTreeCollector
    except ImportError:
        from sphinx.environment.collectors.toctree import TocTreeCollector
    assign = TocTreeCollector.assign_section_numbers
    if getattr(assign, "_reader_site", False):
        return

    def assign_section_numbers(self, env):
        changed = assign(self, env)
        _relabel(env)
        return changed

    assign_section_numbers._reader_site = True
    TocTreeCollector.assign_section_numbers = assign_section_numbers


def _script_key(js):
    # the same inline script can come once with filename None and once with "" (sphinx-thebe)
    return (js.filename or "", js.attributes.get("body", ""), js.attributes.get("type", ""))


def _trim_scripts(app, pagename, templatename, context, doctree):
    scripts, seen, kept = context.get("script_files", []), set(), []
    for js in scripts:
        if js.attributes.get("type") == "application/vnd.jupyter.widget-state+json":
            continue
        if _script_key(js) in seen:
            continue
        seen.add(_script_key(js))
        kept.append(js)
    scripts[:] = kept


# ---- icons: the theme's Font Awesome script replaced by CSS masks of the icons the pages use
FA_ICON = re.compile(r'(?:"([a-z0-9-]+)"|\b([a-z0-9]+)):\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]*",'
                     r'("(?:[^"\\]|\\.)*"|\[(?:"(?:[^"\\]|\\.)*",?)+\])\]')
FA_CLASS = re.compile(r'class="[^"]*\bfa-(?:solid|regular)\b[^"]*"|class="[^"]*\bfa[sr]\b[^"]*"')
FA_NAME = re.compile(r"\bfa-([a-z0-9-]+)")
FA_NOT_ICONS = {"solid", "regular", "brands", "lg", "xs", "sm", "xl", "2x", "fw", "spin"}


def solid_icons(fontawesome_js):
    """{name: (width, height, svg path)} of the solid icon pack in the theme's fontawesome.js
    (the pack registered as "fas"; the regular pack reuses many names)."""
    end = fontawesome_js.index('d("fas",p)')
    begin = fontawesome_js.rindex("var p={", 0, end)
    icons = {}
    for m in FA_ICON.finditer(fontawesome_js, begin, end):
        path = m.group(5)
        path = json.loads(path) if path.startswith('"') else " ".join(json.loads(path))
        icons[m.group(1) or m.group(2)] = (int(m.group(3)), int(m.group(4)), path)
    return icons


def icons_css(names, icons):
    """CSS that draws each named icon as a mask over currentColor (no font, no script)."""
    out = ["/* Font Awesome Free solid icons (CC BY 4.0) the pages use, drawn as CSS masks:",
           "   written by book/_ext/reader_site.py in place of the theme's 1.49 MB icon script.",
           "   Their elements use the text's font: else the icon font would still be downloaded. */"]
    selectors = [f".fa-solid.fa-{n}, .fas.fa-{n}" for n in sorted(names)]
    out.append(",\n".join(selectors) + " { font-family: inherit; }")
    out.append(",\n".join(f"{s.split(', ')[0]}::before, {s.split(', ')[1]}::before" for s in selectors)
               + ' { content: ""; display: inline-block; height: 1em; vertical-align: -0.125em;'
               " background-color: currentColor; -webkit-mask: var(--toy-icon) center / contain no-repeat;"
               " mask: var(--toy-icon) center / contain no-repeat; }")
    for name in sorted(names):
        if name not in icons:
            raise ValueError(f"icon fa-{name} is not in the theme's solid icon set")
        w, h, path = icons[name]
        svg = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {w} {h}'><path d='{path}'/></svg>"
        url = "data:image/svg+xml," + quote(svg, safe=" /:='<>")
        out.append(f'.fa-solid.fa-{name}::before, .fas.fa-{name}::before {{ width: {w / h:.4f}em; --toy-icon: url("{url}"); }}')
    return "\n".join(out) + "\n"


def _write_icons(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    names = set()
    for page in out.rglob("*.html"):
        if page.parts[len(out.parts)] in ("_static", "_sources", "_images"):
            continue
        for cls in FA_CLASS.findall(page.read_text(encoding="utf-8")):
            names.update(n for n in FA_NAME.findall(cls) if n not in FA_NOT_ICONS)
    js = (out / "_static" / "scripts" / "fontawesome.js").read_text(encoding="utf-8")
    _atomic_write(out / "_static" / "icons.css", icons_css(names, solid_icons(js)))


# ---- search summaries from file://
class _MainText(HTMLParser):
    """The text of a built page's article (else its main content), without scripts, styles,
    buttons and SVG markup."""

    SKIP = {"script", "style", "svg", "button"}

    def __init__(self, start):
        super().__init__(convert_charrefs=True)
        self.start = start
        self.depth = 0          # > 0 inside [role=main]
        self.skip = 0
        self.parts = []

    def handle_starttag(self, tag, attrs):
        if self.depth:
            if tag not in VOID:
                self.depth += 1
            if tag in self.SKIP:
                self.skip = self.skip or self.depth
        elif self.start(dict(attrs)):
            self.depth = 1

    def handle_endtag(self, tag):
        if self.depth and tag not in VOID:
            if self.skip == self.depth:
                self.skip = 0
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.parts.append(data)

    def text(self):
        return " ".join(" ".join(self.parts).split())


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def page_text(html):
    for start in (lambda a: "bd-article" in (a.get("class") or "").split(), lambda a: a.get("role") == "main"):
        parser = _MainText(start)
        parser.feed(html)
        if parser.text():
            return parser.text()
    return ""


# TeX in a search snippet: the source of a formula made readable as plain text
TEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η",
    "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Delta": "Δ", "Gamma": "Γ",
    "Pi": "Π", "Sigma": "Σ", "Omega": "Ω", "Theta": "Θ", "nabla": "∇", "sum": "Σ", "prod": "Π", "cdot": "·",
    "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "infty": "∞", "pm": "±", "in": "∈",
    "ldots": "…", "dots": "…", "cdots": "…", "mid": "|", "sim": "~", "propto": "∝", "partial": "∂",
    "log": "log", "exp": "exp", "min": "min", "max": "max", "arg": "arg", "lvert": "|", "rvert": "|",
    "lVert": "‖", "rVert": "‖", "langle": "⟨", "rangle": "⟩", "quad": " ", "qquad": " ", "%": "%",
    "hat": "", "bar": "", "tilde": "", "vec": "", "widehat": "",
}
TEX_DROP = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg|bigl|bigr|Bigl|Bigr|displaystyle|textstyle|limits|nolimits)\b")
TEX_WRAP = re.compile(r"\\(?:text|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|operatorname|boldsymbol|"
                      r"hat|bar|tilde|widehat|overline|underline|vec|textbf|textit|emph)\s*\{([^{}]*)\}")
TEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def tex_to_text(tex):
    """A formula's TeX as readable plain text: \\frac{a}{b} -> a/b, \\theta -> θ, no backslash left."""
    t = TEX_DROP.sub("", tex)
    for _ in range(4):
        t = TEX_WRAP.sub(r"\1", t)
        t = TEX_FRAC.sub(lambda m: (m.group(1) if len(m.group(1)) < 2 else f"({m.group(1)})") + "/"
                         + (m.group(2) if len(m.group(2)) < 2 else f"({m.group(2)})"), t)
    t = re.sub(r"\\([,;:! ]|quad|qquad)", " ", t)
    t = re.sub(r"\\([A-Za-z]+|[%{}_&#$])", lambda m: TEX_SYMBOLS.get(m.group(1), m.group(1)), t)
    t = t.replace("{", "").replace("}", "").replace("&", " ").replace("\\", " ")
    return " ".join(t.split())


MATH_SPAN = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z§(“\"0-9])")


class _Sentences(HTMLParser):
    """The prose of a built page's article as [section id, section title, [sentences]]: headings,
    paragraphs, list items, admonitions and table cells; no code, outputs, buttons, scripts or
    page furniture (the article's header, the prev/next links, the numbers' sources)."""

    SKIP_TAGS = {"script", "style", "svg", "button", "pre", "nav", "form", "mjx-container", "summary"}
    SKIP_CLASSES = {"cell_input", "cell_output", "highlight", "headerlink", "toy-glue-sources",
                    "bd-header-article", "prev-next-area", "toggle-button", "eqno"}
    BLOCKS = {"p", "li", "dd", "dt", "td", "th", "caption", "h1", "h2", "h3", "h4", "figcaption"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []          # (tag, in article, skipping)
        self.buf, self.sections = [], [["", "", []]]
        self.heading = None

    def _state(self):
        return self.stack[-1][1:] if self.stack else (False, False)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        inside, skip = self._state()
        classes = set((a.get("class") or "").split())
        if "bd-article" in classes:
            inside = True
        skip = skip or tag in self.SKIP_TAGS or bool(classes & self.SKIP_CLASSES)
        if inside and not skip and tag == "section" and a.get("id"):
            self._flush()
            self.sections.append([a["id"], "", []])
        if inside and not skip and tag in self.BLOCKS:
            self._flush()
            if tag in ("h1", "h2", "h3", "h4"):
                self.heading = tag
        if tag not in VOID:
            self.stack.append((tag, inside, skip))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            t, inside, skip = self.stack.pop()
            if t == tag:
                break
        if inside and not skip and tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data):
        inside, skip = self._state()
        if inside and not skip:
            self.buf.append(data)

    def _flush(self):
        text = " ".join("".join(self.buf).split())
        self.buf = []
        if self.heading:
            self.sections[-1][1] = text.rstrip("#").strip()
            self.heading = None
            return
        text = MATH_SPAN.sub(lambda m: tex_to_text(m.group(1) or m.group(2) or ""), text)
        if len(text) > 1:
            self.sections[-1][2].extend(s for s in SENTENCE_END.split(text) if s.strip())

    def result(self):
        self._flush()
        return [s for s in self.sections if s[2] or s[1]]


def page_sentences(html):
    """[[section id, section title, [sentence, ...]], ...] of a built page's article."""
    parser = _Sentences()
    parser.feed(html)
    return parser.result()


def _write_search_text(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out, texts = Path(app.outdir), {}
    labels = toc_sections.labels(Path(app.srcdir) / "_toc.yml") if (Path(app.srcdir) / "_toc.yml").exists() else {}
    for docname in sorted(app.env.found_docs):
        page = out / (docname + ".html")
        if page.exists():
            title = nodes.Element()
            title.extend(app.env.titles[docname].deepcopy().children) if docname in app.env.titles else None
            texts[docname] = {"title": title.astext(), "label": labels.get(docname, ""),
                              "sections": page_sentences(page.read_text(encoding="utf-8"))}
    body = "window.TOY_SEARCH_TEXT = " + json.dumps(texts, ensure_ascii=False, sort_keys=True) + ";\n"
    _atomic_write(out / "_static" / "search-text.js", body)


def _atomic_write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _page_assets(app, pagename, templatename, context, doctree):
    if pagename == "search":
        app.add_js_file("search-text.js")   # only the search page carries the pages' text


# ---- solution titles: "Solution to" + " Exercise I.8.1 (...)" (space inside the link) -> space outside
def space_before_link(title):
    """In a solution's title, move a link's leading space out of the link."""
    for ref in list(title.findall(nodes.reference)):
        first = ref.children[0] if ref.children else None
        if isinstance(first, nodes.Text) and first.startswith(" "):
            ref.replace(first, nodes.Text(first.lstrip()))
            ref.parent.insert(ref.parent.index(ref), nodes.Text(" "))


def _solution_titles(app, doctree, docname):
    try:
        from sphinx_exercise.nodes import solution_node
    except ImportError:
        return
    for sol in doctree.findall(solution_node):
        for title in sol.findall(nodes.title):
            space_before_link(title)


def _templates(app, config):
    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path.append(str(TEMPLATES))


def setup(app):
    app.connect("config-inited", _templates)
    app.connect("builder-inited", _wrap_section_numbering)
    app.connect("html-page-context", _trim_scripts, priority=900)
    app.connect("html-page-context", _page_assets, priority=400)
    app.connect("doctree-resolved", _solution_titles)
    app.connect("build-finished", _write_icons, priority=100)
    app.connect("build-finished", _write_search_text, priority=200)   # before the maths is typeset
    for ext in ("static_math", "figures", "glue_trace", "slim_css"):
        app.setup_extension(ext)
    app.add_css_file("icons.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
