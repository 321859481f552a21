"""The live slider of toy.widgets (the half a kernel runs), without a browser."""
import json

import matplotlib
matplotlib.use("Agg")

from toy import plots, widgets


def test_live_slider_reuses_frames_and_redraws_between_them(tmp_path, monkeypatch):
    calls = []

    def draw(v):
        calls.append(v)
        fig, ax = plots.figure(layout=None)
        ax.plot([0, 1], [0, v])
        return fig

    values = [0.0, 0.5, 1.0]
    frames = [widgets.render_frame(draw(v)) for v in values]
    calls.clear()
    log = tmp_path / "live.jsonl"
    monkeypatch.setenv("TOY_LIVE_LOG", str(log))
    box = widgets._live(draw, values, 0.5, "b", "{:g}", True, frames)
    slider, out = box.children
    svg = lambda: out.outputs[0]["data"]["image/svg+xml"]
    assert calls == [] and svg() == frames[1].decode()          # the default: its frame, no draw
    slider.value = 1.0
    assert calls == [] and svg() == frames[2].decode()
    slider.value = 0.25                                         # between frames: drawn now
    assert calls == [0.25] and svg() == widgets.render_frame(draw(0.25)).decode()
    assert len(out.outputs) == 1                                # one figure, replaced in place
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["value"] for r in records] == ["0.5", "1.0", "0.25"]
    assert records[-1]["draw_s"] > 0 and records[0]["draw_s"] == 0


def test_selection_slider_offers_only_the_frames():
    draw = lambda v: plots.figure(layout=None)[0]
    values = [1, 2, 4]
    frames = [widgets.render_frame(draw(v)) for v in values]
    slider, out = widgets._live(draw, values, 2, "G", "{:g}", False, frames).children
    assert list(slider.options) == [("1", 1), ("2", 2), ("4", 4)]
    slider.value = 4
    assert out.outputs[0]["data"]["image/svg+xml"] == frames[2].decode()


def test_live_kernel_shows_one_slider_and_no_scrubber(monkeypatch):
    """TOY_LIVE=1 (make lab's kernels): the cell displays the live widget only; without it, the
    widget view and the scrubber (what the committed notebooks hold)."""
    import ipywidgets
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    draw = lambda v: plots.figure(layout=None)[0]
    for live, kinds in (("1", [ipywidgets.VBox]), ("", [dict, widgets._Scrubber])):
        shown.clear()
        monkeypatch.setenv("TOY_LIVE", live)
        widgets.slider(draw, [1, 2, 3], name="G")
        assert [type(o) for o in shown] == kinds
