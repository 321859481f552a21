"""scripts/lab.py (make lab): a notebook adapted for JupyterLab + jupyterlab-myst, on a hand-made
notebook, and the copies it never overwrites."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import lab  # noqa: E402


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text, outputs=()):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": list(outputs), "execution_count": 1}


GLUE_OUT = {"output_type": "display_data", "data": {"application/papermill.record/text/plain": "0.12547"},
            "metadata": {"scrapbook": {"name": "p_std", "mime_prefix": "application/papermill.record/"}}}
SCRUB = ('<div class="toy-scrubber" id="scrubabc"><input type="range" oninput="x"> <span>b = <b>0.5</b></span>'
         '<img id="scrubabc-img" src="data:image/svg+xml;base64,PHN2Zz4=" alt="figure at b = 0.5" style="">'
         '<script>window["scrubabc"]={}</script></div>')
WIDGET = {"output_type": "display_data", "metadata": {},
          "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "m"}, "text/plain": "[live]"}}


def notebook():
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"widgets": {"state": {}}}, "cells": [
        code("glue('.3f', p_std=s)", [GLUE_OUT]),
        md("The spread is {glue:text}`p_std:.3f` (or {glue:text}`p_std:.1%`)."),
        code("widgets.slider(...)", [WIDGET, {"output_type": "display_data", "metadata": {},
                                              "data": {"text/html": SCRUB, "text/plain": "<scrubber>"}}]),
        md("```{solution-start} ex-a\n:class: dropdown\n```\n"),
        code("def f(): return 1"),
        md("It returns 1, always ({glue:text}`p_std:.2f`).\n\n```{solution-end}\n```"),
        md("After."),
    ]}


def test_glue_gated_solutions_and_scrubber():
    out = lab.lab_notebook(notebook(), "t")
    src = [c["source"] for c in out["cells"]]
    assert src[1] == "The spread is 0.125 (or 12.5%)."                       # as myst_nb formats it
    outputs = out["cells"][2]["outputs"]
    assert len(outputs) == 1 and "widget-view" not in json.dumps(outputs)    # no model without a kernel
    html = outputs[0]["data"]["text/html"]
    assert 'src="data:image/svg+xml;base64,PHN2Zz4="' in html and "<input" not in html and "<script" not in html
    assert "b = 0.5: run this cell for a live slider" in html
    assert src[3] == ("````{solution} ex-a\n:class: dropdown\n\n"
                      "Its code is in the folded cell below: click the “…” to unfold it.\n````")
    assert out["cells"][4]["metadata"]["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert src[5] == "````{solution} ex-a\n:class: dropdown\n\nIt returns 1, always (0.13).\n````"
    assert src[6] == "After." and "jupyter" not in out["cells"][6]["metadata"]
    assert "widgets" not in out["metadata"] and out["metadata"]["rl_by_hand"] == {"lab_edition": True}


def test_missing_glue_and_unclosed_gate_raise():
    nb = notebook()
    nb["cells"][1] = md("{glue:text}`nowhere:.2f`")
    with pytest.raises(ValueError, match="nowhere"):
        lab.lab_notebook(nb, "t")
    nb = notebook()
    del nb["cells"][5]
    with pytest.raises(ValueError, match="ex-a"):
        lab.lab_notebook(nb, "t")


def test_copies_are_made_once_and_never_overwritten(tmp_path, monkeypatch):
    src = tmp_path / "notebooks" / "part1"
    src.mkdir(parents=True)
    (src / "s01_x.ipynb").write_text(json.dumps(notebook()))
    monkeypatch.setattr(lab, "SRC", tmp_path / "notebooks")
    root = lab.prepare(lab=tmp_path / "lab", quiet=True)
    copy = root / "part1" / "s01_x.ipynb"
    assert "0.125" in copy.read_text()
    copy.write_text("my work")
    lab.prepare(lab=tmp_path / "lab", quiet=True)
    assert copy.read_text() == "my work"
