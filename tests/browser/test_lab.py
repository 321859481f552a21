"""The live path a student takes (`make lab`): the notebooks in JupyterLab with jupyterlab-myst, on
127.0.0.1, driven in chromium.

scripts/lab.py makes the lab copies (here into a temporary folder) and gives the JupyterLab
command line and environment that `make lab` uses. The test opens §I.8 as a student would and
checks what the HTML book shows is there too: an exercise rendered as an exercise, its solution a
closed dropdown, a glued number as a number (no {glue:text} or :label: source on show), the
slider's static figure before the kernel runs; then it runs the cells above the slider and the
slider's cell, and checks one live slider and one figure in that cell, redrawn when it moves.

BOOK_LAB_AS_BEFORE=1 runs the same checks on the notebooks as they are (no lab copies, no
TOY_LIVE): what a student saw before `make lab`, where they fail.
"""
import os
import secrets
import shutil
import subprocess
import sys
import time

from conftest import REPORT, ROOT, Watch, free_port, stop_server, wait_for_server

sys.path.insert(0, str(ROOT / "scripts"))
import lab  # noqa: E402

NOTEBOOK = "part1/s08_baselines.ipynb"
GLUED = "Both estimators have mean 0.1875"     # {glue:text}`p1s8_mean:.4f`, as the HTML book shows it
EXERCISE = "Why do failures teach nothing?"
SERVER_TIMEOUT_S = 90
UI_TIMEOUT_S = 180

RENDERED_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .myst, .jp-Notebook .jp-MarkdownOutput')]
  .filter(e => e.offsetParent !== null).map(e => e.innerText).join('\\n')"""


def slider_cell(page):
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text="widgets.slider(draw_baseline").first


def test_jupyterlab_renders_the_book_and_runs_a_live_slider(context, page, report, tmp_path):
    t0 = time.monotonic()
    root = lab.prepare(lab=tmp_path / "lab", quiet=True)
    port, token = free_port(), secrets.token_hex(16)
    log = open(tmp_path / "lab.log", "w")
    env = {**lab.environment(), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    if os.environ.get("BOOK_LAB_AS_BEFORE"):
        root = tmp_path / "as-before"
        shutil.copytree(ROOT / "notebooks", root)
        env.pop("TOY_LIVE")
    # its own workspaces (a later flag wins): a notebook left open in `make lab`, or by an earlier run
    # of this test, is not restored over the one it opens
    proc = subprocess.Popen(lab.command(root, port, open_browser=False) + [f"--IdentityProvider.token={token}",
                                                                           f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"],
                            cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    seen = report.setdefault("jupyterlab", {})
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api", proc, SERVER_TIMEOUT_S, 'jupyter lab')
        watch = Watch(context, page)
        page.set_viewport_size({"width": 1366, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}", timeout=UI_TIMEOUT_S * 1000)
        page.locator(".jp-Notebook .jp-MarkdownCell .myst").first.wait_for(timeout=UI_TIMEOUT_S * 1000)
        page.wait_for_function(f"() => document.querySelector('.jp-Notebook').innerText.includes({EXERCISE!r})",
                               timeout=UI_TIMEOUT_S * 1000)
        seen["opened_s"] = round(time.monotonic() - t0, 1)

        # MyST rendered: the exercise as an exercise, its solution closed, the glued number
        exercise = page.locator("aside.myst-exercise").filter(has_text=EXERCISE).first
        exercise.scroll_into_view_if_needed()
        assert exercise.locator(".myst-exercise-title").inner_text().startswith("Exercise"), exercise.inner_text()
        solutions = page.locator("details.myst-exercise")
        assert solutions.count() >= 3
        assert page.locator("details.myst-exercise[open]").count() == 0
        first = solutions.first
        assert first.locator("summary").inner_text().startswith("Solution to Exercise")
        page.screenshot(path=str(REPORT / "lab_exercise.png"))
        text = page.evaluate(RENDERED_JS)
        assert GLUED in " ".join(text.split()), "glued number missing"
        for raw in ("{glue:text}", ":label:", "{exercise}", "{solution", ":class: dropdown"):
            assert raw not in text, raw
        seen.update(exercises=page.locator("aside.myst-exercise").count(), solutions_closed=solutions.count())

        # before the kernel runs: the slider cell shows its static figure, no dead scrubber
        cell = slider_cell(page)
        cell.scroll_into_view_if_needed()
        assert cell.locator(".toy-scrubber-static img").count() == 1
        assert cell.locator("input[type=range]").count() == 0

        # run the cells above the slider's, then the slider's: one live slider, one figure
        cell.locator(".jp-InputArea-editor").click()
        page.locator(".lm-MenuBar-item", has_text="Run").click()
        page.locator(".lm-Menu-item", has_text="Run All Above Selected Cell").click()
        page.wait_for_function("() => !document.querySelector('.jp-Notebook .jp-InputPrompt')?.innerText.includes('*') &&"
                               " [...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')].every(p => !p.innerText.includes('*'))",
                               timeout=UI_TIMEOUT_S * 1000)
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        handle = cell.locator(".widget-slider .noUi-handle, .widget-slider input[type=range]").first
        handle.wait_for(state="visible", timeout=UI_TIMEOUT_S * 1000)
        figure = cell.locator(".widget-output img, .widget-output svg").first
        figure.wait_for(timeout=60000)
        cell.scroll_into_view_if_needed()
        assert cell.locator(".widget-slider").count() == 1, "one slider per cell"
        assert cell.locator(".jp-OutputArea img, .jp-OutputArea svg.main-svg, .jp-OutputArea .widget-output svg").count() == 1
        assert cell.locator(".toy-scrubber, .toy-scrubber-static").count() == 0
        before = figure.evaluate("f => f.src || f.outerHTML")
        readout = cell.locator(".widget-readout").first.inner_text()
        page.screenshot(path=str(REPORT / "lab_slider_before.png"))

        # move it: the kernel redraws the figure
        cell.locator(".noUi-handle").first.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "([sel, before]) => { const f = document.querySelectorAll(sel)[0]; return f && (f.src || f.outerHTML) !== before; }",
            arg=[".jp-Notebook .widget-output img, .jp-Notebook .widget-output svg", before], timeout=60000)
        after_readout = cell.locator(".widget-readout").first.inner_text()
        assert after_readout != readout
        page.screenshot(path=str(REPORT / "lab_slider_after.png"))
        seen.update(slider_moved=[readout, after_readout], total_s=round(time.monotonic() - t0, 1))
        assert watch.external == [], watch.external
    finally:
        stop_server(proc, log)
    print("jupyterlab:", seen)
