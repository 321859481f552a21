"""One slider helper that works in a live kernel *and* in the static book.

``widgets.slider(draw, values, default=..., name="b")`` takes a function ``draw(value)`` that
returns a new matplotlib Figure and displays, from the same cell:

1. **live**: an ipywidgets slider; moving it calls ``draw`` again (keep it ≤ 0.1 s);
2. **static**: a kernel-free scrubber, i.e. an HTML range input over PNG frames precomputed at
   ``values``, starting at ``default`` (so without JavaScript it is the static default figure).

The book's HTML drops the live widget (there is no kernel) and keeps the scrubber; Jupyter shows
both. Element ids are derived from the frames' content, so re-executing the notebook gives the
same HTML (nbval compares it).

When the environment variable ``TOY_BENCH_LOG`` names a file, the time each frame took (one
slider update: compute + render) is appended to it as a JSON line; ``make bench`` reads it.
"""
import base64
import hashlib
import io
import json
import os
import time

import numpy as np
import matplotlib.pyplot as plt

__all__ = ["slider", "render_png"]


def render_png(fig):
    """PNG bytes of a figure (then closed), in the book's dpi."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _frames(draw, values):
    pngs, seconds = [], []
    for v in values:
        t0 = time.perf_counter()
        png = render_png(draw(v))
        seconds.append(time.perf_counter() - t0)
        pngs.append(png)
    return pngs, seconds


def _log_timing(name, seconds):
    path = os.environ.get("TOY_BENCH_LOG")
    if not path:
        return
    warm = seconds[1:]  # the first frame pays one-off costs (fonts, caches)
    rec = {"notebook": os.environ.get("TOY_BENCH_NOTEBOOK", "?"), "slider": name,
           "frames": len(seconds), "mean_s": float(np.mean(warm)), "max_s": float(np.max(warm))}
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def scrubber_html(pngs, labels, default_index, name):
    """A self-contained HTML range input that swaps between precomputed PNG frames."""
    b64 = [base64.b64encode(p).decode("ascii") for p in pngs]
    uid = "scrub" + hashlib.sha1("".join(b64).encode()).hexdigest()[:12]
    frames = json.dumps(["data:image/png;base64," + b for b in b64])
    labels_js = json.dumps(labels)
    n = len(pngs)
    return f"""<div class="toy-scrubber" id="{uid}" style="margin:0.4em 0;">
<div style="font-family:monospace;font-size:0.9em;">
<input type="range" min="0" max="{n - 1}" step="1" value="{default_index}" style="width:60%;vertical-align:middle;"
 oninput="var s=window['{uid}'];document.getElementById('{uid}-img').src=s.f[this.value];document.getElementById('{uid}-lab').textContent=s.l[this.value];">
 <span>{name} = <b id="{uid}-lab">{labels[default_index]}</b></span>
 <span style="color:#777;">&nbsp;(drag: {n} precomputed frames)</span></div>
<img id="{uid}-img" src="data:image/png;base64,{b64[default_index]}" alt="figure at {name} = {labels[default_index]}" style="max-width:100%;">
<script>window['{uid}']={{f:{frames},l:{labels_js}}};</script>
</div>"""


class _Scrubber:
    def __init__(self, html):
        self.html = html

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return "<scrubber: open the HTML book or Jupyter to drag it>"


def _live(draw, values, default, name, fmt, continuous):
    """An ipywidgets slider + output area that recomputes the figure; None without ipywidgets."""
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

    def redraw(change=None):
        # set the Output widget's state directly (no clear_output messages to the cell, so
        # headless runners such as nbval see the same outputs as Jupyter)
        fig = draw(s.value)
        out.outputs = ()
        out.append_display_data(fig)
        plt.close(fig)

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
    pngs, seconds = _frames(draw, values)
    _log_timing(name, seconds)
    live = _live(draw, values, default, name, fmt, continuous)
    if live is not None:  # the widget view, with kernel-free stand-ins for the book and nbval
        display({"application/vnd.jupyter.widget-view+json":
                 {"version_major": 2, "version_minor": 0, "model_id": live.model_id},
                 "text/plain": f"[live {name} slider: run this cell in Jupyter]",
                 "text/html": f"<!-- live {name} slider: needs a running kernel -->"}, raw=True)
    display(_Scrubber(scrubber_html(pngs, [fmt.format(v) for v in values], values.index(default), name)))
