"""book/_ext/reader_site.py, the book's Sphinx extension, on hand-made inputs."""
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from sphinx.builders.html._assets import _JavaScript

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import reader_site  # noqa: E402


def test_section_labels_from_the_file_name():
    assert reader_site.section_label("notebooks/part1/s08_baselines") == "I.8"
    assert reader_site.section_label("notebooks/part3/s05_thinking_model") == "III.5"
    assert reader_site.section_label("book/glossary") is None


def test_chapter_numbers_become_part_labels(tmp_path):
    """The label is the place in _toc.yml: the fourth chapter of the second numbered part."""
    doc = "notebooks/part2/s09_x"
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n"
        "  - caption: A\n    numbered: true\n    chapters:\n      - file: notebooks/part1/s01_a\n"
        "  - caption: B\n    numbered: true\n    chapters:\n" +
        "".join(f"      - file: {f}\n" for f in ["notebooks/part2/s01_a", "notebooks/part2/s02_b",
                                                 "notebooks/part2/s03_c", doc]))
    toc = nodes.bullet_list("", nodes.list_item("", nodes.reference("", "t", secnumber=(16,)),
                                                nodes.reference("", "s", secnumber=(16, 2))))
    env = SimpleNamespace(srcdir=str(tmp_path), toc_secnumbers={doc: {"": (16,), "#s": (16, 2)}, "book/intro": {}},
                          tocs={doc: toc, "book/intro": nodes.bullet_list()},
                          titles={doc: nodes.title(secnumber=(16,)), "book/intro": nodes.title()})
    reader_site._relabel(env)
    assert env.toc_secnumbers[doc] == {"": ("II.4",), "#s": ("II.4", 2)}
    assert [r["secnumber"] for r in toc.findall(nodes.reference)] == [("II.4",), ("II.4", 2)]
    assert env.titles[doc]["secnumber"] == ("II.4",)


def test_widget_state_dropped_and_repeated_inline_scripts_kept_once():
    thebe = "const THEBE_JS_URL = 'x'"
    scripts = [_JavaScript(None, body=thebe), _JavaScript("a.js"), _JavaScript("", body=thebe),
               _JavaScript(None, type="application/vnd.jupyter.widget-state+json", body="{}"),
               _JavaScript("a.js")]
    context = {"script_files": scripts}
    reader_site._trim_scripts(None, "p", "page.html", context, None)
    assert [(js.filename, js.attributes) for js in context["script_files"]] == [
        (None, {"body": thebe}), ("a.js", {})]


def test_solution_title_space_moves_out_of_the_link():
    title = nodes.title("", "", nodes.Text("Solution to"),
                        nodes.reference("", "", nodes.Text(" Exercise I.8.1 (Why?)"), refuri="#ex"))
    reader_site.space_before_link(title)
    assert [c.astext() for c in title.children] == ["Solution to", " ", "Exercise I.8.1 (Why?)"]
    assert title.astext() == "Solution to Exercise I.8.1 (Why?)"


FA_JS = ('var p={"arrow-up":[384,512,[8593],"f062","M214.6 41.4z"],bars:[448,512,["navicon"],"f0c9","M0 96z"],'
         'duo:[512,512,[],"f000",["M1 1z","M2 2z"]]};d("fas",p)'
         'var p={bars:[448,512,[],"f0c9","M9 9z"]};d("far",p)')


def test_icons_come_from_the_solid_pack_and_become_css_masks():
    icons = reader_site.solid_icons(FA_JS)
    assert icons == {"arrow-up": (384, 512, "M214.6 41.4z"), "bars": (448, 512, "M0 96z"),
                     "duo": (512, 512, "M1 1z M2 2z")}
    css = reader_site.icons_css({"bars"}, icons)
    assert ".fa-solid.fa-bars::before, .fas.fa-bars::before { width: 0.8750em;" in css
    assert "viewBox='0 0 448 512'><path d='M0 96z'/>" in css.replace("%20", " ")
    assert "arrow-up" not in css
    with pytest.raises(ValueError, match="fa-nope"):
        reader_site.icons_css({"nope"}, icons)


def test_icons_of_the_installed_theme():
    import pydata_sphinx_theme
    js = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "scripts"
          / "fontawesome.js").read_text()
    icons = reader_site.solid_icons(js)
    assert len(icons) > 1000 and icons["bars"][:2] == (448, 512) and icons["magnifying-glass"][:2] == (512, 512)


def test_page_text_is_the_main_content_without_scripts_and_math_markup():
    html = ('<html><head><title>T</title><script>var x = 1;</script></head><body><nav>menu</nav>'
            '<main role="main"><div class="header">.ipynb <button>x</button></div><article class="bd-article">'
            '<h1>Baselines</h1><p>A <b>baseline</b><br>cuts <svg><text>junk</text></svg>'
            'variance.</p><script>no</script><img src="x.png"></article></main><footer>foot</footer></body></html>')
    assert reader_site.page_text(html) == "Baselines A baseline cuts variance."
    assert reader_site.page_text(html.replace("bd-article", "other")) == ".ipynb Baselines A baseline cuts variance."


def test_theme_templates_are_the_installed_themes_minus_what_the_book_drops():
    """templates/static/webpack-macros.html is the theme's without the icon script; layout.html
    repeats the theme's extrahead block with the search scripts made conditional."""
    import pydata_sphinx_theme
    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    ours = (reader_site.TEMPLATES / "static" / "webpack-macros.html").read_text()
    theirs = (theme / "static" / "webpack-macros.html").read_text()
    dropped = [line for line in theirs.splitlines() if line not in ours.splitlines()]
    assert len(dropped) == 2 and "fontawesome.js" in dropped[1] and "custom icons" in dropped[0]
    assert ours.strip() == "\n".join(l for l in theirs.splitlines() if l not in dropped).strip()
    layout = (theme / "layout.html").read_text()
    block = layout[layout.index("{%- block extrahead %}"):layout.index("{%- endblock extrahead %}")]
    mine = (reader_site.TEMPLATES / "layout.html").read_text()
    for line in block.splitlines():
        if line.strip().startswith(("<meta", "<script")):
            assert line.strip() in mine, line
