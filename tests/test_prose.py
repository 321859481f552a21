"""toy.prose: glued numbers are rounded to what the prose shows, in every committed notebook."""
import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

from toy.prose import glue, pm, rounded

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").rglob("*.ipynb"))
PROSE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")


@pytest.mark.parametrize("value, fmt, expected", [
    (0.12547888, ".3f", 0.125), (0.1254788861947029, ".4f", 0.1255), (0.4449, ".0%", 0.44),
    (0.4451, ".1%", 0.445), (0.994, ".1%", 0.994), (0.5765, ".2%", 0.5765), (3.04e-5, ".1e", 3.0e-5), (-2.94e-6, ".2e", -2.94e-6),
    (6400, ",", 6400), (7, "", 7), (7, "d", 7), (2.5, ".0f", 2.0), (0.0123, "+.3f", 0.012),
    (-0.0001, ".3f", 0.0),
])
def test_rounded_worked_cases(value, fmt, expected):
    out = rounded(value, fmt)
    assert out == expected and type(out) is type(expected)
    assert format(out, fmt) == _shown(value, fmt)          # the reader sees the same text


def _shown(value, fmt):
    """What ``format`` prints, except that a value that rounds to zero shows no minus sign."""
    text = format(value, fmt)
    return format(0.0, fmt) if float(text.rstrip("%").replace(",", "")) == 0 else text


def test_rounded_keeps_what_is_shown_and_nothing_more():
    import numpy as np
    rng = np.random.default_rng(0)
    for fmt in (".0%", ".1%", ".2f", ".3f", ".4f", ".1e", "+.3f"):
        for v in rng.normal(size=200) * 10.0 ** rng.integers(-6, 3, size=200):
            r = rounded(np.float64(v), fmt)
            assert type(r) is float and format(r, fmt) == _shown(v, fmt)
            assert rounded(r, fmt) == r                      # idempotent: no hidden digits


@pytest.mark.parametrize("value, fmt, arg", [
    (None, ".3f", "value"), ("0.5", ".3f", "value"), (float("nan"), ".3f", "value"),
    (float("inf"), ".0%", "value"), (True, ".3f", "value"), (0.5, 3, "fmt"), (0.5, ".3q", "fmt"),
])
def test_rounded_bad_input(value, fmt, arg):
    with pytest.raises(ValueError, match=arg):
        rounded(value, fmt)


@pytest.mark.parametrize("args, kw, expected", [
    ((0.1234, 0.0291), {}, "0.123 ± 0.029"),
    ((0.9994, 0.0003), {}, "0.9994 ± 0.0003"),            # would be "0.999 ± 0.000"
    ((0.99997, 0.00004), {}, "0.99997 ± 0.00004"),
    ((0.0812, 0.0286), {"signed": True}, "+0.081 ± 0.029"),
    ((-0.00001, 0.0002), {"signed": True}, "+0.0000 ± 0.0002"),   # no "-0.0000"
    ((0.5, 0.0), {}, "0.500 (every seed the same)"),
    ((1e-15, 3e-14), {"signed": True}, "+0.000 (every seed the same to 12 decimals)"),   # rounding noise
    ((0.32, 0.003), {"decimals": 0, "percent": True}, "32.0% ± 0.3%"),
    ((0.0123, 0.0004), {"decimals": 2}, "0.0123 ± 0.0004"),
    ((12.0, 2.6), {"decimals": 0}, "12 ± 3"),
])
def test_pm_worked_cases(args, kw, expected):
    assert pm(*args, **kw) == expected


def test_pm_never_shows_a_zero_error():
    for se in np.geomspace(1e-11, 1, 200):
        text = pm(0.5, float(se)).split(" ± ")[1]
        assert float(text) > 0, (se, text)


@pytest.mark.parametrize("args, kw, arg", [
    ((0.5, -0.1), {}, "se"), ((float("nan"), 0.1), {}, "mean"), (("0.5", 0.1), {}, "mean"),
    ((0.5, float("inf")), {}, "se"), ((0.5, 0.1), {"decimals": -1}, "decimals"),
    ((0.5, 0.1), {"decimals": 1.5}, "decimals"),
])
def test_pm_bad_input(args, kw, arg):
    with pytest.raises(ValueError, match=arg):
        pm(*args, **kw)


def test_glue_needs_a_value():
    with pytest.raises(ValueError, match="name=value"):
        glue(".3f")


def _glued_and_shown(path):
    nb = json.loads(path.read_text())
    glued, shown = {}, {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for ref in PROSE_REF.findall("".join(cell["source"])):
                name, _, spec = ref.partition(":")
                shown.setdefault(name, set()).add(spec)
        for out in cell.get("outputs", []):
            rec = out.get("metadata", {}).get("scrapbook")
            if rec:
                glued[rec["name"]] = out["data"][rec["mime_prefix"] + "text/plain"]
    return glued, shown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_glued_number_is_what_its_prose_shows(path):
    """No 16-digit tails: a glued number holds exactly the digits the prose prints, so the
    committed outputs cannot differ in a last place that no reader sees."""
    glued, shown = _glued_and_shown(path)
    for name, specs in shown.items():
        assert name in glued, f"{name} is shown in the prose but never glued"
        try:
            value = ast.literal_eval(glued[name])
        except (ValueError, SyntaxError):
            continue                                         # a string, a figure, a table
        if isinstance(value, str):
            continue
        for spec in specs:
            if spec == "":
                assert isinstance(value, int), f"{name} = {value!r} is shown without a format spec"
            else:
                assert rounded(value, spec) == value, (
                    f"{name} = {value!r} holds more digits than its prose shows ({{:{spec}}})")
    for name, text in glued.items():
        assert not re.search(r"\d\.\d{9,}", text), f"{name} = {text}: round it to what the prose shows"
