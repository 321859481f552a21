"""book/_ext/reader_site.py, the book's Sphinx extension, on hand-made inputs."""
import sys
from pathlib import Path
from types import SimpleNamespace

from docutils import nodes
from sphinx.builders.html._assets import _JavaScript

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import reader_site  # noqa: E402


def test_section_labels_from_the_file_name():
    assert reader_site.section_label("notebooks/part1/s08_baselines") == "I.8"
    assert reader_site.section_label("notebooks/part3/s05_thinking_model") == "III.5"
    assert reader_site.section_label("book/glossary") is None


def test_chapter_numbers_become_part_labels():
    doc = "notebooks/part2/s04_x"
    toc = nodes.bullet_list("", nodes.list_item("", nodes.reference("", "t", secnumber=(16,)),
                                                nodes.reference("", "s", secnumber=(16, 2))))
    env = SimpleNamespace(toc_secnumbers={doc: {"": (16,), "#s": (16, 2)}, "book/intro": {}},
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
