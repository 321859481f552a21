"""`make lab`: the book's notebooks, live, in JupyterLab with MyST rendered (jupyterlab-myst).

    python scripts/lab.py [--student] [--port 8888] [--no-browser] [--prepare-only]

1. **Your copies.** The notebooks (or, with ``--student``, the student edition: solutions
   removed, ``scripts/student_edition.py``) are copied into ``lab/book/`` (``lab/student/``), one
   file per section, in the book's layout (so links between sections work). A copy that exists is
   never overwritten: it is your work. Delete it to get the book's version back.
2. **Made for JupyterLab.** jupyterlab-myst renders MyST (exercises, admonitions, math,
   ``{solution}`` as a closed dropdown) but not everything the HTML book uses, so each copy is
   adapted once, when it is made:

   - ``{glue:text}`name:fmt``` (a number computed by a cell) becomes the number itself, formatted
     as the book formats it (``myst_nb``'s own function), from the notebook's committed outputs;
   - a "gated" solution (``solution-start`` ... ``solution-end`` around code cells) becomes a
     closed ``{solution}`` dropdown, and its code cells are folded (input and output collapsed:
     a click on the "…" unfolds them; they still run with Run All);
   - the HTML book's kernel-free scrubber (a script JupyterLab does not run in a notebook it
     does not trust) becomes its static default figure with "run this cell for a live slider",
     and the widget placeholder (no kernel yet) is dropped. Running the cell shows one live
     ipywidgets slider (``TOY_LIVE=1``: toy.widgets then displays no scrubber).
   - every cell gets an id (nbformat 4.5), so that JupyterLab opens a copy unmodified (it adds
     ids to cells that lack them, and then the notebook counts as changed);
   - the copy's first cell starts with MyST front matter that numbers its exercises as the HTML
     book does ("Exercise II.4.1", not "Exercise 1": ``numbering: enumerator: II.4.%s``).
3. **JupyterLab on 127.0.0.1** with the .venv kernel, its settings and workspaces under
   ``_build/lab/`` (``--state``; your ~/.jupyter is not touched), no update or news checks.

``--lab DIR`` and ``--state DIR`` put the copies and JupyterLab's state elsewhere (the browser
suite runs ``make lab LAB_DIR=... LAB_STATE=...`` in a temporary folder).
"""
import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "lab"
STATE = ROOT / "_build" / "lab"
SRC = ROOT / "notebooks"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toc_sections  # noqa: E402  (the book's section numbers: notebooks/part2/s04_... -> II.4)

GLUE = re.compile(r"\{glue:text\}`([^`:]+)(?::([^`]*))?`")
START = re.compile(r"^(`{3,}|:{3,})\{solution-start\}\s*(\S+)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}[^\n]*\n(?:.*?\n)?^\1\s*$", re.S | re.M)
SCRUBBER_IMG = re.compile(r'<img id="[^"]*-img" src="(data:image/svg\+xml;base64,[^"]+)" alt="([^"]*)"')
WIDGET = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LIVE_NOTE = "run this cell for a live slider"


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def glued_values(nb):
    """{name: text/plain} of every value the notebook glues (myst_nb's glue outputs)."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook")
            if scrap:
                data = out.get("data", {})
                values[scrap["name"]] = data.get(scrap.get("mime_prefix", "") + "text/plain")
    return values


def fill_glue(text, values, where=""):
    """Each {glue:text}`name:fmt` replaced by the glued value, formatted as the book shows it."""
    from myst_nb.core.variables import format_plain_text

    def one(m):
        name, fmt = m.group(1), m.group(2) or ""
        if values.get(name) is None:
            raise ValueError(f"{where}: {{glue:text}}`{name}` has no glued value in the notebook's outputs")
        return format_plain_text(values[name], fmt)

    return GLUE.sub(one, text)


def static_scrubber(html):
    """The scrubber's HTML reduced to its default frame and a note (no input, no script)."""
    m = SCRUBBER_IMG.search(html)
    if not m:
        return None
    return (f'<div class="toy-scrubber-static"><img src="{m.group(1)}" alt="{m.group(2)}" style="max-width:100%;">'
            f'<div style="color:#777;font-size:0.9em;">({m.group(2).removeprefix("figure at ")}: {LIVE_NOTE})</div></div>')


def _markdown(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _solution(label, body):
    return f"````{{solution}} {label}\n:class: dropdown\n\n{body.strip()}\n````"


def front_matter(label):
    """MyST front matter that numbers the notebook's exercises (and other numbered things) as
    "II.4.1", "II.4.2", ... like the HTML book."""
    return f"---\nnumbering:\n  enumerator: {label}.%s\n---\n"


def with_ids(cells, where=""):
    """Every cell with a unique id (nbformat 4.5): its own if it has one, else one made from the
    notebook's name and the cell's position (the same on every run)."""
    seen = set()
    for i, cell in enumerate(cells):
        cid = cell.get("id")
        if not cid or cid in seen:
            cid = hashlib.sha1(f"{where}#{i}".encode()).hexdigest()[:12]
        seen.add(cid)
        cell["id"] = cid
    return cells


def lab_notebook(nb, where="", label=None):
    """The notebook adapted for JupyterLab + jupyterlab-myst (see the module's docstring); ``label``
    ("II.4") numbers its exercises as the HTML book does."""
    values = glued_values(nb)
    cells, gated = [], None      # gated: the label of the open gated solution
    for cell in nb["cells"]:
        cell = json.loads(json.dumps(cell))
        if cell["cell_type"] == "markdown":
            text = fill_glue(_source(cell), values, where)
            start = START.search(text)
            end = END.search(text)
            if start:
                gated = start.group(2)
                before, body = text[:start.start()].strip(), start.group(3)
                body = "\n".join(line for line in body.splitlines() if not line.startswith(":class:"))
                note = "Its code is in the folded cell below: click the “…” to unfold it."
                if before:
                    cells.append(_markdown(before))
                cells.append(_markdown(_solution(gated, (body.strip() + "\n\n" + note).strip())))
                continue
            if end and gated:
                before, after = text[:end.start()].strip(), text[end.end():].strip()
                if before:
                    cells.append(_markdown(_solution(gated, before)))
                if after:
                    cells.append(_markdown(after))
                gated = None
                continue
            cell["source"] = text
        elif cell["cell_type"] == "code":
            if gated:   # (JupyterLab mirrors outputs_hidden in "collapsed": set both, or it marks the copy changed)
                cell["metadata"].setdefault("jupyter", {}).update(source_hidden=True, outputs_hidden=True)
                cell["metadata"]["collapsed"] = True
            outputs = []
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if WIDGET in data:                       # the live widget: no kernel has it yet
                    continue
                html = data.get("text/html")
                html = "".join(html) if isinstance(html, list) else html
                if html and "toy-scrubber" in html:
                    static = static_scrubber(html)
                    if static:
                        out["data"] = {"text/html": static, "text/plain": f"<{LIVE_NOTE}>"}
                outputs.append(out)
            cell["outputs"] = outputs
        cells.append(cell)
    if gated:
        raise ValueError(f"{where}: solution-start {gated} has no solution-end")
    if label:
        first = next((c for c in cells if c["cell_type"] == "markdown"), None)
        if first is None:
            first = _markdown("")
            cells.insert(0, first)
        first["source"] = front_matter(label) + _source(first)
    meta = {**nb.get("metadata", {}), "rl_by_hand": {"lab_edition": True}}
    meta.setdefault("kernelspec", KERNELSPEC)     # else JupyterLab sets it on opening: a change
    meta.pop("widgets", None)
    return {**nb, "nbformat": 4, "nbformat_minor": max(5, nb.get("nbformat_minor", 0)),
            "metadata": meta, "cells": with_ids(cells, where=Path(where).name)}


def _atomic_write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def prepare(student=False, lab=LAB, quiet=False, state=STATE):
    """Make the missing copies; return the folder JupyterLab opens."""
    src = SRC
    labels = toc_sections.labels()
    if student:
        src = Path(state) / "student-src"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "student_edition.py"), str(SRC), str(src)],
                       check=True, stdout=subprocess.DEVNULL)
    dst = lab / ("student" if student else "book")
    made = kept = 0
    for path in sorted(src.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        out = dst / path.relative_to(src)
        if out.exists():
            kept += 1
            continue
        docname = "notebooks/" + path.relative_to(src).with_suffix("").as_posix()
        nb = lab_notebook(json.loads(path.read_text(encoding="utf-8")), where=str(path), label=labels.get(docname))
        _atomic_write(out, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        made += 1
    if not quiet:
        print(f"lab: {made} notebook(s) copied into {dst}, {kept} kept as they were (your copies; "
              f"delete one to get the book's version back)")
    return dst


# JupyterLab settings for the book (in _build/lab/settings: ~/.jupyter is left alone): render every
# cell (no windowing: a long section scrolls smoothly and Ctrl-F finds text in any cell), and no
# "official Jupyter news?" prompt (it would fetch from the internet)
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"}}


def command(root, port, open_browser=True, state=STATE):
    """The JupyterLab command line (settings and workspaces under ``state``, 127.0.0.1 only)."""
    state = Path(state)
    for name, value in SETTINGS.items():
        path = state / "settings" / name
        if not path.exists():
            _atomic_write(path, json.dumps(value, indent=1) + "\n")
    return [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--ServerApp.open_browser={open_browser}",
            f"--LabApp.user_settings_dir={state / 'settings'}", f"--LabApp.workspaces_dir={state / 'workspaces'}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
            "--ServerApp.terminals_enabled=False", "--LabApp.extension_manager=readonly"] + (
        ["--ServerApp.allow_root=True"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])


def environment(state=STATE):
    """The server's and kernels' environment: toy.widgets shows only the live slider (no
    scrubber); the server's runtime files stay under ``state``."""
    return {**os.environ, "TOY_LIVE": "1", "JUPYTER_RUNTIME_DIR": str(Path(state) / "runtime")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--student", action="store_true", help="the student edition (solutions removed)")
    ap.add_argument("--port", type=int, default=8888)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--prepare-only", action="store_true", help="make the copies, do not start JupyterLab")
    ap.add_argument("--lab", type=Path, default=LAB, help="the folder of the copies (default: lab/)")
    ap.add_argument("--state", type=Path, default=STATE, help="JupyterLab's settings, workspaces and runtime files")
    args = ap.parse_args(argv)
    lab, state = args.lab.resolve(), args.state.resolve()
    root = prepare(student=args.student, lab=lab, state=state)
    if args.prepare_only:
        return 0
    print(f"lab: starting JupyterLab on 127.0.0.1:{args.port}: it opens your browser, or open the "
          f"http://127.0.0.1:{args.port}/lab?token=... address it prints (Ctrl-C twice to stop)")
    print(f"lab: {'student' if args.student else 'book'} edition, from {root}", flush=True)
    return subprocess.call(command(root, args.port, open_browser=not args.no_browser, state=state), env=environment(state))


if __name__ == "__main__":
    sys.exit(main())
