"""The exercise index (book/exercises.md) lists every exercise of the notebooks and is up to date;
the parser behind it (scripts/exercises.py) reads a hand-made notebook correctly."""
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import exercise_index  # noqa: E402
import exercises  # noqa: E402


def test_index_lists_every_exercise_of_every_notebook():
    # independent of the parser: every :label: right after an {exercise} line in the raw sources
    labels = set()
    for path in ROOT.glob("notebooks/part*/*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            labels |= set(re.findall(r"\{exercise\}[^\n]*\n:label: (\S+)", "".join(cell["source"])))
    page = (ROOT / "book" / "exercises.md").read_text()
    listed = set(re.findall(r"\{ref\}`[^`]*<(\S+)>`", page))
    assert len(labels) > 40
    assert labels == listed, f"not listed: {sorted(labels - listed)}; stale: {sorted(listed - labels)}"


def test_index_is_up_to_date_and_in_the_toc():
    assert (ROOT / "book" / "exercises.md").read_text() == exercise_index.render(
        exercises.sections(ROOT / "notebooks")), "run python scripts/exercise_index.py"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    reference = next(p for p in toc["parts"] if p["caption"] == "Reference")
    assert {"file": "book/exercises"} in reference["chapters"]


def md(s):
    return {"cell_type": "markdown", "metadata": {}, "source": s}


def code(s, tags=()):
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": s, "outputs": []}


NB = {"cells": [
    md("# Title\n\nprose\n\n```{exercise} Why?\n:label: ex-a\n\nExplain it.\n```\n\n"
       "```{solution} ex-a\n:class: dropdown\n\nBecause.\n```\n\n"
       "```{exercise} Prove it\n:label: ex-b\n\nShow that $x = 1$.\n```"),     # three exercises, one cell
    md("```{solution} ex-b\n:class: dropdown\n\n$x = 1$.\n```\n\n"
       "````{exercise} Code it\n:label: ex-c\n\nWrite `f`:\n```python\nf(1)\n```\n````"),
    code("def f(x):\n    return None"),
    md("```{solution-start} ex-c\n:class: dropdown\n```"),
    code("def f(x):\n    return x", tags=["solution"]),
    md("It is the identity.\n\n```{solution-end}\n```"),
    code("check_ns.f_checker(f)"),
    md("```{exercise} Explore\n:label: ex-d\n\nRun it.\n```"),
    md("```{solution-start} ex-d\n:class: dropdown\n```"),
    code("run()", tags=["solution"]),
    md("```{solution-end}\n```"),
]}


def test_parser_reads_kinds_stubs_solutions_and_checkers():
    units = exercises.units_of(NB)
    exs = exercises.exercises_of(units)
    assert [(e.label, e.title, e.kind, e.checker, e.minutes) for e in exs] == [
        ("ex-a", "Why?", "short answer", None, 5), ("ex-b", "Prove it", "derivation", None, 15),
        ("ex-c", "Code it", "code", "f_checker", 15), ("ex-d", "Explore", "code", None, 20)]
    a, b, c, d = exs
    assert units[a.written].text == "Because." and units[b.written].text == "$x = 1$."
    assert "```python\nf(1)\n```" in c.prompt                      # an inner fence stays inside
    assert units[c.stub].text.endswith("return None")
    assert [units[k].text for k in c.solution_code] == ["def f(x):\n    return x"]
    assert [units[k].text for k in c.solution_prose] == ["It is the identity."]
    assert units[c.checker_unit].cell == 6
    assert d.stub is None and d.written is None and [units[k].text for k in d.solution_code] == ["run()"]


@pytest.mark.parametrize("cells, message", [
    ([md("```{exercise} Q\n\nno label\n```")], "no :label:"),
    ([md("```{exercise} Q\n:label: e\n")], "unclosed"),
    ([md("```{solution-start} e\n```")], "unknown exercise"),
    ([md("```{exercise} Q\n:label: e\n```"), md("```{solution-start} e\n```")], "without solution-end"),
    ([code("check.f(f)")], "does not follow a gated solution"),
])
def test_parser_rejects_broken_structure(cells, message):
    with pytest.raises(ValueError, match=message):
        exercises.exercises_of(exercises.units_of({"cells": cells}))
