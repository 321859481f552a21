"""Turn the book's notebooks into an nbgrader course source: one assignment per section that has
exercises (``part1-s09_grpo`` holds ``s09_grpo.ipynb``).

    python instructor_kit/make_assignments.py [--force] notebooks COURSE

writes ``COURSE/source/<assignment>/<section>.ipynb``, and, only where they do not exist yet,
``COURSE/nbgrader_config.py``, ``COURSE/hidden_seed`` (the course's secret seed of the hidden
tests) and ``COURSE/students.csv`` (an example roster); ``nbgrader generate_assignment``
(``make assignments``) then makes the student versions.

Nothing an instructor made is lost: a source notebook is rewritten only if it is still exactly
what this script wrote last time (``COURSE/.make_assignments.json`` keeps a hash of each), or with
``--force``; an edited one is kept and named. Every write is atomic.

Each exercise becomes (exercises.py reads them):

- its prompt: a read-only markdown cell (``locked``);
- a code exercise: ONE answer cell holding the book's stub, then the book's solution between
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` (nbgrader removes the solution, so students see
  the stub; ``code_stub`` is empty; where the book has no stub, a "# your code here" line);
- each checker call: its own autograded test cell, with points. The cell loads
  ``instructor_kit/grading.py`` from the installed files (never through the notebook's ``toy``, which
  a submission can patch), runs a fresh copy of the checker on the answer, and — between
  ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``, which nbgrader strips from the release —
  hidden cases drawn with the course's seed (``hidden_cases.py``) with the expected values
  computed here; its last line is the score, ``passed / total × points`` over all cases, which
  nbgrader takes as partial credit. Tampering (a patched checker, numpy or kernel, the library's
  own answer called) scores 0 with a message;
  a code exercise without a checker is graded by hand (its answer cell gets the points);
- a written answer (the prose ``{solution}``, or prose inside a gated code solution): a manually
  graded markdown answer cell holding the book's solution (nbgrader replaces it by "YOUR ANSWER
  HERE").

Points per cell: ``exercises.POINTS``. All other cells are copied without their outputs. Markdown
is made readable in plain Jupyter: each ``{glue:text}`name:fmt``` becomes the number the book
shows (from the notebook's committed glue outputs), each ``{cite}`key``` becomes ``[key]``, and a
link to another section of the book (``s03_x.ipynb``, ``../part2/...``) becomes a link to the
book's web page of that section (``BOOK_URL``): an assignment folder holds one notebook.
The prose that gives an exercise's answer away (``SPOILERS``) is rewritten, and where the notebook
imports a toy module that holds an exercise's answer under another name (``hidden_cases``'
``forbidden``, e.g. ``rl.clipped_surrogate_grad``) without using it before the exercise, a line
after the imports replaces the module by a view without it (``hide_answers``).
"""
import argparse
import ast
import hashlib
import json
import os
import re
import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))   # the book's exercise parser
import exercises as ex  # noqa: E402
import hidden_cases  # noqa: E402

NO_STUB = "# your code here\n"      # what students see where the book gives no stub
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CONFIG = '''# nbgrader configuration of the course, written once by instructor_kit/make_assignments.py
# (never overwritten: edit it freely). Docs: https://nbgrader.readthedocs.io/en/stable/configuration/
import os
from pathlib import Path

COURSE = Path(__file__).resolve().parent
c = get_config()
c.CourseDirectory.course_id = "rl-by-hand"
c.CourseDirectory.root = str(COURSE)
# a code answer cell holds the book's stub above the solution: removing the solution leaves the stub
c.ClearSolutions.code_stub = {"python": ""}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Execute.timeout = 300
# a deleted or metadata-stripped test cell is put back and run (not scored 0 "needs manual grading")
c.OverwriteCells.add_missing_cells = True
# the exchange: where released assignments and submissions meet. On a shared JupyterHub, a folder
# every user can read and write (e.g. /srv/nbgrader/exchange, created with mode 777 and the sticky bit)
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", str(COURSE / "exchange"))
# Part III's trained models, shared by every autograded submission (pre-warmed by make assignments):
# without it each submission retrains (~30 s). Students' own runs use their own cache.
os.environ.setdefault("TOY_CACHE_DIR", str(COURSE / "toy-cache"))
'''
STUDENTS = '''id,first_name,last_name,email
alice,Alice,Example,alice@example.org
bob,Bob,Example,bob@example.org
'''
# prose that states an exercise's answer, rewritten in the assignment: {label: [(regex, replacement)]}
# applied to the markdown that follows the exercise
SPOILERS = {
    "ex-p2-s04-clip-cap": [(r"The unlikely token stops at .*?the caps of the exercise \([^)]*\)",
                            "Where each curve stops is the cap of the exercise: compare with your `clip_cap`")],
}
# a link to another section: [text](s03_x.ipynb), [text](../part2/s03_x.ipynb), with an optional #anchor
SECTION_LINK = re.compile(r"\[([^\]]*)\]\((?:\.\./(part\d)/)?(s\d\d_\w+)\.ipynb(#[^)]*)?\)")


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


BOOTSTRAP = """\
import importlib.util as _iu, sys as _sys                         # the grader, read from the installed
_kit = next(_s for _f in _sys.meta_path if hasattr(_f, "find_spec") # files: nothing the notebook patched
            for _s in [_f.find_spec("instructor_kit", None)] if _s)
_spec = _iu.spec_from_file_location("_toy_grading", _kit.submodule_search_locations[0] + "/grading.py")
_grading = _iu.module_from_spec(_spec)
_spec.loader.exec_module(_grading)
"""


def checker_calls(call, label):
    """[(checker name, argument source)] of a checker cell, which must hold only checker calls."""
    tree = ast.parse(call)
    ok = tree.body and all(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                           and isinstance(st.value.func, ast.Attribute) and not st.value.keywords
                           for st in tree.body)
    if not ok:
        raise ValueError(f"{label}: the checker cell must hold only checker calls check.x(...), got {call!r}")
    return [(st.value.func.attr, ", ".join(ast.get_source_segment(call, a) for a in st.value.args))
            for st in tree.body]


def test_source(label, checker, args, points, seed):
    """The test cell of one checker call: the visible grading (the book's cases), the hidden cases
    (``seed``: the course's; None: none), and the score as the last line."""
    head = (f"# Autograded, {points:g} points × the share of cases your answer passes: the book's cases"
            + ("" if seed is None else " and hidden ones") + ".\n"
            "# Re-run it after changing your answer. Changing this cell changes nothing: it is restored.\n")
    lines = [head + BOOTSTRAP.rstrip("\n"),
             f"_grade = _grading.Grade({label!r}, {checker!r}, points={points!r}, answer=lambda: ({args},))"]
    if seed is not None:
        cases, forbidden, adapt = hidden_cases.hidden(checker, seed)
        if cases or forbidden:
            shown = ",\n    ".join(
                "{" + f"'name': {c['name']!r}, 'setup': {c['setup']!r}, "
                f"'expected': {hidden_encode(c['expected'])}"
                + "".join(f", {k!r}: {c[k]!r}" for k in ("atol", "rtol") if k in c) + "}" for c in cases)
            lines += ["### BEGIN HIDDEN TESTS",
                      f"_grade.hidden([\n    {shown}],\n    forbidden={forbidden!r}, adapt={adapt!r})",
                      "### END HIDDEN TESTS"]
    lines.append("_grade.score()")
    return "\n".join(lines)


def hidden_encode(value):
    """Source text of an expected value, built in the cell with ``_grading.array``."""
    return _grading().encode(value).replace("array(", "_grading.array(")


def _grading():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "_toy_grading_writer", Path(__file__).resolve().with_name("grading.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def section_links(text, here, assignments, book_url):
    """Links to other sections, which an assignment folder does not hold: to the book's page
    (``book_url``), else to that section's assignment folder, else the link text alone."""
    def link(m):
        text, part, stem, anchor = m.group(1), m.group(2) or here.parent.name, m.group(3), m.group(4) or ""
        if book_url:
            return f"[{text}]({book_url.rstrip('/')}/notebooks/{part}/{stem}.html{anchor})"
        if f"{part}-{stem}" in assignments:
            return f"[{text}](../{part}-{stem}/{stem}.ipynb{anchor})"
        return text
    return SECTION_LINK.sub(link, text)


def toy_imports(src):
    """{toy module: the name a code cell binds it to} for ``import toy`` / ``from toy import x as y``."""
    names = {}
    for st in ast.walk(ast.parse(src)):
        if isinstance(st, ast.ImportFrom) and st.module == "toy" and st.level == 0:
            names.update({a.name: a.asname or a.name for a in st.names})
        elif isinstance(st, ast.Import):
            names.update({"toy": a.asname or a.name for a in st.names if a.name == "toy"})
    return names


def _calls(src, alias, f):
    """The calls ``alias.f(...)`` in ``src``."""
    return [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == f and isinstance(n.func.value, ast.Name) and n.func.value.id == alias]


def hide_answers(section, cells, code_of):
    """Where the notebook imports a toy module holding an exercise's answer under another name,
    and uses it nowhere before the exercise, the release hides it: a line after the imports
    replaces the module by a view without it (``toy.check._release.without``), and a later use
    calls the student's own function instead. ``code_of``: {unit index: cell} of the code copied."""
    first = next((k for k, u in enumerate(section.units) if u.kind == "code" and toy_imports(u.text)), None)
    if first is None or first not in code_of:
        return
    names = toy_imports(section.units[first].text)
    hide, rename = {}, {}
    for e in section.exercises:
        answer = None
        if e.solution_code:
            defs = [st for st in ast.parse(section.units[e.solution_code[0]].text).body
                    if isinstance(st, ast.FunctionDef)]
            answer = defs[0] if defs else None
        for checker in e.checkers:
            for module, f in hidden_cases.hidden(checker, 0)[1]:
                alias = names.get(module)
                used = re.compile(rf"\b{re.escape(alias)}\.{f}\b") if alias else None
                if alias is None or any(used.search(u.text) for k, u in enumerate(section.units)
                                        if u.kind == "code" and k < e.unit):
                    continue                              # the book shows or uses it first: it stays
                later = [c for k, u in enumerate(section.units) if u.kind == "code" and k > e.unit
                         and k not in e.solution_code and k != e.checker_unit and used.search(u.text)
                         for c in _calls(u.text, alias, f)]
                if later and (answer is None or any(len(c.args) != len(answer.args.args) or c.keywords
                                                    for c in later)):
                    continue                              # a later use the student's function cannot take
                hide.setdefault(module, set()).add(f)
                if later:
                    rename[used] = answer.name
    if not hide:
        return
    lines = ["", "# this assignment hides the library's own answers to its exercises (write your own)",
             "from toy.check._release import without as _without"]
    for module in sorted(hide):
        lines.append(f"{names[module]} = _without({names[module]}, {', '.join(map(repr, sorted(hide[module])))})")
    if "toy" in names:
        lines.append(f"{names['toy']} = _without({names['toy']}, "
                     + ", ".join(f"{m}={names[m]}" for m in sorted(hide)) + ")")
    cell = code_of[first]
    cell["source"] = cell["source"].rstrip("\n") + "\n" + "\n".join(lines)
    for k, c in code_of.items():
        if k != first:
            for used, answer in rename.items():
                c["source"] = used.sub(answer, c["source"])


def convert(section, seed=None, assignments=(), book_url=None):
    """The nbgrader source notebook (a dict) of one section; ``seed``: the course's hidden-test
    seed (None: no hidden tests); ``assignments``: the names of the course's assignments (links)."""
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

    cells, prose, spoiled, code_of = [], None, [], {}   # prose: the markdown cell being filled, by source cell
    for k, u in enumerate(units):
        what, e = role.get(k, (None, None))
        if what is None and u.kind == "prose":
            text = u.text
            for lab in spoiled:
                for pattern, repl in SPOILERS.get(lab, ()):
                    text = re.sub(pattern, repl, text, flags=re.S)
            if prose is not None and prose[0] == u.cell:
                prose[1]["source"] += "\n\n" + text
            else:
                prose = (u.cell, markdown(text))
                cells.append(prose[1])
            continue
        prose = None
        if what is None:
            if u.kind != "code":
                raise ValueError(f"{section.path}: {u.kind} directive outside an exercise (cell {u.cell})")
            cells.append(code(u.text, section.nb["cells"][u.cell].get("metadata", {})))
            code_of[k] = cells[-1]
        elif what == "prompt":
            spoiled.append(e.label)
            pts = ex.points_of(e)
            cells.append(markdown(f"### Exercise: {e.title} ({pts:g} point{'' if pts == 1 else 's'})\n\n{e.prompt}",
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
            calls = checker_calls(u.text, e.label)
            for checker, args in calls:                    # one checker per graded cell
                gid = f"{e.label}-check" + (f"-{checker}" if len(calls) > 1 else "")
                cells.append(code(test_source(e.label if len(calls) == 1 else f"{e.label} ({checker})",
                                              checker, args, ex.POINTS["code"], seed),
                                  nbgrader_meta(gid, grade=True, locked=True, points=ex.POINTS["code"])))
    hide_answers(section, cells, code_of)
    values = glued_values(section.nb)
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i:03d}"
        if c["cell_type"] == "markdown":
            c["source"] = section_links(plain_markdown(c["source"], values), section.path, assignments, book_url)
    meta = {k: v for k, v in section.nb["metadata"].items() if k not in ("widgets", "jupytext")}
    return {"cells": cells, "metadata": {**meta, "kernelspec": KERNELSPEC},
            "nbformat": 4, "nbformat_minor": 5}


def assignment_name(section):
    return f"{section.path.parent.name}-{section.path.stem}"


MANIFEST = ".make_assignments.json"      # {relative path: sha256 of what this script last wrote}


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``
    (the file keeps its mode; a new one gets 0644, readable by the students of a shared hub)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_once(path, text, what):
    """Create ``path`` if it does not exist; an existing file is the instructor's: kept."""
    if path.exists():
        if path.read_text() != text:
            print(f"{path}: kept (yours; the default {what} is not written over it)")
        return
    write_atomic(path, text)
    print(f"{path}: written ({what})")


def course_seed(course):
    """The course's secret seed of the hidden tests: drawn once, kept in COURSE/hidden_seed."""
    path = course / "hidden_seed"
    if not path.exists():
        write_atomic(path, f"{secrets.randbits(63)}\n")
    text = path.read_text().strip()
    if not text.isdigit():
        raise ValueError(f"{path} must hold one non-negative integer (the hidden tests' seed), got {text!r}")
    return int(text)


def main(src, course, force=False, book_url=None, only=None):
    course = Path(course)
    course.mkdir(parents=True, exist_ok=True)
    write_once(course / "nbgrader_config.py", CONFIG, "nbgrader configuration")
    write_once(course / "students.csv", STUDENTS, "example roster for nbgrader db student import")
    seed = course_seed(course)
    (course / "exchange").mkdir(exist_ok=True)      # the config's default exchange (nbgrader needs it to exist)
    manifest_path = course / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    sections = [s for s in ex.sections(src) if s.exercises]
    names = {assignment_name(s) for s in sections}
    if only is not None:
        unknown = set(only) - names
        if unknown:
            raise ValueError(f"only must name assignments among {sorted(names)}, got {sorted(unknown)}")
        sections = [s for s in sections if assignment_name(s) in only]
    kept = []
    for section in sections:
        nb = convert(section, seed, names, book_url)
        out = course / "source" / assignment_name(section) / section.path.name
        rel = out.relative_to(course).as_posix()
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        if out.exists() and not force and digest(out.read_text()) != manifest.get(rel):
            if out.read_text() != text:
                kept.append(rel)
                continue
        write_atomic(out, text)
        manifest[rel] = digest(text)
        graded = [c["metadata"]["nbgrader"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
        print(f"{out}: {len(section.exercises)} exercises, {len(graded)} graded cells, "
              f"{sum(g['points'] for g in graded)} points")
    write_atomic(manifest_path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if kept:
        print(f"kept {len(kept)} source notebook(s) you edited (rerun with --force to overwrite them):\n  "
              + "\n  ".join(kept))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks")
    ap.add_argument("course")
    ap.add_argument("--force", action="store_true", help="overwrite source notebooks you edited")
    ap.add_argument("--book-url", default=os.environ.get("BOOK_URL") or None,
                    help="the published book's URL: links to other sections point there")
    ap.add_argument("--only", nargs="+", help="write only these assignments")
    a = ap.parse_args()
    try:
        main(a.notebooks, a.course, a.force, a.book_url, a.only)
    except ValueError as e:
        sys.exit(f"make_assignments: {e}")
