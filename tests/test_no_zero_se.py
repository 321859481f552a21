"""No "± 0.000" anywhere a reader looks: a standard error that rounds to zero at the shown
precision hides a nonzero error (show its first digit, ``toy.prose.pm``/``glue_pm``), and an exact
value is not a measurement (say it is exact). Checked in every committed notebook: the outputs
(text, HTML tables, streams, glued text), the markdown, and the prose's ``{glue:text}`a` ±
{glue:text}`b:fmt``` pairs, with each glued error formatted as the book will show it."""
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("part*/*.ipynb"))
ZERO_PM = re.compile(r"±\s*[+-]?0(?:\.0+)?(?![\d.])\s*%?(?!\s*\()")      # "± 0.000", "± 0.0%"; "± 0 (" is said
GLUED_PM = re.compile(r"\{glue:text\}`\w+(?::[^`]*)?`\s*(?:±|\\pm)\s*\{glue:text\}`(\w+)(?::([^`]*))?`")


def _texts(nb):
    """(where, text) of everything a notebook shows."""
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] == "markdown":
            yield f"cell {i} (markdown)", "".join(c["source"])
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream":
                yield f"cell {i} (stream)", "".join(o["text"])
            for mime, v in o.get("data", {}).items():
                if mime.endswith(("text/plain", "text/html", "text/markdown")):
                    yield f"cell {i} ({mime})", "".join(v) if isinstance(v, list) else str(v)


def _glued(nb):
    out = {}
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                v = next(iter(o["data"].values()))
                out[name] = "".join(v) if isinstance(v, list) else v
    return out


def zero_errors(nb):
    """Every place in ``nb`` that shows a standard error of zero."""
    found = []
    for where, text in _texts(nb):
        found += [f"{where}: ...{text[max(0, m.start() - 40):m.end() + 10]}..." for m in ZERO_PM.finditer(text)]
    glued = _glued(nb)
    for where, text in _texts(nb):
        if "markdown" not in where:
            continue
        for m in GLUED_PM.finditer(text):
            v, fmt = glued.get(m.group(1)), m.group(2) or ""
            try:
                shown = format(float(v), fmt) if fmt else str(v)
            except (TypeError, ValueError):
                continue                                       # a glued string: checked as text above
            if float(shown.rstrip("%")) == 0:
                found.append(f"{where}: {m.group(0)} shows {shown}")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[f"{p.parent.name}/{p.stem}" for p in NOTEBOOKS])
def test_no_standard_error_rounds_to_zero(path):
    assert not zero_errors(json.loads(path.read_text())), zero_errors(json.loads(path.read_text()))


def test_the_check_finds_what_it_guards_against():
    md = {"cell_type": "markdown", "source": "pass@1 {glue:text}`a:.3f` ± {glue:text}`a_se:.3f`"}
    glue = {"cell_type": "code", "source": "", "outputs": [
        {"data": {"application/papermill.record/text/plain": "0.0004"}, "metadata": {"scrapbook": {"name": "a_se"}}}]}
    assert zero_errors({"cells": [md, glue]})                                  # 0.0004 shown as 0.000
    table = {"cell_type": "code", "source": "", "outputs": [{"data": {"text/html": "<td>0.977 ± 0.000</td>"}}]}
    assert zero_errors({"cells": [table]})
    for fine in ("0.977 ± 0.0004", "0.5 ± 0.02", "+0.000 ± 0.010", "10.0 ± 0.5%", "0.994 (every seed the same)"):
        assert not zero_errors({"cells": [{"cell_type": "markdown", "source": fine}]}), fine
