"""instructor_kit/make_assignments.py writes nbgrader source notebooks with the metadata nbgrader needs.
(The real nbgrader round trip is `make grade-demo`; these tests need no nbgrader.)"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "instructor_kit"))
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
    assert g["ex-a"]["source"] == "### Exercise: Why? (1 point)\n\nExplain it." and meta["ex-a"]["locked"]
    assert g["ex-a-answer"]["source"] == "Because." and meta["ex-a-answer"]["points"] == 1
    assert meta["ex-b-answer"]["points"] == 2                                  # a derivation
    assert g["ex-c-code"]["source"] == ("def f(x):\n    return None\n### BEGIN SOLUTION\n"
                                        "def f(x):\n    return x\n### END SOLUTION")
    assert release(g["ex-c-code"]) == "def f(x):\n    return None\n"             # the book's stub
    assert not meta["ex-c-code"]["grade"] and meta["ex-c-code"]["solution"]
    assert g["ex-c-answer"]["source"] == "It is the identity."                  # gated prose
    assert g["ex-c-check"]["source"].endswith(
        "_grade = _grading.Grade('ex-c', 'f_checker', points=2, answer=lambda: (f,))\n_grade.score()")
    assert "HIDDEN" not in g["ex-c-check"]["source"]                            # no seed: no hidden tests
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
        tests = [c for c in nb["cells"] if "-check" in c["metadata"].get("nbgrader", {}).get("grade_id", "")]
        assert len(tests) == sum(len(e.checkers) for e in s.exercises)         # one checker per cell
        n_checks += len(tests)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(c["outputs"] == [] for c in code)
        stubs = [release(g[e.label + "-code"]) for e in s.exercises if e.stub is not None]
        assert stubs == [s.units[e.stub].text.rstrip("\n") + "\n" for e in s.exercises if e.stub is not None]
    n_calls = sum(len(re.findall(r'"check\w*\.\w+\(', p.read_text())) for p in ROOT.glob("notebooks/part*/*.ipynb"))
    assert n_checks == n_calls > 10


def test_grade_demo_compares_every_score():
    import grade_demo
    expected = {"full": {"q1": 2, "q2": 2}, "partial": {"q1": 1.33}}
    got = {("full", "q1"): (2.0, 2.0), ("full", "q2"): (2.0, 2.0), ("partial", "q1"): (1.33, 2.0)}
    rows, ok = grade_demo.compare(expected, got)
    assert ok and len(rows) == 3
    rows, ok = grade_demo.compare(expected, {**got, ("full", "q2"): (0.0, 2.0)})
    assert not ok and [r[:4] for r in rows if not r[4]] == [("full", "q2", 2, 0.0)]
    assert not grade_demo.compare(expected, {k: v for k, v in got.items() if k[0] == "full"})[1]   # missing


def test_grade_demo_cuts_only_the_plain_code_after_the_last_test_cell():
    import grade_demo

    def cell(i, kind="code", **nbgrader):
        return {"id": f"c{i}", "cell_type": kind, "metadata": {"nbgrader": nbgrader} if nbgrader else {}, "source": ""}
    test, answer = {"grade": True, "solution": False}, {"grade": False, "solution": True}
    nb = {"cells": [cell(0), cell(1, **answer), cell(2, **test), cell(3), cell(4, "markdown"), cell(5, **test),
                    cell(6), cell(7, "markdown", grade=True, solution=True), cell(8, **answer), cell(9)]}
    assert grade_demo.tail(nb) == {"c6", "c9"}      # not the code before the last test cell, nor an answer cell


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


def test_nothing_the_instructor_made_is_overwritten(tmp_path, capsys):
    """A second run keeps an edited source notebook and config (--force overwrites the notebook,
    never the config), rewrites an unedited one, and keeps the course's hidden-test seed."""
    course, only = tmp_path / "my course", ["part2-s04_ppo_grpo_temperature"]
    make_assignments.main(ROOT / "notebooks", course, only=only)
    nb = course / "source" / only[0] / "s04_ppo_grpo_temperature.ipynb"
    seed, first = (course / "hidden_seed").read_text(), nb.read_text()
    assert "### BEGIN HIDDEN TESTS" in first and "add_missing_cells = True" in (course / "nbgrader_config.py").read_text()
    make_assignments.main(ROOT / "notebooks", course, only=only)                 # unedited: rewritten, same
    assert nb.read_text() == first and (course / "hidden_seed").read_text() == seed
    nb.write_text(first.replace('"points": 2', '"points": 5'))                  # the instructor's edits
    (course / "nbgrader_config.py").write_text("c = get_config()  # mine\n")
    capsys.readouterr()
    make_assignments.main(ROOT / "notebooks", course, only=only)
    out = capsys.readouterr().out
    assert '"points": 5' in nb.read_text() and "kept 1 source notebook" in out and "--force" in out
    assert (course / "nbgrader_config.py").read_text() == "c = get_config()  # mine\n"
    make_assignments.main(ROOT / "notebooks", course, force=True, only=only)
    assert nb.read_text() == first and (course / "nbgrader_config.py").read_text() == "c = get_config()  # mine\n"
    assert not [p for p in course.rglob("*.tmp")]                                # atomic writes leave nothing


def test_release_hides_spoilers_and_links_work_in_an_assignment_folder():
    s = next(s for s in exercises.sections(ROOT / "notebooks") if s.path.name == "s04_ppo_grpo_temperature.ipynb")
    text = "\n".join(c["source"] for c in make_assignments.convert(s, 1, {"part2-s03_policy_gradient"})["cells"]
                     if c["cell_type"] == "markdown")
    assert "(0.024, 0.0256, 0.96)" not in text and "compare with your `clip_cap`" in text
    code = [c["source"] for c in make_assignments.convert(s, 1)["cells"] if c["cell_type"] == "code"]
    assert "rl = _without(rl, 'clipped_surrogate_grad')" in code[0]              # the answer is not imported
    assert not any("rl.clipped_surrogate_grad" in c for c in code)             # a later use: the student's own
    assert any("clipped_grad(ratio, 1.0, eps)" in c for c in code)
    assert "[§II.3](../part2-s03_policy_gradient/s03_policy_gradient.ipynb)" in text
    assert "(s05_dapo.ipynb)" not in text and "DAPO's clip-higher (§II.5)" in text   # not an assignment here
    book = "\n".join(c["source"] for c in make_assignments.convert(s, 1, (), "https://x.org/book/")["cells"])
    assert "[§II.5](https://x.org/book/notebooks/part2/s05_dapo.html)" in book


def test_points_in_the_index_are_the_assignments_points():
    for s in exercises.sections(ROOT / "notebooks"):
        nb = make_assignments.convert(s)
        for e in s.exercises:
            cells = [c["metadata"]["nbgrader"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
                     and c["metadata"]["nbgrader"]["grade_id"].startswith(e.label + "-")]
            assert sum(m["points"] for m in cells) == exercises.points_of(e), e.label


def test_course_paths_are_quoted_in_the_makefile(tmp_path):
    """A COURSE with shell characters is a folder name: `make assignments` runs nothing it holds."""
    import subprocess
    for i, name in enumerate(["x; touch pwned1; $(touch pwned2) `touch pwned3`", "it's; touch pwned4"]):
        course = tmp_path / name
        course.mkdir()
        for target in ("assignments", "grade"):
            subprocess.run(["make", target, f"COURSE={course}", "ASSIGNMENT=a; touch pwned5", "ISTAMP=Makefile",
                            "IPY=true", f"IVENV={tmp_path / 'none'}"], cwd=ROOT, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert not list(ROOT.glob("pwned*")) and not list(tmp_path.rglob("pwned*"))


def test_light_feedback_is_small_and_offline():
    """instructor_kit/grade.py's feedback page: the exercises, answers, checks and points; maths as MathML
    (latex2mathml is an instructor-only dependency: skipped in the book's venv)."""
    pytest = __import__("pytest")
    pytest.importorskip("latex2mathml")
    import grade
    meta = lambda gid, **k: {"nbgrader": {"grade_id": gid, "grade": False, "solution": False, **k}}   # noqa: E731
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": meta("ex"), "source": "### Exercise: E\n\nShow $\\frac{a}{b}$."},
        {"cell_type": "code", "metadata": meta("ex-code", solution=True), "source": "def f(x):\n    return x < 1\n"},
        {"cell_type": "code", "metadata": meta("ex-check", grade=True), "source": "...",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "hidden cases: 3 of 6 pass\n"}]},
        {"cell_type": "code", "metadata": {}, "source": "plot()", "outputs": [
            {"output_type": "display_data", "data": {"image/png": "A" * 100_000}}]}]}
    page = grade.light_feedback(nb, {"ex-check": (1.0, 2.0, "see the hint")}, "a1: alice")
    assert "<mfrac>" in page and "return x &lt; 1" in page and "hidden cases: 3 of 6 pass" in page
    assert "1 / 2 points" in page and "see the hint" in page and "1 of 2 points" in page
    assert len(page) < 5000 and "http" not in page.replace("http://www.w3.org/1998/Math/MathML", "")
