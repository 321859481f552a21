"""One slider helper that works in a live kernel *and* in the static book.

``widgets.slider(draw, values, default=..., name="b")`` takes a function ``draw(value)`` that
returns a matplotlib Figure and displays, from the same cell:

1. **live**: an ipywidgets slider; moving it calls ``draw`` again (keep it ≤ 0.1 s: build the
   figure once outside ``draw`` and let ``draw`` update its artists and return it, as the
   slider helpers of ``toy.plots`` do: a new figure per frame can double its cost);
2. **static**: a kernel-free scrubber, i.e. an HTML range input over frames precomputed at
   ``values``, starting at ``default`` (so without JavaScript it is the static default figure).

Frames are SVG with text left as text (``svg.fonttype = "none"``): on this book's machines that
renders about 40 % faster than a PNG of the same figure, and the files are smaller.

The book's HTML drops the live widget (there is no kernel) and keeps the scrubber. With the
environment variable ``TOY_LIVE=1`` (``make lab`` sets it for its kernels) the cell displays the
live slider only: a reader who runs it gets one slider and one figure, not the scrubber as well.
Element ids are derived from the frames' content, so re-executing the notebook gives the
same HTML (nbval compares it).

When the environment variable ``TOY_BENCH_LOG`` names a file, the time each frame took (one
slider update: compute + render) is appended to it as a JSON line; ``make bench`` reads it.
``TOY_LIVE_LOG`` does the same for each redraw of the live slider (``make browser`` reads it).
"""
import base64
import hashlib
import io
import json
import os
import time

import numpy as np
import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker

__all__ = ["slider", "render_frame"]


def _fewer_ticks(fig, nbins=4):
    """At most nbins + 1 automatic ticks per axis: creating tick artists is most of what a
    frame costs to render."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_locator()) is mticker.AutoLocator:
                axis.set_major_locator(mticker.MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))


def render_frame(fig):
    """SVG bytes of a figure (then closed): text as text, no date, ids salted by the book's
    style (``svg.hashsalt``), so the same figure always gives the same bytes."""
    if not isinstance(fig, matplotlib.figure.Figure):
        raise ValueError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    _fewer_ticks(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return buf.getvalue()


def _frames(draw, values):
    """SVG frames, and per frame the seconds spent in ``draw`` (compute + build the figure)
    and in rendering it."""
    frames, t_draw, t_render = [], [], []
    for v in values:
        t0 = time.perf_counter()
        fig = draw(v)
        t1 = time.perf_counter()
        frames.append(render_frame(fig))
        t_draw.append(t1 - t0)
        t_render.append(time.perf_counter() - t1)
    return frames, np.array(t_draw), np.array(t_render)


def _log_timing(name, t_draw, t_render):
    path = os.environ.get("TOY_BENCH_LOG")
    if not path:
        return
    total = (t_draw + t_render)[1:]  # the first frame pays one-off costs (fonts, caches)
    rec = {"notebook": os.environ.get("TOY_BENCH_NOTEBOOK", "?"), "slider": name,
           "frames": len(t_draw), "mean_s": float(np.mean(total)), "max_s": float(np.max(total)),
           "draw_mean_s": float(np.mean(t_draw[1:])), "render_mean_s": float(np.mean(t_render[1:]))}
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def scrubber_html(frames, labels, default_index, name):
    """A self-contained HTML range input that swaps between precomputed SVG frames."""
    b64 = [base64.b64encode(p).decode("ascii") for p in frames]
    uid = "scrub" + hashlib.sha1("".join(b64).encode()).hexdigest()[:12]
    urls = ["data:image/svg+xml;base64," + b for b in b64]
    n = len(frames)
    return f"""<div class="toy-scrubber" id="{uid}" style="margin:0.4em 0;">
<div style="font-family:monospace;font-size:0.9em;">
<input type="range" min="0" max="{n - 1}" step="1" value="{default_index}" style="width:60%;vertical-align:middle;"
 oninput="var s=window['{uid}'];document.getElementById('{uid}-img').src=s.f[this.value];document.getElementById('{uid}-lab').textContent=s.l[this.value];">
 <span>{name} = <b id="{uid}-lab">{labels[default_index]}</b></span>
 <span style="color:#777;">&nbsp;(drag: {n} precomputed frames)</span></div>
<img id="{uid}-img" src="{urls[default_index]}" alt="figure at {name} = {labels[default_index]}" style="max-width:100%;">
<script>window['{uid}']={{f:{json.dumps(urls)},l:{json.dumps(labels)}}};</script>
</div>"""


def _log_live(name, value, t_draw, t_render):
    """With TOY_LIVE_LOG naming a file, append one JSON line per live redraw (the browser suite's
    live-slider test reads it to split the round trip into kernel time and transport)."""
    path = os.environ.get("TOY_LIVE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"slider": name, "value": str(value), "draw_s": t_draw,
                                "render_s": t_render, "t": time.time()}) + "\n")


class _Scrubber:
    def __init__(self, html):
        self.html = html

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return "<scrubber: open the HTML book or Jupyter to drag it>"


def _live(draw, values, default, name, fmt, continuous, frames):
    """An ipywidgets slider + output area that recomputes the figure; None without ipywidgets.
    At the values of the precomputed ``frames`` it shows those (a selection slider never waits)."""
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a dependency
        return None
    nums = np.asarray(values)
    if continuous and np.issubdtype(nums.dtype, np.integer):
        s = w.IntSlider(value=int(default), min=int(nums.min()), max=int(nums.max()), step=1)
    elif continuous:
        lo, hi = float(nums.min()), float(nums.max())
        s = w.FloatSlider(value=float(default), min=lo, max=hi, step=(hi - lo) / 100, readout_format=".3g")
    else:
        s = w.SelectionSlider(options=[(fmt.format(v), v) for v in values], value=default)
    s.description = name
    s.continuous_update = False
    out = w.Output()
    try:
        known = dict(zip(values, frames))
    except TypeError:  # unhashable slider values: always redraw
        known = {}

    def redraw(change=None):
        # set the Output widget's state directly, in one message (no clear_output messages to
        # the cell, so headless runners such as nbval see the same outputs as Jupyter)
        t0 = time.perf_counter()
        if s.value in known:
            t1, svg = t0, known[s.value].decode("utf-8")
        else:
            fig = draw(s.value)
            t1 = time.perf_counter()
            svg = render_frame(fig).decode("utf-8")
        out.outputs = ({"output_type": "display_data", "metadata": {},
                        "data": {"image/svg+xml": svg, "text/plain": f"<{name} = {s.value}>"}},)
        _log_live(name, s.value, t1 - t0, time.perf_counter() - t1)

    s.observe(redraw, names="value")
    redraw()
    return w.VBox([s, out])


def slider(draw, values, default=None, name="x", fmt="{:g}", continuous=True):
    """Display a live slider and a static scrubber for ``draw(value) -> Figure``.

    ``values``: the grid of precomputed frames for the static book (keep it ≤ ~15 frames).
    ``default``: the frame shown first (must be one of ``values``; default the middle one).
    ``continuous``: the live slider spans [min, max] of ``values`` (ints step 1, floats in 100
    steps); with False it only offers ``values``.
    """
    from IPython.display import display

    values = list(values)
    if len(values) < 2:
        raise ValueError(f"values must hold at least 2 slider positions, got {len(values)}")
    if default is None:
        default = values[len(values) // 2]
    if default not in values:
        raise ValueError(f"default must be one of values, got {default!r}")
    if not callable(draw):
        raise ValueError("draw must be a function value -> matplotlib Figure")
    frames, t_draw, t_render = _frames(draw, values)
    _log_timing(name, t_draw, t_render)
    live = _live(draw, values, default, name, fmt, continuous, frames)
    if live is not None and os.environ.get("TOY_LIVE") == "1":   # a reader's live kernel (make lab)
        display(live)
        return
    if live is not None:  # the widget view, with kernel-free stand-ins for the book and nbval
        display({"application/vnd.jupyter.widget-view+json":
                 {"version_major": 2, "version_minor": 0, "model_id": live.model_id},
                 "text/plain": f"[live {name} slider: run this cell in Jupyter]",
                 "text/html": f"<!-- live {name} slider: needs a running kernel -->"}, raw=True)
    display(_Scrubber(scrubber_html(frames, [fmt.format(v) for v in values], values.index(default), name)))
