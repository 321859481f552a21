"""The browser suite: the built book (both editions) in Debian's chromium, driven by Playwright.

Run with ``make browser`` (it installs requirements-browser.txt, builds what is missing and sets
BOOK_BROWSER_TESTS=1). Without that variable these files are not collected, so ``make test`` and
``pytest tests`` never need a browser.

Every request that is not file://, data: or to 127.0.0.1 is aborted and recorded: the tests
assert that there are none.

``make browser`` runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``: one test
per work unit, handed out in the order below), each with its own chromium. The two tests that start
a Jupyter server go first, so that their servers start while the other worker opens pages; the
page-weight budget goes last (it reads every page's weight from ``_build/browser/page-weights``,
written by ``test_page`` on either worker). Each worker's counts are merged into one report.json.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
# BOOK_HTML / BOOK_STUDENT_HTML point the suite at other builds (e.g. an older commit's book, to
# see a new check fail on it)
EDITIONS = {"full": Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")),
            "student": Path(os.environ.get("BOOK_STUDENT_HTML", ROOT / "_build" / "student" / "_build" / "html"))}
CHROMIUM = os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPORT = ROOT / "_build" / "browser"
WEIGHTS = REPORT / "page-weights"      # one file per page opened by test_page (any worker)
FIRST = ("test_jupyterlab_renders_the_book_and_runs_a_live_slider", "test_live_slider_redraws_within_budget")
LAST = ("test_page_weight",)

if not os.environ.get("BOOK_BROWSER_TESTS"):
    collect_ignore_glob = ["test_*.py"]


def local(url):
    """Does this request stay on the machine?"""
    if url.split(":", 1)[0] in ("file", "data", "blob", "about"):
        return True
    return urlsplit(url).hostname in ("127.0.0.1", "localhost")


def pages(edition):
    """Every page a reader can open (docnames), the same list for both editions."""
    root = EDITIONS[edition]
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html")
                  if p.parts[len(root.parts)] not in ("_static", "_sources", "_images"))


@pytest.fixture(scope="session")
def context():
    from playwright.sync_api import sync_playwright
    for root in EDITIONS.values():
        assert (root / "index.html").exists(), f"build {root} first (make browser does)"
    profile = tempfile.mkdtemp(prefix="book-chromium-")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=ARGS, headless=True,
            viewport={"width": 1366, "height": 900}, service_workers="block", has_touch=True)
        ctx.blocked = []

        def gate(route):
            if local(route.request.url):
                route.continue_()
            else:
                ctx.blocked.append(route.request.url)
                route.abort()

        ctx.route("**/*", gate)
        yield ctx
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


class Watch:
    """What one page load did: requests aborted (external), local requests that failed, JS errors,
    and every file:// resource it loaded (for its weight)."""

    def __init__(self, context, page):
        self.context, self.start = context, len(context.blocked)
        self.failed, self.errors, self.files = [], [], set()
        page.on("requestfailed", lambda r: self.failed.append(r.url) if local(r.url) else None)
        page.on("requestfinished", self._loaded)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def _loaded(self, request):
        if request.url.startswith("file://"):
            self.files.add(Path(unquote(urlsplit(request.url).path)))

    @property
    def external(self):
        return self.context.blocked[self.start:]

    def weight(self):
        """Bytes of every file the page loaded (the page, scripts, styles, images, fonts; figures
        inlined as data: URLs are part of the page's own bytes)."""
        return sum(f.stat().st_size for f in self.files if f.is_file())


@pytest.fixture
def page(context):
    page = context.new_page()
    yield page
    page.close()


def open_page(context, page, edition, name, width=1366):
    """Load a page of an edition over file:// and wait until MathJax has typeset it."""
    page.set_viewport_size({"width": width, "height": 900})
    watch = Watch(context, page)
    path = EDITIONS[edition] / name
    page.goto(path.as_uri(), wait_until="load")
    redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', path.read_text())
    if redirect:  # index.html sends the reader to the first page
        page.wait_for_url((path.parent / redirect.group(1)).as_uri(), wait_until="load", timeout=10000)
    # (the book's maths is typeset when it is built; an older build typeset it here, with MathJax)
    page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)",
                           timeout=20000)
    page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    return watch


def worker(config):
    """Is this process a pytest-xdist worker (not the controller, not a run without xdist)?"""
    return hasattr(config, "workerinput")


def pytest_configure(config):
    if os.environ.get("BOOK_BROWSER_TESTS") and not worker(config):
        shutil.rmtree(WEIGHTS, ignore_errors=True)     # once per run: no weight left from an earlier run


def pytest_collection_modifyitems(session, config, items):
    """The two tests that start a Jupyter server first, the page-weight budget last."""
    here = Path(__file__).parent

    def rank(item):
        if here not in Path(item.path).parents:
            return 1
        name = getattr(item, "originalname", item.name)
        return 0 if name in FIRST else 2 if name in LAST else 1
    items.sort(key=rank)               # (a stable sort: the rest keep their order)


def merge(reports):
    """One report from the workers' reports: counts added, "smallest ..." the least, dicts merged
    key by key, anything else (set by one test, so by one worker) kept."""
    out = {}
    for rep in reports:
        for key, value in rep.items():
            if key not in out:
                out[key] = value
            elif isinstance(value, dict) and isinstance(out[key], dict):
                out[key] = merge([out[key], value])
            elif isinstance(value, (int, float)) and isinstance(out[key], (int, float)):
                out[key] = min(out[key], value) if key.startswith("smallest") else out[key] + value
            else:
                out[key] = value
    return out


def write_report(seen):
    REPORT.mkdir(parents=True, exist_ok=True)
    (REPORT / "report.json").write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
    print("\nbrowser suite saw:", json.dumps(seen, sort_keys=True))


WORKER_REPORTS = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(xdist controller) a worker is done: keep what its checks saw."""
    seen = getattr(node, "workeroutput", {}).get("browser_report")
    if seen:
        WORKER_REPORTS.append(json.loads(seen))


def pytest_sessionfinish(session):
    if not worker(session.config) and WORKER_REPORTS:
        write_report(merge(WORKER_REPORTS))


@pytest.fixture(scope="session")
def report(request):
    """Counts the checks saw, written to _build/browser/report.json at the end of the session (on
    xdist workers: handed to the controller, which merges them and writes the file)."""
    seen = {}
    yield seen
    if worker(request.config):
        request.config.workeroutput["browser_report"] = json.dumps(seen)
    else:
        write_report(seen)


def record_weight(edition, name, weight):
    """test_page's measure of a page's weight (None: the page was not opened), for test_page_weight
    on whichever worker it runs (written atomically: a file that exists is complete)."""
    path = WEIGHTS / f"{edition}--{name.replace('/', '--')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"page": f"{edition}/{name}", "bytes": weight}))
    tmp.replace(path)


def read_weights(expected, timeout_s):
    """{edition/page: bytes or None} of the ``expected`` pages test_page opened, waiting (at most
    ``timeout_s``) for those still being opened on another worker; None if some never came."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = {}
        for path in WEIGHTS.glob("*.json") if WEIGHTS.is_dir() else ():
            entry = json.loads(path.read_text())
            found[entry["page"]] = entry["bytes"]
        if len(found) >= expected or time.monotonic() > deadline:
            return found if len(found) >= expected else None
        time.sleep(0.2)


def free_port():
    """A free TCP port on 127.0.0.1 (for a server the suite starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(url, proc, timeout_s, name):
    """Wait until ``url`` answers (the process ``proc`` must stay alive), at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{name} exited"
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{name} did not answer on {url} within {timeout_s} s")


def stop_server(proc, log):
    """Stop a server the suite started (terminate, then kill after 20 s) and close its log."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
