"""Notebooks show the lesson (CONTRIBUTING.md): no visible cell calls ``glue(``, and at least
``MIN_SHARE`` of each notebook's visible code lines are lesson lines, as
``scripts/lesson_lines.py`` classifies them (tested here on worked cells first)."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("lesson_lines", ROOT / "scripts" / "lesson_lines.py")
ll = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ll)
NOTEBOOKS = sorted(ROOT.glob("notebooks/part*/*.ipynb"))


def test_the_classifier_on_worked_cells():
    assert ll.classify("import numpy as np\nx = 1\n") == (1, 1)
    assert ll.classify("A = rl.grpo_advantages(R)   # (B, G)\n\n# a comment\nprint(A)\n") == (2, 0)
    assert ll.classify('glue(".2f", a=1,\n     b=2)\n') == (0, 2)                # a statement over 2 lines
    assert ll.classify("for s in seeds:\n    runs.append(train(s))\n    ax.plot(s)\n") == (2, 1)
    assert ll.classify("fig, ax = plots.figure()\nm, se = mean_se(x)\n") == (0, 2)
    assert ll.classify("def f(x):\n    return x\n") == (2, 0)


def test_hidden_cells_do_not_count():
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["remove-input"]}, "source": "glue('', a=1)"},
                    {"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "source": "ax.plot(x)"},
                    {"cell_type": "code", "metadata": {}, "source": "x = f(1)"}]}
    assert [c["source"] for c in ll.visible_cells(nb)] == ["x = f(1)"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebooks_visible_code_is_mostly_lesson(path):
    c = ll.count(path)
    assert c["glue_cells"] == 0, f"{path.name}: {c['glue_cells']} visible cells call glue(: tag them remove-input"
    assert c["share"] >= ll.MIN_SHARE, (f"{path.name}: {c['lesson']} lesson lines of {c['visible']} visible "
                                        f"({c['share']:.0%} < {ll.MIN_SHARE:.0%})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_solutions_code_is_not_behind_a_second_toggle(path):
    """A solution is already a dropdown: its code shows when the reader opens it (a `hide-input`
    inside it would nest a second toggle; the browser suite saw three titles in one dropdown)."""
    import json
    nested = [i for i, c in enumerate(json.loads(path.read_text())["cells"])
              if {"solution", "hide-input"} <= set(c.get("metadata", {}).get("tags", []))]
    assert not nested, f"{path.name}: solution cells {nested} are tagged hide-input"
