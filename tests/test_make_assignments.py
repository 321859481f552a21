"""scripts/make_assignments.py writes nbgrader source notebooks with the metadata nbgrader needs.
(The real nbgrader round trip is `make grade-demo`; these tests need no nbgrader.)"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import exercises  # noqa: E402
import make_assignments  # noqa: E402
from test_exercise_index import NB  # noqa: E402

KEYS = {"grade", "grade_id", "locked", "schema_version", "solution", "task"}


def section(nb, name="s01_x.ipynb"):
    units = exercises.units_of(nb)
    return exercises.Section(ROOT / "notebooks" / "part1" / name, 1, 1, "X", {**nb, "metadata": {}},
                             units, exercises.exercises_of(units))


def release(cell):
    """What nbgrader's ClearSolutions leaves (code_stub "", text_stub "YOUR ANSWER HERE")."""
    if cell["cell_type"] == "markdown":
        return "YOUR ANSWER HERE"
    return re.sub(r"### BEGIN SOLUTION\n.*### END SOLUTION", "", cell["source"], flags=re.S)


def graded(nb):
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c["metadata"]}


def check_metadata(nb):
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids)
    cells = [c["metadata"]["nbgrader"] for c in nb["cells"] if "nbgrader" in c["metadata"]]
    assert len({m["grade_id"] for m in cells}) == len(cells)
    for m in cells:
        assert KEYS <= set(m) and m["schema_version"] == 3
        assert ("points" in m) == m["grade"] and (not m["grade"] or m["points"] > 0)
        assert not (m["solution"] and m["locked"])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for c in nb["cells"]:
        assert not re.search(r"\{(exercise|solution|solution-start|solution-end)\}", c["source"])


def test_cells_of_each_kind():
    nb = make_assignments.convert(section(NB))
    check_metadata(nb)
    g = graded(nb)
    assert set(g) == {"ex-a", "ex-a-answer", "ex-b", "ex-b-answer", "ex-c", "ex-c-code", "ex-c-answer",
                      "ex-c-check", "ex-d", "ex-d-code"}
    meta = {k: c["metadata"]["nbgrader"] for k, c in g.items()}
    assert g["ex-a"]["source"] == "### Exercise: Why?\n\nExplain it." and meta["ex-a"]["locked"]
    assert g["ex-a-answer"]["source"] == "Because." and meta["ex-a-answer"]["points"] == 1
    assert meta["ex-b-answer"]["points"] == 2                                  # a derivation
    assert g["ex-c-code"]["source"] == ("def f(x):\n    return None\n### BEGIN SOLUTION\n"
                                        "def f(x):\n    return x\n### END SOLUTION")
    assert release(g["ex-c-code"]) == "def f(x):\n    return None\n"             # the book's stub
    assert not meta["ex-c-code"]["grade"] and meta["ex-c-code"]["solution"]
    assert g["ex-c-answer"]["source"] == "It is the identity."                  # gated prose
    assert g["ex-c-check"]["source"] == "result = check_ns.f_checker(f)\nassert result, result.message"
    assert meta["ex-c-check"] == {"grade": True, "grade_id": "ex-c-check", "locked": True, "points": 2,
                                  "schema_version": 3, "solution": False, "task": False}
    assert meta["ex-d-code"]["grade"] and meta["ex-d-code"]["points"] == 2     # no checker: by hand
    assert g["ex-d-code"]["source"] == "# your code here\n### BEGIN SOLUTION\nrun()\n### END SOLUTION"
    assert [c["source"] for c in nb["cells"][:1]] == ["# Title\n\nprose"]


def test_every_section_converts_and_every_exercise_is_graded():
    n_checks = 0
    for s in exercises.sections(ROOT / "notebooks"):
        nb = make_assignments.convert(s)
        check_metadata(nb)
        g = graded(nb)
        for e in s.exercises:
            assert any(k.startswith(e.label + "-") and c["metadata"]["nbgrader"]["grade"] for k, c in g.items()), e.label
        tests = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id", "").endswith("-check")]
        assert len(tests) == sum(e.checker is not None for e in s.exercises)
        n_checks += sum(len(re.findall(r"check\w*\.\w+\(", "".join(c["source"]))) for c in tests)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(c["outputs"] == [] for c in code)
        stubs = [release(g[e.label + "-code"]) for e in s.exercises if e.stub is not None]
        assert stubs == [s.units[e.stub].text.rstrip("\n") + "\n" for e in s.exercises if e.stub is not None]
    n_calls = sum(len(re.findall(r'"check\w*\.\w+\(', p.read_text())) for p in ROOT.glob("notebooks/part*/*.ipynb"))
    assert n_checks == n_calls > 10


def test_grade_demo_accepts_only_full_marks_and_zeros():
    import grade_demo
    ok = [("solution", "nb", "ex-check", "autograded", 2.0, 2.0, False),
          ("solution", "nb", "ex-answer", "manual", 0.0, 1.0, True),
          ("untouched", "nb", "ex-check", "autograded", 0.0, 2.0, False),
          ("untouched", "nb", "ex-answer", "manual", 0.0, 1.0, False)]
    assert grade_demo.problems(ok) == []
    half = [ok[0][:4] + (1.0, 2.0, False)] + ok[1:]
    assert grade_demo.problems(half) == ["solution nb ex-check: 1.0 of 2.0, expected full marks"]
    stub_passes = ok[:2] + [ok[2][:4] + (2.0, 2.0, False), ok[3][:6] + (True,)]
    assert len(grade_demo.problems(stub_passes)) == 2
    assert grade_demo.problems([r for r in ok if r[3] == "manual"]) == ["no autograded cell at all"]


def test_the_grader_is_an_instructor_only_dependency():
    book = (ROOT / "requirements.txt").read_text().lower()
    instructor = (ROOT / "requirements-instructor.txt").read_text().lower().splitlines()
    assert "nbgrader" not in book
    assert "-r requirements.txt" in instructor and any(l.startswith("nbgrader==") for l in instructor)


def code(s):
    return {"cell_type": "code", "metadata": {}, "source": s, "outputs": []}


def test_markdown_shows_the_glued_numbers_and_citations():
    out = lambda name, text: {"output_type": "display_data", "data": {make_assignments.RECORD: text},
                              "metadata": {"scrapbook": {"name": name}}}
    nb = {"cells": [code("glue(...)") | {"outputs": [out("acc", "0.4567"), out("n", "12"), out("w", "'ok'"),
                                                     out("bad", "np.float64(0.5)")]}]}
    values = make_assignments.glued_values(nb)
    assert values == {"acc": 0.4567, "n": 12, "w": "ok"}
    text = ("{glue:text}`acc:.0%` of {glue:text}`n` ({glue:text}`acc:.2f`), {glue:text}`w`, "
            "{glue:text}`bad:.1f`, as in {cite}`shao2024`.")
    assert make_assignments.plain_markdown(text, values) == (
        "46% of 12 (0.46), ok, {glue:text}`bad:.1f`, as in [shao2024].")
