"""The live path a student takes, through the Makefile target a reader runs: `make lab` opens the
notebooks in JupyterLab with jupyterlab-myst, on 127.0.0.1, driven in chromium.

The test runs `make lab` itself (LAB_DIR and LAB_STATE in a temporary folder, so that it neither
touches the reader's lab/ copies nor shares JupyterLab's workspaces with a reader's own session;
LAB_NO_BROWSER=1; the token through JUPYTER_TOKEN). It checks that `make lab` opens the book's
edition (STUDENT=1, and only that variable, the student's), that a copy opens unmodified (no
"changed" mark: every cell has an id), that exercises are numbered as in the HTML book
("Exercise I.8.1"), and what the HTML book shows is there too: an exercise rendered as an
exercise, its solution a closed dropdown, a glued number as a number (no {glue:text} or :label:
source on show), the slider's static figure before the kernel runs; then it runs the cells above
the slider and the slider's cell, and checks one live slider and one figure in that cell, redrawn
when it moves.
"""
import os
import re
import secrets
import signal
import subprocess
import sys
import time

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from conftest import EDITIONS, REPORT, ROOT, Watch, free_port, wait_for_server
from test_book import exercise_titles_in

NOTEBOOK = "part1/s08_baselines.ipynb"
GLUED = "Both estimators have mean 0.1875"     # {glue:text}`p1s8_mean:.4f`, as the HTML book shows it
EXERCISE = "Why do failures teach nothing?"
SERVER_TIMEOUT_S = 90
UI_TIMEOUT_S = 180
RENDER_WAIT_S = 30       # jupyterlab-myst has rendered every cell by then
DIRTY_AFTER_S = 2.0      # a copy JupyterLab changed on opening is marked by then

RENDERED_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .myst, .jp-Notebook .jp-MarkdownOutput')]
  .filter(e => e.offsetParent !== null).map(e => e.innerText).join('\\n')"""


# every exercise numbered as the HTML numbers them, the solutions and the glued number rendered
RENDERED_ALL_JS = """([numbers, glued]) => {
  const found = [...document.querySelectorAll('aside.myst-exercise .myst-exercise-title')]
    .map(e => (/Exercise\\s+([IVX]+\\.\\d+\\.\\d+)/.exec(e.innerText) || [])[1] || null);
  const text = [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell .myst, .jp-Notebook .jp-MarkdownOutput')]
    .filter(e => e.offsetParent !== null).map(e => e.innerText).join(' ').split(/\\s+/).join(' ');
  return JSON.stringify(found) === JSON.stringify(numbers) && document.querySelectorAll('details.myst-exercise').length >= 3
         && text.includes(glued);
}"""


def slider_cell(page):
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text="widgets.slider(draw_baseline").first


def make_lab_dry_run(*args):
    return subprocess.run(["make", "--no-print-directory", "-n", "lab", *args], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def test_make_lab_chooses_the_edition_by_student_only():
    assert "--student" not in make_lab_dry_run()
    assert "--student" in make_lab_dry_run("STUDENT=1")
    assert "--student" not in make_lab_dry_run("STUDENT_DIR=elsewhere")


def test_jupyterlab_renders_the_book_and_runs_a_live_slider(context, page, report, tmp_path):
    t0 = time.monotonic()
    port, token = free_port(), secrets.token_hex(16)
    log = open(tmp_path / "lab.log", "w")
    env = {**os.environ, "JUPYTER_TOKEN": token}
    env.pop("STUDENT", None)
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_PORT={port}", f"LAB_DIR={tmp_path / 'lab'}",
                             f"LAB_STATE={tmp_path / 'state'}", "LAB_NO_BROWSER=1"],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    seen = report.setdefault("jupyterlab", {})
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api", proc, SERVER_TIMEOUT_S, 'make lab')
        # the book's edition, its copies in the temporary LAB_DIR (not the reader's lab/), no student copies
        problems = []
        if not (tmp_path / "lab" / "book" / NOTEBOOK).exists() or (tmp_path / "lab" / "student").exists():
            problems.append(f"make lab LAB_DIR=... did not make the book's copies there: {sorted(p.name for p in tmp_path.iterdir())}")
        watch = Watch(context, page)
        page.set_viewport_size({"width": 1366, "height": 900})
        page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}", timeout=UI_TIMEOUT_S * 1000)
        page.locator(".jp-Notebook .jp-MarkdownCell .myst").first.wait_for(timeout=UI_TIMEOUT_S * 1000)
        page.wait_for_function(f"() => document.querySelector('.jp-Notebook').innerText.includes({EXERCISE!r})",
                               timeout=UI_TIMEOUT_S * 1000)
        opened = time.monotonic()
        seen["opened_s"] = round(opened - t0, 1)
        # exercises numbered as in the HTML book
        html_numbers = [re.search(r"Exercise\s+([IVX]+\.\d+\.\d+)", t)
                        for t in exercise_titles_in(EDITIONS["full"] / ("notebooks/" + NOTEBOOK.replace(".ipynb", ".html")))]
        html_numbers = [m.group(1) if m else None for m in html_numbers]
        # jupyterlab-myst renders the markdown cells (and numbers the exercises) a moment after the
        # first ones show: wait (at most RENDER_WAIT_S) until what the checks below look at is
        # there, then check it
        try:
            page.wait_for_function(RENDERED_ALL_JS, arg=[html_numbers, GLUED], timeout=RENDER_WAIT_S * 1000)
        except PlaywrightTimeout:
            pass                     # not there: the checks below say what is missing
        lab_numbers = [re.search(r"Exercise\s+([IVX]+\.\d+\.\d+)", t) for t in
                       page.eval_on_selector_all("aside.myst-exercise .myst-exercise-title", "els => els.map(e => e.innerText)")]
        seen["exercise numbers"] = [m.group(1) if m else None for m in lab_numbers]
        if seen["exercise numbers"] != html_numbers:
            problems.append(f"exercises numbered {seen['exercise numbers']} in JupyterLab, {html_numbers} in the HTML")
        assert problems == [], problems

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

        # opened unmodified: JupyterLab marks a changed notebook's tab (jp-mod-dirty); looked at
        # after the checks above, at least DIRTY_AFTER_S after the notebook showed, before a cell runs
        page.wait_for_timeout(max(0.0, DIRTY_AFTER_S - (time.monotonic() - opened)) * 1000)
        dirty = page.locator(".jp-mod-dirty").count()
        seen["opened modified"] = bool(dirty)
        assert not dirty, "JupyterLab marks the copy as changed as soon as it opens"

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
        os.killpg(proc.pid, signal.SIGTERM)      # make, scripts/lab.py and JupyterLab: the group this test started
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    print("jupyterlab:", seen)
