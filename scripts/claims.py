"""Claims mode: what ``make test`` checks where the reference arithmetic cannot run.

On the reference arithmetic (``toy.numerics()["reference"]``) nbval compares every output of
every notebook digit for digit. Elsewhere (ARM, macOS, Windows, x86 without AVX2, or a user who
chose other kernels) the numbers that come from *sampled training* cannot match to the last
digit: one flipped bit changes a sampled token and the run goes elsewhere. What must still hold
is what the book **claims**. For each notebook this script executes a fresh copy and compares
it with the committed one, cell by cell:

- a cell without the tag ``arithmetic-sensitive`` must give exactly the committed outputs (the
  same comparison as nbval: ``text/plain``, ``text/html`` and streams, with
  ``tests/nbval_sanitize.cfg``);
- a cell tagged ``arithmetic-sensitive`` (its digits come from sampled training) may print other
  digits, but
  - every number it glues for the prose must lie within a tolerance derived from its spread:
    4 standard errors of the difference, √(se_book² + se_fresh²), when the notebook also glues
    ``<name>_se``, else 25 % of its value (no spread is known: a loose check, listed by
    ``--report``), plus one unit of the digits shown (both values are rounded); a glued standard
    error ``*_se`` itself within a factor of 10 (from few seeds it is noisy);
  - every glued string and every integer count of a ledger (``*_n_*``) must be equal;
  - every ledger verdict (the "verdict" column of each ledger table) must be equal.

The tags are found by ``--calibrate``: it executes the notebook under a deliberately different
arithmetic (OpenBLAS's Prescott kernels with numpy's baseline dispatch, which any x86-64 can run
and which differs from the reference in both the BLAS kernels and numpy's loops), tags exactly
the cells whose outputs differ, and checks the claims of that same execution. A verdict that flips under another arithmetic is not
a robust claim: fix the claim or the experiment, not the tolerance.

    python scripts/claims.py NB.ipynb ...            # check (exit 1 on a broken claim)
    python scripts/claims.py --calibrate NB.ipynb ... # (re)tag the arithmetic-sensitive cells
    python scripts/claims.py --report NB.ipynb ...    # list the glued numbers and their tolerances
    python scripts/claims.py --recheck NB.ipynb ...   # compare again with the run --calibrate kept

``make test`` runs the check (through ``tests/claims/``) when ``scripts/arith_mode.py`` says
"claims"; CI runs it once on purpose under the Prescott arithmetic.
"""
import configparser
import copy
import hashlib
import json
import math
import os
import pathlib
import re
import sys

import nbformat

import safe_io

ROOT = pathlib.Path(__file__).resolve().parent.parent
TAG = "arithmetic-sensitive"
FRESH_DIR = ROOT / "_build" / "claims"          # --calibrate keeps its fresh executions here
OTHER_ARITHMETIC = {"OPENBLAS_CORETYPE": "Prescott",
                    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}
SE_FACTOR, REL_TOL, SE_RATIO = 4.0, 0.25, 10.0   # an s.e. from 3 seeds has 2 degrees of freedom
_OFF_REFERENCE = "not on the book's reference arithmetic"
_GLUE_MIME = "application/papermill.record/text/plain"
_NOT_COMPARED = ("image/png", "image/jpeg", "application/vnd.jupyter.widget-view+json")  # as nbval


# ------------------------------------------------------------------------------------ reading
def _sanitizers():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


_SAN = _sanitizers()


def _sanitize(text):
    for rx, rep in _SAN:
        text = rx.sub(rep, text)
    return text


def comparable(outputs):
    """What nbval compares of a cell's outputs: every data type but PNG/JPEG images and widget
    ids (text/plain, text/html, glued values, ...) and streams, sanitized, one stream's chunks
    joined as nbval joins them;
    the toy's own off-reference warning is dropped (it is the point of claims mode)."""
    out = []
    for o in outputs:
        if o.get("output_type") == "stream":
            text = "".join(o.get("text", ""))
            if _OFF_REFERENCE in text:
                continue
            if out and out[-1][:2] == ("stream", o.get("name")):   # the kernel's chunking is not output
                out[-1] = ("stream", o.get("name"), out[-1][2] + text)
            else:
                out.append(("stream", o.get("name"), text))
        elif o.get("output_type") in ("execute_result", "display_data"):
            data = o.get("data", {})
            for mime in sorted(data):
                if mime not in _NOT_COMPARED:
                    text = data[mime] if isinstance(data[mime], str) else "".join(data[mime]) \
                        if isinstance(data[mime], list) else json.dumps(data[mime], sort_keys=True)
                    out.append((mime, _sanitize(text)))
        elif o.get("output_type") == "error":
            out.append(("error", o.get("ename"), o.get("evalue")))
    return [(o[0], o[1], _sanitize(o[2])) if o[0] == "stream" else o for o in out]


def glued(outputs):
    """{name: value} of the numbers and strings a cell glues for the prose."""
    found = {}
    for o in outputs:
        name = o.get("metadata", {}).get("scrapbook", {}).get("name")
        if name and _GLUE_MIME in o.get("data", {}):
            text = "".join(o["data"][_GLUE_MIME])
            try:
                found[name] = json.loads(text) if not text.startswith("'") else text.strip("'")
            except json.JSONDecodeError:
                found[name] = text
    return found


def verdicts(outputs):
    """The "verdict" column of every ledger table a cell shows (a list per table)."""
    tables = []
    for o in outputs:
        html = "".join(o.get("data", {}).get("text/html", ""))
        if "verdict" not in html:
            continue
        from bs4 import BeautifulSoup
        for table in BeautifulSoup(html, "html.parser").find_all("table"):
            head = [th.get_text(" ", strip=True) for th in table.find("thead").find_all("th")] \
                if table.find("thead") else []
            if "verdict" not in head:
                continue
            col = head.index("verdict")
            rows = []
            for tr in table.find("tbody").find_all("tr"):
                cells = tr.find_all(["th", "td"])
                offset = len(head) - len(cells)          # a missing index header shifts the cells
                if 0 <= col - offset < len(cells):
                    rows.append(cells[col - offset].get_text(" ", strip=True))
            tables.append(rows)
    return tables


def _unit(value):
    """One unit of the last digit a glued number shows (it was rounded to what the prose shows)."""
    text = repr(float(value))
    if "e" in text:
        mant, exp = text.split("e")
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        return 10.0 ** (int(exp) - decimals)
    decimals = len(text.split(".")[1].rstrip("0")) if "." in text else 0
    return 10.0 ** -decimals


def tolerance(name, committed, fresh):
    """(tolerance, how it was derived) for a glued number ``name`` of a sensitive cell, from the
    glue of the whole committed notebook (``committed``) and of the fresh run (``fresh``).

    With an s.e. glued beside it (``<name>_se``), the difference of the two estimates may be
    ``SE_FACTOR`` standard errors of a difference, √(se_book² + se_fresh²); without one,
    ``REL_TOL`` of the value. One unit of the digits shown is added (both values are rounded).
    A standard error itself (``*_se``) is a spread, not a claim: it may move by a factor of
    ``SE_RATIO``."""
    value = committed[name]
    if name.endswith("_se"):
        return SE_RATIO, f"an s.e.: within a factor of {SE_RATIO:g}"
    ses = [g.get(name + "_se") for g in (committed, fresh)]
    ses = [x for x in ses if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0]
    if ses:
        se = math.sqrt(sum(x * x for x in ses) * (2 / len(ses)))
        return SE_FACTOR * se + _unit(value), f"{SE_FACTOR:g} s.e. of the difference ({se:.2g}) + 1 unit"
    return REL_TOL * abs(value) + _unit(value), f"{REL_TOL:.0%} of the value + 1 unit (no s.e. glued)"


def _must_be_equal(name, value):
    return isinstance(value, str) or isinstance(value, bool) or "_n_" in name


def digest(path):
    """A hash of what the claims are checked against: the committed notebook's code cells and the
    outputs :func:`comparable` sees (not its timestamps, not its prose: the prose shows glued values,
    and every glued value is checked). ``claims.json`` keeps it per notebook, taken when the check
    starts, so a notebook re-executed or whose code changed after its check is seen."""
    nb = nbformat.read(path, as_version=4)
    cells = [(c.source, comparable(c.get("outputs", []))) for c in nb.cells if c.cell_type == "code"]
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------- executing
def _execute(path, env=None, timeout=None):
    """Execute a fresh copy of ``path``; no time limit by default (§III.8's race trains its 420 runs
    in two cells when nothing is read from the record: more than an hour under another arithmetic)."""
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    fresh = copy.deepcopy(nb)
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        NotebookClient(fresh, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(pathlib.Path(path).parent)}}).execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return nb, fresh


def _code_pairs(nb, fresh):
    return [(i, a, b) for i, (a, b) in enumerate(zip(nb.cells, fresh.cells)) if a.cell_type == "code"]


# ------------------------------------------------------------------------------------ checking
def check(path, env=None):
    """Execute ``path`` afresh and return the list of broken claims (empty: all hold)."""
    nb, fresh = _execute(path, env)
    return compare(path, nb, fresh)


def compare(path, nb, fresh):
    """The broken claims of a fresh execution ``fresh`` against the committed notebook ``nb``."""
    committed_glue, fresh_glue = {}, {}
    for c in nb.cells:
        if c.cell_type == "code":
            committed_glue.update(glued(c.get("outputs", [])))
    for c in fresh.cells:
        if c.cell_type == "code":
            fresh_glue.update(glued(c.get("outputs", [])))
    problems = []
    for i, old, new in _code_pairs(nb, fresh):
        where = f"{path} cell {i}"
        a, b = old.get("outputs", []), new.get("outputs", [])
        if comparable(a) == comparable(b):
            continue
        if any(o.get("output_type") == "error" for o in b):
            problems.append(f"{where}: raised {[o.get('ename') for o in b if o.get('output_type') == 'error']}")
            continue
        if TAG not in old.metadata.get("tags", []):
            problems.append(f"{where}: a cell not tagged {TAG!r} printed other outputs (a "
                            "deterministic output must not depend on the arithmetic)")
            continue
        ga, gb = glued(a), glued(b)
        if set(ga) != set(gb):
            problems.append(f"{where}: glues {sorted(set(ga) ^ set(gb))} in one run only")
        for name in sorted(set(ga) & set(gb)):
            va, vb = ga[name], gb[name]
            if _must_be_equal(name, va) or not isinstance(va, (int, float)) or not isinstance(vb, (int, float)):
                if va != vb:
                    problems.append(f"{where}: {name} = {vb!r}, the book says {va!r} (must be equal)")
                continue
            tol, how = tolerance(name, committed_glue, fresh_glue)
            if name.endswith("_se"):
                ok = abs(vb - va) <= _unit(va) + 1e-12 or (va > 0 and vb > 0 and 1 / tol <= vb / va <= tol)
                if not ok:
                    problems.append(f"{where}: {name} = {vb!r}, the book says {va!r} ({how})")
                continue
            if not (math.isfinite(vb) and abs(vb - va) <= tol + 1e-12):
                problems.append(f"{where}: {name} = {vb!r}, the book says {va!r}; tolerance {tol:g} ({how})")
        if verdicts(a) != verdicts(b):
            problems.append(f"{where}: ledger verdicts changed: {verdicts(a)} -> {verdicts(b)}")
    return problems


def calibrate(path):
    """Tag exactly the code cells whose outputs differ under ``OTHER_ARITHMETIC``, write the
    notebook atomically (only the tags change), and return ``(tagged cell indices, broken
    claims of that same execution)``: one run both tags the cells and checks the claims."""
    nb, fresh = _execute(path, OTHER_ARITHMETIC)
    differ = {i for i, old, new in _code_pairs(nb, fresh)
              if comparable(old.get("outputs", [])) != comparable(new.get("outputs", []))
              and not any(o.get("output_type") == "error" for o in new.get("outputs", []))}
    for i, old, _ in _code_pairs(nb, fresh):
        tags = [t for t in old.metadata.get("tags", []) if t != TAG] + ([TAG] if i in differ else [])
        if tags:
            old.metadata["tags"] = tags
        else:
            old.metadata.pop("tags", None)
    safe_io.write_text(path, nbformat.writes(nb) + "\n")
    saved = _saved(path)
    saved.parent.mkdir(parents=True, exist_ok=True)
    safe_io.write_text(saved, nbformat.writes(fresh) + "\n")
    return sorted(differ), compare(path, nb, fresh)


def recheck(path):
    """The broken claims of the execution ``--calibrate`` saved in ``FRESH_DIR`` (no new run)."""
    nb = nbformat.read(path, as_version=4)
    return compare(path, nb, nbformat.read(_saved(path), as_version=4))


def _saved(path):
    """Where ``--calibrate`` keeps a notebook's fresh execution (by part: two parts have an s07_ledger)."""
    path = pathlib.Path(path)
    return FRESH_DIR / path.parent.name / (path.stem + ".ipynb")


def report(path):
    nb = nbformat.read(path, as_version=4)
    allg = {}
    for c in nb.cells:
        if c.cell_type == "code":
            allg.update(glued(c.get("outputs", [])))
    for c in nb.cells:
        if c.cell_type == "code" and TAG in c.metadata.get("tags", []):
            for name, v in glued(c.get("outputs", [])).items():
                if _must_be_equal(name, v) or not isinstance(v, (int, float)):
                    print(f"{path.name}  {name} = {v!r}: must be equal")
                else:
                    tol, how = tolerance(name, allg, {})
                    print(f"{path.name}  {name} = {v!r} ± {tol:g} ({how})")


def main(argv):
    mode = "check"
    if argv and argv[0] in ("--calibrate", "--report", "--recheck"):
        mode, argv = argv[0][2:], argv[1:]
    paths = [pathlib.Path(p) for p in argv] or sorted(ROOT.glob("notebooks/part*/*.ipynb"))
    bad = 0
    for p in paths:
        if mode == "calibrate":
            tagged, problems = calibrate(p)
            bad += bool(problems)
            print(f"{p}: tagged cells {tagged}; " + ("claims hold" if not problems else
                  "\n  " + "\n  ".join(problems)), flush=True)
        elif mode == "report":
            report(p)
        elif mode == "recheck":
            problems = recheck(p)
            bad += bool(problems)
            print(f"{p}: " + ("claims hold" if not problems else "\n  " + "\n  ".join(problems)), flush=True)
        else:
            problems = check(p)
            bad += bool(problems)
            print(f"{p}: " + ("claims hold" if not problems else "\n  " + "\n  ".join(problems)), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
