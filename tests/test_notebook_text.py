"""The text of every markdown cell is printable: no control character (other than newline).

A markdown cell written from a Python string with an unescaped backslash sequence gets a control
character where LaTeX was meant: "\\theta" becomes a TAB and "heta", "\\beta" a backspace and
"eta", and the book shows "π_h eta" or MathJax's "Math input error". This test reads every
notebook of the book and names the cell and the character.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")          # every C0 control and DEL, except "\n"
# what an unescaped backslash in a Python string turns into (for the message)
ESCAPES = {"\t": "\\t (was \\theta, \\tau, \\text...?)", "\b": "\\b (was \\beta, \\bar...?)",
           "\f": "\\f (was \\frac?)", "\r": "\\r (was \\rho, \\right...?)", "\v": "\\v (was \\varepsilon?)",
           "\a": "\\a (was \\alpha?)", "\x00": "NUL"}


def control_characters(text):
    """[(offset, character, context)] of every control character in ``text`` except newline."""
    return [(m.start(), m.group(0), text[max(0, m.start() - 20):m.end() + 20]) for m in CONTROL.finditer(text)]


def test_the_scan_finds_the_two_characters_of_the_broken_cell():
    broken = "the $\\pi_\theta$ and the $\beta\\,k_3$ penalty"      # what the bad string produced
    found = [c for _, c, _ in control_characters(broken)]
    assert found == ["\t", "\b"]
    assert control_characters("the $\\pi_\\theta$ and $\\beta$\n\nnext paragraph") == []


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 20


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_markdown_cells_have_no_control_characters(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    bad = [f"cell {i}: {ESCAPES.get(ch, repr(ch))} in {ctx!r}"
           for i, cell in enumerate(cells) if cell["cell_type"] == "markdown"
           for _, ch, ctx in control_characters("".join(cell["source"]))]
    assert not bad, "control characters in markdown:\n" + "\n".join(bad)
