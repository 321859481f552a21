"""The book's machinery: checkers, slider, tables, student edition."""
import json
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from toy import check, plots, widgets
from toy.check import _core

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import student_edition  # noqa: E402


def test_checker_reports_success_and_specific_failure(capsys):
    check.bandit_estimates(lambda p, a, b: (1 - b) * (1 - p) if a == 0 else b * p)
    assert capsys.readouterr().out.startswith("✓ all 8 cases pass")
    check.bandit_estimates(lambda p, a, b: (1 - b) * (1 - p) if a == 0 else 0.0)   # forgot arm B's signal
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'p = 0.25, b = 0.5, action B': expected 0.125, got 0")
    assert "hint:" in out


def test_checker_never_raises(capsys):
    def broken(p, a, b):
        raise ZeroDivisionError("oops")
    check.bandit_estimates(broken)
    assert "raised ZeroDivisionError: oops" in capsys.readouterr().out
    check.bandit_estimates(None)
    assert "must be a function" in capsys.readouterr().out
    check.optimal_baseline(lambda p: [1, 2])
    assert "shape" in capsys.readouterr().out


def test_compare(capsys):
    assert _core.compare("x", 0.5, 0.5) is True
    assert _core.compare("x", None, 0.5) is False
    assert "not answered" in capsys.readouterr().out.splitlines()[-1]


def test_scrubber_html_is_deterministic_and_has_all_frames():
    def draw(v):
        fig, ax = plots.figure(layout=None)
        ax.plot([0, 1], [0, v])
        return fig
    frames = [widgets.render_frame(draw(v)) for v in (0, 1, 2)]
    again = [widgets.render_frame(draw(v)) for v in (0, 1, 2)]
    assert frames == again  # same figure -> same bytes -> same ids
    assert b"<dc:date>" not in frames[0] and b"<text" in frames[0]   # no timestamp; text as text
    html = widgets.scrubber_html(frames, ["0", "1", "2"], 1, "G")
    assert html == widgets.scrubber_html(again, ["0", "1", "2"], 1, "G")
    assert html.count("data:image/svg+xml;base64,") == 4  # three frames + the default <img>
    assert 'max="2"' in html and 'value="1"' in html


def test_slider_bad_input_and_timing_log(tmp_path, monkeypatch):
    def draw(v):
        fig, ax = plots.figure(layout=None)
        ax.plot([0, v])
        return fig
    with pytest.raises(ValueError, match="default"):
        widgets.slider(draw, [1, 2, 3], default=5)
    with pytest.raises(ValueError, match="values"):
        widgets.slider(draw, [1])
    log = tmp_path / "bench.jsonl"
    monkeypatch.setenv("TOY_BENCH_LOG", str(log))
    widgets.slider(draw, [1, 2, 3], default=2, name="G")
    rec = json.loads(log.read_text())
    assert rec["slider"] == "G" and rec["frames"] == 3 and rec["max_s"] > 0


def test_table_text_shows_numbers_not_addresses():
    t = plots.table(pd.DataFrame({"a": [0.12345, 1.0]}), precision=2)
    assert "0.12" in repr(t) and "0x" not in repr(t)
    assert 'id="T_t' in t._repr_html_()


def test_curves_reject_mismatched_lengths():
    fig, ax = plots.figure()
    with pytest.raises(ValueError, match="steps"):
        plots.curves(ax, np.arange(5), {"a": np.zeros((3, 4))})


def test_student_edition_removes_solutions_only():
    md = lambda s, tags=(): {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": s}
    code = lambda s, tags=(): {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": s,
                               "outputs": [], "execution_count": 1}
    nb = {"cells": [
        md("```{exercise} Q\n:label: e\n```"),
        code("def f(): return None"),
        md("```{solution-start} e\n:class: dropdown\n```"),
        code("def f(): return 1", tags=["solution"]),
        md("```{solution-end}\n```"),
        md("```{solution} e2\n:class: dropdown\nprose answer\n```"),
        code("check.f(f)"),
    ]}
    out, removed = student_edition.strip(nb)
    assert removed == 4
    assert [c["source"] for c in out["cells"]] == [
        "```{exercise} Q\n:label: e\n```", "def f(): return None", "check.f(f)"]


def test_execute_needed_detects_unexecuted_and_error_notebooks():
    import nbformat
    import execute_needed
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("")]
    assert execute_needed.needs_execution(nb)          # a code cell never run
    nb.cells[0].execution_count = 1
    assert not execute_needed.needs_execution(nb)      # empty cells do not count
    nb.cells[0].outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[])]
    assert execute_needed.error_outputs(nb) == [0]


def test_table_shows_missing_values_as_a_dash():
    df = pd.DataFrame({"accuracy": [0.5, float("nan")]}, index=["think", "direct"])
    t = plots.table(df, precision=2, uuid="na")
    assert repr(t).split() == ["accuracy", "think", "0.50", "direct", "—"]
    html = t._repr_html_()
    assert "—" in html and "nan" not in html.lower()
