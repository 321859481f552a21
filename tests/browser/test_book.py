"""Every page of both editions, as a reader opens it from disk (file://) in chromium."""
import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from conftest import EDITIONS, REPORT, Watch, open_page, pages, read_weights, record_weight

PAGES = pages("full")
RAW_TEX = re.compile(r"\\(\(|\[|begin\{|frac|mathbb|theta|nabla|sum_|left)")

# visible prose of the article: text outside code, outputs' <pre>, scripts and typeset math
PROSE_JS = """() => {
  const art = document.querySelector('.bd-article');
  if (!art) return '';
  const walk = document.createTreeWalker(art, NodeFilter.SHOW_TEXT, {acceptNode: (n) =>
      n.parentElement.closest('pre, code, script, style, mjx-container, .highlight')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const out = [];
  while (walk.nextNode()) out.push(walk.currentNode.textContent);
  return out.join('');
}"""


# content that sticks out of the text column (left or right) and is not in a box that scrolls
# sideways: tables, formulas (display and inline), figures, inline code, links, scrubbers
CUT_OFF_JS = """() => {
  const art = document.querySelector('.bd-article');
  if (!art) return [];
  const box = art.getBoundingClientRect();
  const scrolls = (e) => /(auto|scroll)/.test(getComputedStyle(e).overflowX);
  const out = [];
  art.querySelectorAll('table, mjx-container, img, code, pre, a, .toy-scrubber').forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || (r.right <= box.right + 1 && r.left >= box.left - 1)) return;
    for (let p = e.parentElement; p && p !== art; p = p.parentElement) if (scrolls(p)) return;
    if (e.tagName === 'A' && e.querySelector('img, mjx-container, code')) return;   // its child is checked
    out.push(e.tagName + ' ' + Math.round(Math.max(r.right - box.right, box.left - r.left)) + ' px out: '
             + (e.textContent || e.getAttribute('alt') || '').trim().slice(0, 50));
  });
  return out;
}"""

# the page itself must not scroll sideways (a phone shows a horizontal scrollbar and the text
# moves under the finger)
SIDEWAYS_JS = """() => document.documentElement.scrollWidth - document.documentElement.clientWidth"""

# Every formula typeset when the book was built: each .math element holds MathJax's SVG (no TeX
# left, no merror node, no formula drawn in red), and the page runs no maths: no MathJax object,
# no MathJax script or font loaded (checked on the files the page loaded: Watch.files)
MATH_JS = r"""() => {
  const maths = [...document.querySelectorAll('.math')];
  const bad = [];
  const left = maths.filter((e) => !e.querySelector('mjx-container > svg'));
  left.slice(0, 3).forEach((e) => bad.push('not typeset: ' + JSON.stringify(e.textContent.slice(0, 60))));
  const errors = document.querySelectorAll('[data-mml-node="merror"], mjx-merror, mjx-container [fill="red"]').length;
  if (errors) bad.push(errors + ' TeX errors on the page');
  const tex = maths.filter((e) => /\\\(|\\\[/.test(e.textContent.replace(/<[^>]*>/g, '')) && !e.querySelector('mjx-assistive-mml'));
  if (tex.length) bad.push(tex.length + ' formulas show TeX');
  return {typeset: document.querySelectorAll('mjx-container').length, formulas: maths.length, bad,
          left: left.length, runtime: typeof window.MathJax !== 'undefined'};
}"""

# control characters in the text a reader sees (TAB only outside code, where it is a typo)
CONTROL_JS = r"""() => {
  const art = document.querySelector('.bd-article');
  if (!art) return [];
  const walk = document.createTreeWalker(art, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walk.nextNode()) {
    const n = walk.currentNode, t = n.textContent;
    const code = n.parentElement.closest('pre, code, .highlight, script, style');
    const m = t.match(code ? /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/ : /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/);
    if (m && !n.parentElement.closest('script, style'))
      out.push('U+' + m[0].charCodeAt(0).toString(16).padStart(4, '0') + ' in ' + JSON.stringify(t.slice(Math.max(0, m.index - 30), m.index + 30)));
  }
  return out;
}"""

# every figure shown: its rendered shape against its own (natural) shape, and how much it is
# scaled from its design size (the inline width myst-nb gives it, else its natural width)
FIGURES_JS = """() => [...document.querySelectorAll('.bd-article img')].map((i) => {
  const r = i.getBoundingClientRect();
  if (!r.width || !r.height || !i.naturalWidth || i.closest('.toy-zoom')) return null;
  return {id: (i.getAttribute('alt') || i.id || '').slice(-40),
          rendered: r.width / r.height, natural: i.naturalWidth / i.naturalHeight,
          scale: r.width / (parseFloat(i.style.width) || i.naturalWidth)};
}).filter(Boolean)"""

# figures: none inside a link (a tap would open the bare image), every alt text a sentence (not
# a file path), and the size of its tick labels as shown: matplotlib's 10 pt ticks, at 80 dpi for
# a PNG (design width = its inline width, CSS px) and 1 pt = 4/3 px for a scrubber's SVG frame
FIGURE_TEXT_JS = """() => [...document.querySelectorAll('.bd-article .cell_output img, .bd-article .toy-scrubber img')]
  .filter((i) => !i.closest('.toy-zoom')).map((i) => {
  const r = i.getBoundingClientRect();
  const svg = (i.getAttribute('src') || '').startsWith('data:image/svg');
  const design = svg ? i.naturalWidth * 3 / 4 * 80 / 72
                     : (parseFloat(i.style.width) || parseFloat(i.style.getPropertyValue('--toy-w')) || i.naturalWidth / 2);
  const alt = i.getAttribute('alt') || '';
  return {alt: alt.slice(0, 80), link: !!i.closest('a[href]'),
          altIsPath: !alt.trim() || /_images\\/|\\.png$|^\\.\\.\\//.test(alt) || !/\\s/.test(alt.trim()) || alt.length < 20,
          tickPx: r.width ? 10 * (80 / 72) * r.width / design : null};
})"""

# something that scrolls sideways in the article (a figure kept readable, a wide table or formula)
# shows it: reader.js marks it toy-scrolls and fades its hidden side (a mask), and a figure or
# table has a "scroll sideways" line under it
SCROLL_HINT_JS = """() => {
  const out = [];
  document.querySelectorAll('.bd-article table, .bd-article .toy-figure, .bd-article .cell_output > div, .bd-article div.math, .bd-article mjx-container, .bd-article .pst-scrollable-table-container').forEach((e) => {
    const cs = getComputedStyle(e);
    if (!/(auto|scroll)/.test(cs.overflowX) || e.scrollWidth <= e.clientWidth + 1 || e.clientWidth === 0) return;
    if (e.parentElement.closest('.toy-scrolls') || e.querySelector('.toy-scrolls')) return;   // the box around it or in it says so
    const mask = cs.maskImage || cs.webkitMaskImage || 'none';
    const hint = e.nextElementSibling && e.nextElementSibling.classList.contains('toy-scroll-hint');
    const needsLine = !e.matches('mjx-container, div.math');
    if (!e.classList.contains('toy-scrolls') || mask === 'none' || (needsLine && !hint))
      out.push(e.tagName + '.' + [...e.classList].slice(0, 2).join('.') + ' scrolls ' + (e.scrollWidth - e.clientWidth) + ' px with no hint');
  });
  return out;
}"""

# punctuation after an inline formula stays on the formula's line; "70 %" never breaks before "%"
PUNCTUATION_JS = """() => {
  const out = [];
  document.querySelectorAll('.bd-article mjx-container:not([display="true"])').forEach((m) => {
    let host = m.closest('.math') || m, next = host.nextSibling;
    if (!next && host.parentElement.classList.contains('toy-nobr')) return;
    if (!next || next.nodeType !== 3 || !/^[,.;:]/.test(next.textContent)) return;
    const range = document.createRange();
    range.setStart(next, 0); range.setEnd(next, 1);
    const p = range.getBoundingClientRect(), r = m.getBoundingClientRect();
    if (p.height && r.height && p.top >= r.bottom - 2) out.push('"' + next.textContent[0] + '" after a formula starts a line');
  });
  return out;
}"""

NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
WIDTHS = (1366, 900, 390)
MB = 1e6
# Page weight budgets, everything a page loads. History: 4.9-6.0 MB (MathJax's all-in-one file, the
# theme's icon script), then a median of 2.86 MB and 3.75 MB at most (MathJax's SVG components,
# 1.7 MB, on every page with a formula; 0.40 MB of theme CSS). Now the maths is typeset when the
# book is built (no MathJax, no font) and the theme CSS is cut to what the pages use.
WEIGHT_MEDIAN = 1.2 * MB
WEIGHT_MAX = 2.0 * MB
MIN_TICK_PX = 8.0          # figure text at 390 px


def layout_problems(page, width):
    """Set the width and return what is wrong with the layout there, and the figures seen."""
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    page.evaluate(NEXT_FRAME)
    figures = page.evaluate(FIGURES_JS)
    problems = [f"{width}px: figure {f['id']} shown at {f['rendered']:.2f}:1, is {f['natural']:.2f}:1"
                for f in figures if abs(f["rendered"] / f["natural"] - 1) > 0.02]
    problems += [f"{width}px: {c}" for c in page.evaluate(CUT_OFF_JS)]
    sideways = page.evaluate(SIDEWAYS_JS)
    if sideways > 0:
        problems.append(f"{width}px: the page scrolls sideways by {sideways} px")
    return problems, figures


def count(report, edition, key, n=1):
    report.setdefault(edition, {}).setdefault(key, 0)
    report[edition][key] += n


def exercise_titles(page):
    return page.eval_on_selector_all(".exercise > .admonition-title",
                                     "els => els.map(e => e.textContent.split(/\\s+/).join(' ').trim())")


def exercise_titles_in(html_file):
    """The exercise titles of a built page, read from its HTML (as innerText shows them)."""
    html = html_file.read_text()
    titles = re.findall(r'<div class="exercise[^"]*"[^>]*>\s*<p class="admonition-title">(.*?)</p>', html, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in titles]


def test_both_editions_have_the_same_pages():
    assert PAGES == pages("student") and len(PAGES) > 25


def drag(page, scrubber):
    """Drag the scrubber's thumb to the far end of its track; return (src, label) before and after."""
    inp, img = scrubber.locator("input[type=range]"), scrubber.locator("img")
    lab = scrubber.locator("b")
    inp.scroll_into_view_if_needed()
    before = img.get_attribute("src"), lab.inner_text()
    box = inp.bounding_box()
    v, top = int(inp.input_value()), int(inp.get_attribute("max"))
    x0 = box["x"] + 8 + (box["width"] - 16) * v / top          # the thumb's centre (16 px thumb)
    x1 = box["x"] + (2 if v > top / 2 else box["width"] - 2)    # the far end
    y = box["y"] + box["height"] / 2
    page.mouse.move(x0, y)
    page.mouse.down()
    page.mouse.move(x1, y, steps=8)
    page.mouse.up()
    return before, (img.get_attribute("src"), lab.inner_text())


def trace_first_number(page, name, width=None):
    """Tap the page's first glued number (one with an s.e. if any): a box shows it ± its s.e. and a
    link to its cell, whose source is on the page; Escape closes the box. Returns the box's text."""
    if width:
        page.set_viewport_size({"width": width, "height": 844})
    numbers = page.locator(".bd-article .toy-glue[data-se]:visible")     # (not one in a closed solution)
    if not numbers.count():
        numbers = page.locator(".bd-article .toy-glue:visible")
    if not numbers.count():
        return None
    number = numbers.first
    number.scroll_into_view_if_needed()
    number.tap() if width else number.click()
    pop = page.locator(".toy-glue-pop")
    pop.wait_for(state="visible", timeout=3000)
    text = pop.inner_text()
    se = number.get_attribute("data-se")
    assert (f"± {se}" in text) if se else "no standard error" in text, (name, text)
    href = pop.locator("a.toy-glue-link").get_attribute("href")
    cell = page.locator(href)
    assert cell.count() == 1 and cell.locator("pre").text_content().strip(), (name, href)
    page.keyboard.press("Escape")
    assert page.locator(".toy-glue-pop").count() == 0
    return text


def interact(page, report, edition, name):
    """test_page's clicks and drags, at 1366 px: section references, scrubbers, solutions."""
    # section references: a "§I.8" link opens the page whose heading is numbered I.8
    refs = page.eval_on_selector_all(
        ".bd-article a.reference.internal",
        r"els => els.filter(e => /^§[IV]+\.\d+$/.test(e.textContent.trim())).map(e => [e.textContent.trim(), e.href])")
    for text, href in refs:
        target = Path(unquote(urlsplit(href).path))
        heading = re.search(r'<h1><span class="section-number">([^<]*)\. </span>', target.read_text())
        assert heading and heading.group(1) == text[1:], (name, text, href)
    count(report, edition, "§ links followed", len(refs))

    # figures: how many PNGs carry twice their displayed pixels (notebooks executed with toy.plots'
    # retina setting); recorded, not asserted, until every notebook has been re-executed with it
    png = page.eval_on_selector_all(".cell_output img[src$='.png']",
                                    "els => els.map(e => e.naturalWidth >= 1.9 * e.width)")
    count(report, edition, "PNG figures", len(png))
    count(report, edition, "PNG figures at 2x", sum(png))

    # scrubbers: dragging changes the frame and its label
    for scrubber in page.locator(".toy-scrubber").all():
        (src0, lab0), (src1, lab1) = drag(page, scrubber)
        assert src1 != src0 and lab1 != lab0, (name, lab0, lab1)
        alt = scrubber.locator("img").get_attribute("alt")
        assert alt.endswith(f"= {lab1}"), (name, alt, lab1)        # the alt text follows the frame
        count(report, edition, "scrubbers dragged")

    # solutions: collapsed at first, and a click on the title (its link too) opens them in place
    solutions = page.locator(".solution.dropdown").all()
    if edition == "student":
        assert solutions == []
        outputs = page.eval_on_selector_all(".cell_output", "els => els.map(e => e.innerText).join(' ')")
        assert "✓" not in outputs
        assert exercise_titles(page) == exercise_titles_in(EDITIONS["full"] / name), name
    count(report, edition, "exercises", len(exercise_titles(page)))
    titles = page.eval_on_selector_all(".solution > .admonition-title", "els => els.map(e => e.innerText)")
    assert len(set(titles)) == len(titles), titles
    assert all(t.startswith("Solution to Exercise ") for t in titles), titles
    # ... with the space outside the link (inside it, it is underlined: "Solution to_Exercise")
    links = page.eval_on_selector_all(".solution > .admonition-title a", "els => els.map(e => e.textContent)")
    assert not [t for t in links if t[:1].isspace()], links
    for sol in solutions:
        body = sol.locator("section").first
        assert not body.is_visible(), name
        title = sol.locator(".admonition-title a").first
        if title.count() == 0:
            title = sol.locator(".admonition-title")
        title.click()                 # (scrolls it into view first)
        body.wait_for(state="visible", timeout=3000)
        assert sol.locator(".admonition-title").is_visible()   # opened where it is, no jump
        count(report, edition, "solutions opened")


@pytest.fixture
def weighed(request, report):
    """After test_page (passed or failed), the page's weight as it measured it, for test_page_weight."""
    yield
    edition, name = (request.node.callspec.params[k] for k in ("edition", "name"))
    record_weight(edition, name, report.get("page weight (bytes)", {}).get(f"{edition}/{name}"))


@pytest.mark.parametrize("edition", list(EDITIONS))
@pytest.mark.parametrize("name", PAGES)
def test_page(context, page, report, weighed, edition, name):
    watch = open_page(context, page, edition, name)
    count(report, edition, "pages")
    weights = report.setdefault("page weight (bytes)", {})
    weights[f"{edition}/{name}"] = watch.weight()      # again at the end, with what clicks loaded

    # math: typeset when the book was built, no TeX errors or control characters, no raw TeX left in
    # the prose, no maths runtime or font loaded
    math = page.evaluate(MATH_JS)
    prose = page.evaluate(PROSE_JS)
    count(report, edition, "formulas typeset", math["typeset"])
    control = page.evaluate(CONTROL_JS)
    # the reader's-site checks collect every defect of the page, by check (report.json counts the
    # pages failing each), and fail together below
    defects = {}
    mathjax_files = sorted(f.name for f in watch.files if "mathjax" in str(f).lower())
    count(report, edition, "pages loading MathJax", bool(mathjax_files or math["runtime"]))
    if math["runtime"] or mathjax_files:
        defects["loads a maths runtime (MathJax)"] = mathjax_files[:3]
    # "70 %": a number and its percent sign never split over two lines
    split = re.search(r".{0,30}\d[ \t]%.{0,10}", prose)
    if split:
        defects['"%" can start a line'] = [split.group(0)]
    # sliders: each has an accessible name
    unnamed = page.eval_on_selector_all(
        "input[type=range]", "els => els.filter(e => !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby') && !e.labels.length).length")
    if unnamed:
        defects["sliders without an accessible name"] = [unnamed]

    # layout at each width: figures keep their shape, nothing sticks out, no sideways scroll
    problems = []
    for width in WIDTHS:
        found, figures = layout_problems(page, width)
        problems += found
        if width == 1366:
            # the clicks and drags at 1366 px, before the narrower widths (one resize fewer): the
            # solutions they open are laid out and checked at 900 and 390 px with the rest
            interact(page, report, edition, name)
        if width <= 600:
            figure_text = page.evaluate(FIGURE_TEXT_JS)
            ticks = [f["tickPx"] for f in figure_text if f["tickPx"]]
            if ticks:
                key = f"smallest figure text at {width}px (CSS px)"
                report.setdefault(edition, {})[key] = round(min([report[edition].get(key, 99.0)] + ticks), 2)
            small = [f"{f['tickPx']:.1f} px: {f['alt'][:40]}" for f in figure_text if f["tickPx"] and f["tickPx"] < MIN_TICK_PX - 0.05]
            for key, found in ((f"figure text < {MIN_TICK_PX:g} px at {width}px", small),
                               (f"scrolls sideways with no hint at {width}px", page.evaluate(SCROLL_HINT_JS)),
                               (f"punctuation after a formula starts a line at {width}px", page.evaluate(PUNCTUATION_JS))):
                if found:
                    defects.setdefault(key, []).extend(found)
        count(report, edition, f"figures shown at {width}px", len(figures))
        count(report, edition, f"figures distorted at {width}px",
              sum(abs(f["rendered"] / f["natural"] - 1) > 0.02 for f in figures))
        if figures:
            scale = report.setdefault(edition, {}).setdefault(f"smallest figure scale at {width}px", 1.0)
            report[edition][f"smallest figure scale at {width}px"] = round(min([scale] + [f["scale"] for f in figures]), 3)
    # figures: none opens the bare image (a link around it), every one has an alt text that says
    # what it shows
    figure_text = page.evaluate(FIGURE_TEXT_JS)
    count(report, edition, "figures", len(figure_text))
    count(report, edition, "figures that navigate away (inside a link)", sum(f["link"] for f in figure_text))
    count(report, edition, "figures whose alt text is a file path or empty", sum(f["altIsPath"] for f in figure_text))
    if any(f["link"] for f in figure_text):
        defects["figures inside a link (a tap opens the bare image)"] = [f["alt"] for f in figure_text if f["link"]][:3]
    if any(f["altIsPath"] for f in figure_text):
        defects["alt text is a file path or empty"] = [f["alt"] for f in figure_text if f["altIsPath"]][:3]
    # glued numbers: every one (myst-nb's pasted-text) can be traced; a tap on the first shows its
    # ± s.e. (when glued) and a link to the source of the cell that computed it
    glued = page.locator(".bd-article .pasted-text").count()
    traced = page.locator(".bd-article .toy-glue .pasted-text").count()
    if glued:
        count(report, edition, "pages with glued numbers")
        count(report, edition, "glued numbers", glued)
        count(report, edition, "glued numbers traced", traced)
        if traced != glued:
            defects["glued numbers that cannot be traced"] = [f"{glued - traced} of {glued}"]
        elif trace_first_number(page, name) is not None:
            count(report, edition, "pages with a traced number (tapped)")
    for key in defects:
        count(report, edition, f"pages failing: {key}")
    assert defects == {}, (name, defects)
    assert math["bad"] == [] and math["left"] == 0, (name, math["bad"], math["left"])
    assert not RAW_TEX.search(prose), prose[max(0, RAW_TEX.search(prose).start() - 60):][:120]
    assert control == [], (name, control)
    assert problems == [], (name, problems)

    # phone width (the page is still 390 px wide): the chapter list opens from the visible toggle
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator(".primary-toggle:visible").first.click()
    dialog = page.locator("#pst-primary-sidebar-modal")
    dialog.locator("nav a").first.wait_for(state="visible", timeout=3000)
    assert dialog.locator("nav a:visible").count() >= 25
    page.keyboard.press("Escape")

    assert watch.external == [], watch.external
    assert watch.failed == [], watch.failed
    assert watch.errors == [], watch.errors
    count(report, edition, "requests leaving the machine", len(watch.external))
    weights[f"{edition}/{name}"] = watch.weight()


def test_page_weight(request, report):
    """Runs after every page was opened (the last test; on two workers it waits for the pages the
    other one is still opening): the median page and the heaviest within budget."""
    expected = sum(getattr(item, "originalname", None) == "test_page" for item in request.session.items)
    weights = read_weights(expected, timeout_s=300) if expected >= 2 * len(PAGES) else None
    if not weights or None in weights.values():
        pytest.skip("needs every page of both editions opened first (test_page)")
    ordered = sorted(weights.values())
    median = ordered[len(ordered) // 2]
    heaviest = max(weights, key=weights.get)
    report["page weight"] = {"median_MB": round(median / MB, 2), "heaviest": heaviest,
                             "heaviest_MB": round(weights[heaviest] / MB, 2)}
    print("page weight:", report["page weight"])
    assert median <= WEIGHT_MEDIAN and weights[heaviest] <= WEIGHT_MAX, report["page weight"]


@pytest.mark.parametrize("width", [390, 900, 1366])
def test_navigation_at_every_width(context, page, width):
    name = "notebooks/part1/s08_baselines.html"
    open_page(context, page, "full", name, width=width)
    REPORT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(REPORT / f"s08_{width}px.png"))
    toggle = page.locator(".bd-header-article .primary-toggle")
    assert toggle.is_visible()
    sidebar = page.locator("#pst-primary-sidebar")
    if width >= 960:                       # desktop: the toggle collapses and restores the list
        assert sidebar.is_visible()
        toggle.click()
        assert not sidebar.is_visible()
        page.screenshot(path=str(REPORT / f"s08_{width}px_collapsed.png"))
        toggle.click()
        assert sidebar.is_visible()
    else:                                  # narrow: the toggle opens the list as a dialog
        assert not sidebar.is_visible()
        toggle.click()
        dialog = page.locator("#pst-primary-sidebar-modal")
        dialog.locator("nav a").first.wait_for(state="visible", timeout=3000)
        assert dialog.get_by_text("I.8. Baselines", exact=False).first.is_visible()
        page.screenshot(path=str(REPORT / f"s08_{width}px_chapters.png"))


def test_pages_over_http(context, page, report):
    """The same book served over http from 127.0.0.1 (as `python -m http.server` would)."""
    import functools
    import http.server
    import threading
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(EDITIONS["full"]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for name in ("index.html", "notebooks/part1/s08_baselines.html", "book/toy_to_real.html"):
            watch = Watch(context, page)
            page.goto(f"http://127.0.0.1:{server.server_port}/{name}", wait_until="load")
            page.wait_for_load_state("networkidle")
            page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
            assert page.locator(".bd-article").count() == 1, name
            assert page.evaluate(MATH_JS)["bad"] == [], name
            assert watch.external == [] and watch.failed == [] and watch.errors == [], name
            count(report, "full over http", "pages")
        watch = Watch(context, page)
        results = search(page, f"http://127.0.0.1:{server.server_port}/search.html")
        with_text = [t for t, text in results if text.strip()]
        report["search over http"] = {"results": len(results), "with text": len(with_text)}
        assert len(results) >= 5 and len(with_text) == len(results), results
        assert watch.errors == [] and watch.failed == [] and watch.external == [], watch.errors[:3]
    finally:
        server.shutdown()


def test_every_figure_enlarges_in_place_on_a_tap(context, page, report):
    """At 390 px with touch: a tap on any figure of a page (PNGs and a scrubber's frame) opens it
    enlarged over the page (at its design size or the screen's width, in its own shape) and never
    leaves the page; a tap, Escape or the back button closes it."""
    name = "notebooks/part3/s04_grpo_biases.html"
    open_page(context, page, "full", name, width=390)
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate(NEXT_FRAME)
    url = page.url
    figures = page.locator(".bd-article .cell_output img")
    seen = {"page": name, "figures": figures.count(), "enlarged": 0, "navigated away": 0}
    report["figure taps at 390px"] = seen
    closers = ["tap", "Escape", "back"]
    for i in range(figures.count()):
        figure = figures.nth(i)
        figure.scroll_into_view_if_needed()
        shown = figure.bounding_box()["width"]
        design = figure.evaluate("(i) => i.src.startsWith('data:image/svg') ? i.naturalWidth"
                                 " : (parseFloat(i.style.width) || parseFloat(i.style.getPropertyValue('--toy-w')) || i.naturalWidth)")
        figure.tap()
        page.wait_for_timeout(300)
        if page.url.split("#")[0] != url.split("#")[0]:
            seen["navigated away"] += 1
            page.goto(url, wait_until="load")
            page.set_viewport_size({"width": 390, "height": 844})
            continue
        big = page.locator(".toy-zoom img")
        big.wait_for(state="visible", timeout=3000)
        if i == 0:
            page.screenshot(path=str(REPORT / "zoom_390px.png"))
        box = big.bounding_box()
        natural = big.evaluate("(i) => i.naturalWidth / i.naturalHeight")
        assert box["width"] >= min(design, 1200) - 1 and box["width"] >= 390 - 16 - 1, (i, box, design, shown)
        assert abs(box["width"] / box["height"] / natural - 1) <= 0.02
        closer = closers[i % 3]
        if closer == "tap":
            page.locator(".toy-zoom").tap()
        elif closer == "Escape":
            page.keyboard.press("Escape")
        else:
            page.go_back()
        page.locator(".toy-zoom").wait_for(state="detached", timeout=3000)
        assert page.url.split("#")[0] == url.split("#")[0], (closer, page.url)
        seen["enlarged"] += 1
    assert seen["navigated away"] == 0 and seen["enlarged"] == seen["figures"] >= 3, seen


def test_a_traced_number_on_a_phone(context, page, report):
    """At 390 px: a tap on a glued number shows it ± its s.e. and its cell; the link opens the
    cell's source at the end of the page (its input is hidden on the page)."""
    name = "notebooks/part1/s08_baselines.html"
    open_page(context, page, "full", name, width=390)
    text = trace_first_number(page, name, width=390)
    number = page.locator(".bd-article .toy-glue[data-se]:visible").first
    number.tap()
    page.locator(".toy-glue-pop").wait_for(state="visible", timeout=3000)
    page.screenshot(path=str(REPORT / "traced_number_390px.png"))
    link = page.locator(".toy-glue-pop a.toy-glue-link")
    href = link.get_attribute("href")
    link.tap()
    source = page.locator(f"{href} pre")
    source.wait_for(state="visible", timeout=3000)
    page.screenshot(path=str(REPORT / "traced_number_source_390px.png"))
    report["traced number at 390px"] = {"page": name, "shows": " ".join(text.split())[:160], "cell": href}


def search(page, url):
    """Search the book for "baseline"; return the results' titles and their lines of text."""
    page.goto(url + "?q=baseline", wait_until="load")
    page.wait_for_function("() => /finished/.test(document.querySelector('#search-results')?.innerText || '')",
                           timeout=30000)
    try:    # the summaries arrive after the list: one <p> in each result once its page was read
        page.wait_for_function("() => [...document.querySelectorAll('#search-results li')].every(e => e.querySelector('p'))",
                               timeout=5000)
    except PlaywrightTimeout:
        pass                       # a result without one: the caller's checks name it
    return page.eval_on_selector_all(
        "#search-results li", "els => els.map(e => [e.querySelector('a').innerText, (e.querySelector('p.context') || {}).innerText || ''])")


FURNITURE = re.compile(r"\.ipynb|\.pdf|\bContents\b|Show code|Hide code|Skip to main|previous|next\b", re.I)

# the search box: the magnifier must not cover the text typed (the input's text starts to its right)
SEARCH_BOX_JS = """() => {
  const input = document.querySelector('.bd-search-container input[name=q], #search-input, .bd-article input[type=search]')
             || document.querySelector('input[name=q]');
  const icon = input && input.parentElement.querySelector('i.fa-magnifying-glass, .fa-magnifying-glass');
  if (!input || !icon) return null;
  const cs = getComputedStyle(input), r = input.getBoundingClientRect(), i = icon.getBoundingClientRect();
  return {textStart: r.left + parseFloat(cs.paddingLeft) + parseFloat(cs.borderLeftWidth), iconRight: i.right,
          overlap: i.right > r.left + parseFloat(cs.paddingLeft) + parseFloat(cs.borderLeftWidth) + 0.5 && i.left < r.right};
}"""


def test_search_shows_text_from_file(context, page, report):
    """Search from file:// for "baseline": every result has a readable line (its section's title and
    a sentence: no page furniture, no TeX), §I.8 "Baselines" comes first, and the magnifier does not
    cover the text typed in the search box."""
    watch = Watch(context, page)
    results = search(page, (EDITIONS["full"] / "search.html").as_uri())
    page.screenshot(path=str(REPORT / "search_file.png"))
    with_text = [t for t, text in results if text.strip()]
    sections = page.eval_on_selector_all("#search-results li", "els => els.map(e => !!e.querySelector('.toy-search-section'))")
    junk = [text[:80] for _, text in results if FURNITURE.search(text) or RAW_TEX.search(text)]
    box = page.evaluate(SEARCH_BOX_JS)
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("input[name=q]").last.fill("baseline")
    box390 = page.evaluate(SEARCH_BOX_JS)
    page.screenshot(path=str(REPORT / "search_390px.png"))
    report["search from file://"] = {"results": len(results), "with text": len(with_text),
                                     "with a section title": sum(sections), "snippets with furniture or TeX": len(junk),
                                     "first": results[0][0] if results else None,
                                     "magnifier covers the text": [b and b["overlap"] for b in (box, box390)]}
    assert len(results) >= 5 and len(with_text) == len(results), results
    assert junk == [], junk
    assert all(sections), "a result without its section's title"
    assert results[0][0].startswith("I.8") or "Baselines" in results[0][0].split(">")[0], [r[0] for r in results[:3]]
    assert box and box390 and not box["overlap"] and not box390["overlap"], (box, box390)
    assert watch.errors == [] and watch.failed == [] and watch.external == [], watch.errors[:3]
