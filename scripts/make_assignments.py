"""Turn the book's notebooks into an nbgrader course source: one assignment per section that has
exercises (``part1-s09_grpo`` holds ``s09_grpo.ipynb``).

    python scripts/make_assignments.py notebooks _build/nbgrader

writes ``COURSE/source/<assignment>/<section>.ipynb`` and ``COURSE/nbgrader_config.py``;
``nbgrader generate_assignment`` (``make assignments``) then makes the student versions.
Each exercise becomes (exercises.py reads them):

- its prompt: a read-only markdown cell (``locked``);
- a code exercise: ONE answer cell holding the book's stub, then the book's solution between
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` (nbgrader removes the solution, so students see
  the stub; ``code_stub`` is empty; where the book has no stub, a "# your code here" line);
- its checker call: an autograded test cell, ``assert``-ing on the checker's result, with points;
  a code exercise without a checker is graded by hand (its answer cell gets the points);
- a written answer (the prose ``{solution}``, or prose inside a gated code solution): a manually
  graded markdown answer cell holding the book's solution (nbgrader replaces it by "YOUR ANSWER
  HERE").

Points per cell: ``exercises.POINTS``. All other cells are copied without their outputs. Markdown
is made readable in plain Jupyter: each ``{glue:text}`name:fmt``` becomes the number the book
shows (from the notebook's committed glue outputs), each ``{cite}`key``` becomes ``[key]``.
"""
import ast
import json
import re
import shutil
import sys
from pathlib import Path

import exercises as ex

NO_STUB = "# your code here\n"      # what students see where the book gives no stub
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CONFIG = '''# nbgrader configuration of the course made by scripts/make_assignments.py
c = get_config()
c.CourseDirectory.course_id = "rl-by-hand"
# a code answer cell holds the book's stub above the solution: removing the solution leaves the stub
c.ClearSolutions.code_stub = {"python": ""}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Execute.timeout = 300
'''


GLUE = re.compile(r"\{glue:text\}`([^`:]+)(?::([^`]*))?`")
CITE = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")
RECORD = "application/papermill.record/text/plain"


def glued_values(nb):
    """{name: value} of every glue output of the (executed) notebook."""
    values = {}
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if RECORD in o.get("data", {}):
                try:
                    values[o["metadata"]["scrapbook"]["name"]] = ast.literal_eval(o["data"][RECORD])
                except (ValueError, SyntaxError):     # not a plain literal: the role stays
                    pass
    return values


def plain_markdown(text, values):
    """MyST roles that plain Jupyter cannot render → text: glued numbers, citations."""
    def number(m):
        name, fmt = m.group(1), m.group(2) or ""
        return format(values[name], fmt) if name in values else m.group(0)
    return CITE.sub(lambda m: "[" + m.group(1) + "]", GLUE.sub(number, text))


def nbgrader_meta(grade_id, *, solution=False, grade=False, locked=False, points=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def markdown(source, meta=None):
    return {"cell_type": "markdown", "metadata": meta or {}, "source": source}


def code(source, meta=None):
    return {"cell_type": "code", "execution_count": None, "metadata": meta or {}, "outputs": [],
            "source": source}


def test_source(call, label):
    """``check.x(f)`` → ``result = check.x(f)`` + an assert on it; a cell of several checker calls
    (one exercise checked by two checkers) asserts on each. The cell must hold only such calls."""
    tree = ast.parse(call)
    if not tree.body or not all(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) for st in tree.body):
        raise ValueError(f"{label}: the checker cell must hold only checker calls, got {call!r}")
    lines = [ast.get_source_segment(call, st) for st in tree.body]
    if len(lines) == 1:
        return f"result = {lines[0]}\nassert result, result.message"
    return "\n".join(f"result_{i} = {line}\nassert result_{i}, result_{i}.message" for i, line in enumerate(lines, 1))


def convert(section):
    """The nbgrader source notebook (a dict) of one section."""
    units, role = section.units, {}
    for e in section.exercises:
        role[e.unit] = ("prompt", e)
        for k in e.solution_code + list(e.gate or ()):
            role[k] = ("drop", e)
        if e.gate:
            role[e.stub if e.stub is not None else e.gate[0]] = ("answer-code", e)
        for k in e.solution_prose:
            role[k] = ("answer-written", e)
        if e.written is not None:
            role[e.written] = ("answer-written", e)
        if e.checker_unit is not None:
            role[e.checker_unit] = ("test", e)

    cells, prose = [], None                    # prose: the markdown cell being filled, by source cell
    for k, u in enumerate(units):
        what, e = role.get(k, (None, None))
        if what is None and u.kind == "prose":
            if prose is not None and prose[0] == u.cell:
                prose[1]["source"] += "\n\n" + u.text
            else:
                prose = (u.cell, markdown(u.text))
                cells.append(prose[1])
            continue
        prose = None
        if what is None:
            if u.kind != "code":
                raise ValueError(f"{section.path}: {u.kind} directive outside an exercise (cell {u.cell})")
            cells.append(code(u.text, section.nb["cells"][u.cell].get("metadata", {})))
        elif what == "prompt":
            cells.append(markdown(f"### Exercise: {e.title}\n\n{e.prompt}",
                                  nbgrader_meta(e.label, locked=True)))
        elif what == "answer-code":
            stub = units[e.stub].text.rstrip("\n") + "\n" if e.stub is not None else NO_STUB
            solution = "\n\n".join(units[j].text.strip("\n") for j in e.solution_code)
            by_hand = e.checker is None and e.written is None and not e.solution_prose
            cells.append(code(f"{stub}### BEGIN SOLUTION\n{solution}\n### END SOLUTION",
                              nbgrader_meta(f"{e.label}-code", solution=True, grade=by_hand,
                                            points=ex.POINTS["code (no checker)"])))
        elif what == "answer-written":
            n = sum(1 for j, r in role.items() if r == ("answer-written", e) and j < k)
            points = (ex.POINTS["written part of a code exercise"] if e.kind == "code" else ex.POINTS[e.kind])
            cells.append(markdown(u.text, nbgrader_meta(f"{e.label}-answer" + (f"-{n + 1}" if n else ""),
                                                        solution=True, grade=True, points=points)))
        elif what == "test":
            cells.append(code(test_source(u.text, e.label),
                              nbgrader_meta(f"{e.label}-check", grade=True, locked=True,
                                            points=ex.POINTS["code"])))
    values = glued_values(section.nb)
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i:03d}"
        if c["cell_type"] == "markdown":
            c["source"] = plain_markdown(c["source"], values)
    meta = {k: v for k, v in section.nb["metadata"].items() if k not in ("widgets", "jupytext")}
    return {"cells": cells, "metadata": {**meta, "kernelspec": KERNELSPEC},
            "nbformat": 4, "nbformat_minor": 5}


def assignment_name(section):
    return f"{section.path.parent.name}-{section.path.stem}"


def main(src, course):
    course = Path(course)
    if (course / "source").exists():
        shutil.rmtree(course / "source")
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(CONFIG)
    for section in ex.sections(src):
        if not section.exercises:
            continue
        nb = convert(section)
        out = course / "source" / assignment_name(section) / section.path.name
        out.parent.mkdir(parents=True)
        out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        graded = [c["metadata"]["nbgrader"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
        print(f"{out}: {len(section.exercises)} exercises, {len(graded)} graded cells, "
              f"{sum(g['points'] for g in graded)} points")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python scripts/make_assignments.py NOTEBOOKS_DIR COURSE_DIR")
    main(*sys.argv[1:])
