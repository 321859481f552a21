"""Maths typeset when the book is built: no MathJax, no maths font, no script on any page.

Sphinx writes each formula as ``<span class="math ...">\\(TeX\\)</span>`` (inline) or
``<div class="math ...">\\[TeX\\]</div>`` (displayed), for MathJax to typeset in the reader's
browser: on this book that was 1.7 MB of MathJax (1.07 MB of it its SVG font) on every page with
a formula. Here, after the pages are written, each formula is replaced by MathJax's own SVG
output, made under node by ``tex2svg.js`` (mathjax-full 3.2.2: the version the pages loaded):
the glyphs a page uses are defined once per page (MathJax's "global" font cache, a hidden
``<svg>`` at the top of the body), each formula carries its MathML for screen readers (hidden),
and MathJax's small stylesheet is ``_static/math.css``, linked only from pages with maths.

A TeX error or an undefined macro stops the build, naming the page and the formula. The node
packages are installed by ``make book`` (``npm ci`` from ``book/_ext/node/package-lock.json``
into ``_build/node``); ``RL_BY_HAND_NODE_MODULES`` points elsewhere.
"""
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.errors import ExtensionError

HERE = Path(__file__).resolve().parent
MATH = re.compile(r'<(span|div) class="math notranslate nohighlight"([^>]*)>\s*\\([(\[])(.*?)\\([)\]])\s*</\1>'
                  r'([,.;:!?)\]’”]*)', re.S)
CACHE_ID = "MJX-SVG-global-cache"
CSS = "math.css"
# the browser runtime Sphinx would add to a page with maths (sphinx.ext.mathjax)
MATHJAX_SCRIPT = re.compile(r'<script[^>]*>\s*window\.MathJax\b.*?</script>\s*|<script[^>]*mathjax/startup\.js[^>]*>\s*</script>\s*', re.S)


def node_modules(start):
    """The node_modules folder of the book's tools: $RL_BY_HAND_NODE_MODULES, else _build/node/
    in the source folder or the nearest folder above it (the student edition's source is
    _build/student/src)."""
    env = os.environ.get("RL_BY_HAND_NODE_MODULES")
    if env:
        return Path(env)
    for d in [Path(start).resolve(), *Path(start).resolve().parents]:
        if (d / "_build" / "node" / "node_modules").is_dir():
            return d / "_build" / "node" / "node_modules"
        if d.name == "_build" and (d / "node" / "node_modules").is_dir():
            return d / "node" / "node_modules"
    raise ExtensionError("static_math: the book's node packages are missing (_build/node/node_modules): "
                         "`make book` installs them (npm ci from book/_ext/node/package-lock.json)")


class TeX2SVG:
    """A node process running tex2svg.js; one request and one answer at a time."""

    def __init__(self, modules):
        node = shutil.which("node")
        if not node:
            raise ExtensionError("static_math: node is missing (apt-get install -y nodejs npm)")
        self.proc = subprocess.Popen([node, str(HERE / "tex2svg.js")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, encoding="utf-8",
                                     env={**os.environ, "NODE_PATH": str(modules)})

    def ask(self, **request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise ExtensionError("static_math: tex2svg.js stopped (is mathjax-full installed?)")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def typeset_page(text, tex2svg, css_href):
    """The page with every formula typeset (and MathJax's scripts removed); the list of errors
    [(TeX, message)]; the number of formulas. A page without maths comes back unchanged."""
    if not MATH.search(text):
        return MATHJAX_SCRIPT.sub("", text), [], 0
    tex2svg.ask(page=True)
    errors, count = [], 0

    def one(m):
        nonlocal count
        tag, attrs, tex = m.group(1), m.group(2), html.unescape(m.group(4))
        out = tex2svg.ask(tex=tex.strip(), display=(tag == "div"))
        if out.get("error"):
            errors.append((tex.strip(), out["error"]))
        count += 1
        cls = "math notranslate nohighlight toy-math" + (" toy-math-display" if tag == "div" else "")
        typeset, punct = f'<{tag} class="{cls}"{attrs}>{out["svg"]}</{tag}>', m.group(6)
        if tag == "span" and punct:      # "…formula," : the comma never starts the next line
            return f'<span class="toy-nobr">{typeset}{punct}</span>'
        return typeset + punct

    text = MATH.sub(one, text)
    cache = tex2svg.ask(cache=True)["svg"]
    text = re.sub(r"(<body[^>]*>)", lambda b: b.group(1) + "\n" + cache, text, count=1)
    link = f'<link rel="stylesheet" type="text/css" href="{css_href}" />\n'
    text = text.replace("</head>", link + "</head>", 1)
    return MATHJAX_SCRIPT.sub("", text), errors, count


TAG = re.compile(r"(<!--.*?-->|</?[A-Za-z][^>]*>|<![^>]*>)", re.S)   # ("a < b" in a table cell is text)
RAW_TAGS = ("pre", "code", "script", "style", "svg", "textarea")


def typography(text):
    """No line break between a number and its "%" ("70 %", also when the number is a glued
    <span>), outside code, scripts and SVG."""
    parts, depth, last = TAG.split(text), 0, ""
    for i, part in enumerate(parts):
        if i % 2:                                        # a tag
            name = re.match(r"</?([a-zA-Z0-9-]+)", part)
            name = name.group(1).lower() if name else ""
            if name in RAW_TAGS and not part.endswith("/>"):
                depth += -1 if part.startswith("</") else 1
                depth = max(depth, 0)
            continue
        if depth or "%" not in part:
            last = part[-1:] if part.strip() else last
            continue
        part = re.sub(r"(\d) +%", "\\1\u00a0%", part)
        if part.startswith(" %") and last.isdigit():
            part = "\u00a0" + part[1:]
        parts[i] = part
        last = part[-1:] if part.strip() else last
    return "".join(parts)


def typeset_site(outdir, modules):
    """Typeset every written page of the HTML output; return {page: formulas}; raise on errors."""
    out = Path(outdir)
    tex2svg = TeX2SVG(modules)
    problems, counts = [], {}
    try:
        css = tex2svg.ask(css=True)["css"]
        (out / "_static" / CSS).write_text("/* MathJax 3.2.2's stylesheet for its SVG output (book/_ext/static_math.py) */\n"
                                           + css, encoding="utf-8")
        for page in sorted(out.rglob("*.html")):
            rel = page.relative_to(out)
            if rel.parts[0] in ("_static", "_sources", "_images"):
                continue
            text = page.read_text(encoding="utf-8")
            href = "../" * (len(rel.parts) - 1) + "_static/" + CSS
            new, errors, n = typeset_page(text, tex2svg, href)
            new = typography(new)
            problems += [f"{rel}: {msg} in {tex[:80]!r}" for tex, msg in errors]
            counts[rel.as_posix()] = n
            if new != text:
                page.write_text(new, encoding="utf-8")
    finally:
        tex2svg.close()
    if problems:
        raise ExtensionError("static_math: TeX errors:\n  " + "\n  ".join(problems))
    return counts


def _typeset(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    counts = typeset_site(app.outdir, node_modules(app.srcdir))
    app.env.toy_math_counts = counts


def _no_runtime(app, pagename, templatename, context, doctree):
    """Drop MathJax's runtime and its configuration from every page's scripts."""
    scripts = context.get("script_files", [])
    scripts[:] = [js for js in scripts
                  if "mathjax" not in (js.filename or "").lower()
                  and "window.MathJax" not in js.attributes.get("body", "")]


def setup(app):
    app.connect("html-page-context", _no_runtime, priority=950)
    app.connect("build-finished", _typeset, priority=300)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
