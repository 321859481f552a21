"""A live slider: a book notebook served by Voilà (a real Jupyter server and kernel on 127.0.0.1),
its ipywidgets slider moved in chromium, the figure redrawn by the kernel.

How the time is measured: in the page, from the key press that moves the slider (performance.now()
in a keydown listener) to the moment a MutationObserver sees the new figure in the slider's output
area. That is the whole round trip a reader waits for: widget message to the kernel, draw +
render in toy.widgets, the new SVG back over the websocket, and the DOM update. The kernel's part
(draw + render) is logged by toy.widgets (TOY_LIVE_LOG), so the report splits the two.

The 0.1 s budget is the one `make bench` holds each slider frame to on an unloaded machine. On a
shared machine everything runs slower, so the allowance is the budget times the 1-minute load per
core when that exceeds 1 (the report records the load and the allowance used).

Voilà's own page template links Font Awesome from a CDN; those two requests are aborted like any
other, listed in the report, and not counted against the book.
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from conftest import REPORT, ROOT, Watch, free_port, stop_server, wait_for_server

NOTEBOOK = ROOT / "notebooks" / "part1" / "s08_baselines.ipynb"   # the baseline b slider
BUDGET_S = 0.1
VOILA_TEMPLATE_CDN = "@fortawesome/fontawesome-free"
MOVES = 6
SERVER_TIMEOUT_S = 60
RENDER_TIMEOUT_S = 180

MEASURE_JS = """(box) => {
  const handle = box.querySelector('.noUi-handle');
  const out = box.querySelector('.widget-output');
  window.__live = {t0: null, times: []};
  const figure = () => { const f = out.querySelector('img, svg'); return f ? (f.src || f.outerHTML) : ''; };
  let last = figure();
  handle.addEventListener('keydown', () => { window.__live.t0 = performance.now(); }, true);
  new MutationObserver(() => {
    const now = figure();
    if (now && now !== last && window.__live.t0 !== null) {
      window.__live.times.push(performance.now() - window.__live.t0);
      window.__live.t0 = null;
      last = now;
    }
  }).observe(out, {childList: true, subtree: true, attributes: true});
}"""


def test_live_slider_redraws_within_budget(context, page, report, tmp_path):
    port = free_port()
    log = open(tmp_path / "voila.log", "w")
    live_log = tmp_path / "live.jsonl"
    env = {**os.environ, "TOY_LIVE_LOG": str(live_log),
           "TOY_CACHE_DIR": os.environ.get("TOY_CACHE_DIR", str(tmp_path / "cache"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", str(NOTEBOOK), "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--Voila.open_browser=False",
         f"--Voila.root_dir={NOTEBOOK.parent}", "--VoilaConfiguration.show_tracebacks=True"],
        cwd=NOTEBOOK.parent, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for_server(url, proc, SERVER_TIMEOUT_S, 'voila')
        watch = Watch(context, page)
        page.set_viewport_size({"width": 1366, "height": 900})
        page.goto(url, timeout=RENDER_TIMEOUT_S * 1000)
        handle = page.locator(".widget-slider .noUi-handle").first
        handle.wait_for(state="visible", timeout=RENDER_TIMEOUT_S * 1000)
        box = handle.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
        out = box.locator(".widget-output")
        out.locator("img, svg").first.wait_for(timeout=30000)
        box.scroll_into_view_if_needed()
        page.screenshot(path=str(REPORT / "live_slider_before.png"))
        box.evaluate(MEASURE_JS)
        readout = box.locator(".widget-readout").first
        values = [readout.inner_text()]
        handle.focus()
        for i in range(MOVES):   # 0.50 -> 0.51 ... 0.56: values between the precomputed frames
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => window.__live.times.length >= {i + 1}", timeout=20000)
            values.append(readout.inner_text())
        page.screenshot(path=str(REPORT / "live_slider_after.png"))
        times_s = [t / 1000 for t in page.evaluate("() => window.__live.times")]
    finally:
        stop_server(proc, log)
    assert len(set(values)) == MOVES + 1 and len(times_s) == MOVES, (values, times_s)   # every move redrew
    kernel = [r["draw_s"] + r["render_s"] for r in map(json.loads, live_log.read_text().splitlines())]
    kernel = kernel[-MOVES:]                       # the first line is the redraw when the cell ran
    median = statistics.median(times_s)
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    allowed = BUDGET_S * max(1.0, load)
    book_external = [u for u in watch.external if VOILA_TEMPLATE_CDN not in u]
    report["live slider"] = {
        "notebook": NOTEBOOK.relative_to(ROOT).as_posix(), "moves": MOVES, "values": values,
        "round_trip_s": [round(t, 3) for t in times_s], "median_round_trip_s": round(median, 3),
        "kernel_draw_render_s": [round(t, 3) for t in kernel],
        "median_kernel_s": round(statistics.median(kernel), 3),
        "load_per_core": round(load, 2), "allowed_s": round(allowed, 3),
        "requests leaving the machine (Voila template)": sorted(set(watch.external) - set(book_external))}
    print("live slider:", json.dumps(report["live slider"]))
    assert book_external == [], book_external
    assert median <= allowed, report["live slider"]
