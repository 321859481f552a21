"""The book's own Sphinx additions for readers (loaded from _config.yml, `local_extensions`).

- **Section numbers per part.** The sidebar, headings and exercises say "I.8", "II.4", "III.5":
  part (roman) and the section number of the notebook's file name (``part1/s08_...`` -> I.8), so
  they match the prose's "§I.8" references (``scripts/link_sections.py``) even where a part has
  gaps (Part III has §3, §5, §6).
- **Math without the network.** MathJax 3 (one file, SVG output, no fonts to fetch) is copied from
  the ``django-static-mathjax`` package into ``_static/mathjax/``; ``mathjax_path`` in _config.yml
  points there.
- **No widget JavaScript.** The live ipywidgets view is dropped from the HTML (there is no
  kernel), so the widget state is left out of every page (and ``nb_ipywidgets_js: {}`` in
  _config.yml leaves out require.js and the widget embed script); the kernel-free scrubber needs
  none of them. Scripts that two extensions both add (sphinx-thebe's
  ``const THEBE_JS_URL``, the togglebutton selector) are kept once.
"""
import re
import shutil
from pathlib import Path

from docutils import nodes

ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV", 5: "V"}
SECTION_DOC = re.compile(r"^notebooks/part(\d+)/s(\d+)_")
MATHJAX_FILES = {"es5/tex-svg-full.js": "tex-svg-full.js", "LICENSE": "LICENSE"}


def section_label(docname):
    """'I.8' for notebooks/part1/s08_baselines, None for pages outside the parts."""
    m = SECTION_DOC.match(docname)
    return f"{ROMAN[int(m.group(1))]}.{int(m.group(2))}" if m else None


def _relabel(env):
    """Replace each section's book-wide chapter number by its part label: (8, 2) -> ('I.8', 2)."""
    for docname, secnums in env.toc_secnumbers.items():
        label = section_label(docname)
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


def _copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    import mathjax  # the django-static-mathjax package: MathJax's own distribution files
    src = Path(mathjax.__file__).parent / "static" / "mathjax"
    dst = Path(app.outdir) / "_static" / "mathjax"
    dst.mkdir(parents=True, exist_ok=True)
    for name, target in MATHJAX_FILES.items():
        shutil.copyfile(src / name, dst / target)


def setup(app):
    app.connect("builder-inited", _wrap_section_numbering)
    app.connect("html-page-context", _trim_scripts, priority=900)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
