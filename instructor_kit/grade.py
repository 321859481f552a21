"""Grade one assignment of the course, end to end, with the real nbgrader (instructor venv).

    python instructor_kit/grade.py all COURSE ASSIGNMENT     # make grade ASSIGNMENT=... [COURSE=...]
    python instructor_kit/grade.py export COURSE ASSIGNMENT  # only the two CSV files
    python instructor_kit/grade.py warm COURSE               # fill COURSE/toy-cache (make assignments does)
    python instructor_kit/grade.py feedback COURSE ASSIGNMENT  # light feedback, then nbgrader release_feedback

``all``: ``nbgrader db student import COURSE/students.csv`` (columns id, first_name, last_name,
email; students already known are updated), ``nbgrader collect`` (the submissions waiting in the
exchange, if any), ``nbgrader autograde`` (every submission of the assignment not graded yet;
Part III's trained models come from the course's cache, ``TOY_CACHE_DIR`` in
``nbgrader_config.py``), then ``export``:

- ``COURSE/grades/ASSIGNMENT.csv``: one row per student, one column per graded question (its
  grade id), then the total, the maximum and the number of answers still to grade by hand
  (nbgrader's own ``export`` writes one row per student *and assignment*, totals only);
- ``COURSE/grades/ASSIGNMENT-lms.csv``: ``student_id,email,points,max_points,percent``, for an
  LMS's grade import. A student who submitted nothing gets 0.

``feedback``: ``nbgrader generate_feedback`` (its folders, timestamps and secrets, which
``nbgrader release_feedback`` needs), then each feedback page is replaced by a light one (a few
tens of kB instead of ~1 MB): per exercise its prompt, the student's answer, what the test cell
printed, and the points and comments from the gradebook; no figures; maths as MathML (rendered by
the browser itself, offline: no MathJax, no CDN).

``warm`` runs each Part III source notebook once with ``TOY_CACHE_DIR=COURSE/toy-cache``. It is not
needed for the book's own runs (they are read from the evidence record, ``evidence/``, and ``make
assignments`` no longer calls it); it fills the course's cache only with runs an edited source
notebook asks for that the record does not hold. Files are written
atomically; nothing else in the course is changed.
"""
import csv
import html
import io
import re
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_assignments import write_atomic  # noqa: E402

BIN = Path(sys.executable).parent


def nbgrader(course, *args, check=True, quiet=False):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, check=check, env=env,
                          capture_output=quiet, text=True)


def rows(course, assignment):
    """(header, rows) of the per-question table from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(f"sqlite:///{Path(course).resolve() / 'gradebook.db'}") as gb:
        a = gb.find_assignment(assignment)
        questions = [(nb.name, g.name, g.max_score) for nb in a.notebooks for g in nb.grade_cells]
        header = ["student_id", "last_name", "first_name", "email"]
        header += [q if len(a.notebooks) == 1 else f"{nb}:{q}" for nb, q, _ in questions]
        header += ["total", "max_total", "to_grade_by_hand"]
        out = []
        for s in gb.students:
            row = [s.id, s.last_name or "", s.first_name or "", s.email or ""]
            total, manual = 0.0, 0
            for nb, q, _ in questions:
                try:
                    g = gb.find_grade(q, nb, assignment, s.id)
                except MissingEntry:
                    row.append("")
                    continue
                row.append("" if g.score is None or g.needs_manual_grade else f"{g.score:g}")
                total += g.score or 0.0
                manual += bool(g.needs_manual_grade)
            out.append(row + [f"{total:g}", f"{sum(m for _, _, m in questions):g}", str(manual)])
    return header, out


def export(course, assignment):
    course = Path(course)
    header, table = rows(course, assignment)

    def text(head, body):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(head)
        w.writerows(body)
        return buf.getvalue()
    i_total, i_max = header.index("total"), header.index("max_total")
    lms = [[r[0], r[3], r[i_total], r[i_max],
            f"{100 * float(r[i_total]) / float(r[i_max]):.1f}" if float(r[i_max]) else "0"] for r in table]
    out = course / "grades"
    write_atomic(out / f"{assignment}.csv", text(header, table))
    write_atomic(out / f"{assignment}-lms.csv", text(["student_id", "email", "points", "max_points", "percent"], lms))
    print(f"{out / (assignment + '.csv')}: {len(table)} students × {len(header) - 7} questions\n"
          f"{out / (assignment + '-lms.csv')}: for an LMS import")


def grade_all(course, assignment):
    course = Path(course).resolve()
    roster = course / "students.csv"
    if roster.exists():
        nbgrader(course, "db", "student", "import", "students.csv", "--log-level=WARN")
    run = nbgrader(course, "collect", assignment, "--log-level=WARN", check=False, quiet=True)
    if run.returncode:                     # e.g. not released through the exchange yet: nothing to collect
        print("collect: nothing collected from the exchange ("
              + ((run.stderr or run.stdout).strip().splitlines() or ["no message"])[0] + ")")
    t = time.time()
    nbgrader(course, "autograde", assignment, "--log-level=WARN")
    print(f"autograde: {time.time() - t:.0f} s")
    export(course, assignment)


MATH = re.compile(r"\$\$(.+?)\$\$|(?<![$\\])\$([^$]+?)\$", re.S)
STYLE = ("body{font:15px/1.5 system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;color:#222}"
         "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:13px}"
         ".score{font-weight:600}.ok{color:#176b2c}.part{color:#8a5a00}.zero{color:#a11}"
         "section{border-top:1px solid #ddd;margin-top:1.5em}")


def markdown_html(text):
    """Markdown → HTML with its maths as MathML (``$…$`` inline, ``$$…$$`` display)."""
    from latex2mathml.converter import convert
    from markdown_it import MarkdownIt
    maths = []

    def keep(m):
        tex, display = (m.group(1), True) if m.group(1) is not None else (m.group(2), False)
        try:
            maths.append(convert(tex.strip(), display="block" if display else "inline"))
        except Exception:  # noqa: BLE001 — TeX it cannot convert stays as TeX
            maths.append(html.escape(m.group(0)))
        return f"@@MATH{len(maths) - 1}@@"
    out = MarkdownIt("commonmark").enable("table").render(MATH.sub(keep, text))
    return re.sub(r"@@MATH(\d+)@@", lambda m: maths[int(m.group(1))], out)


def light_feedback(nb, grades, title):
    """A small, self-contained HTML page of one graded notebook: the exercises only."""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    total = sum(g[0] or 0 for g in grades.values())
    parts.append(f"<p class='score'>{total:g} of {sum(g[1] for g in grades.values()):g} points"
                 + (" (some answers are still to be graded by hand)" if any(g[0] is None for g in grades.values())
                    else "") + "</p>")
    for c in nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        gid, src = meta.get("grade_id"), "".join(c["source"])
        if gid is None:
            continue
        if c["cell_type"] == "markdown" and not meta.get("grade") and not meta.get("solution"):
            parts.append("<section>" + markdown_html(src) + "</section>")       # an exercise prompt
            continue
        if c["cell_type"] == "markdown":
            parts.append("<h4>Your answer</h4>" + markdown_html(src))
        elif meta.get("solution"):
            parts.append(f"<h4>Your code</h4><pre>{html.escape(src)}</pre>")
        else:
            shown = "".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o.get("output_type") == "stream")
            errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in c.get("outputs", []) if o.get("output_type") == "error"]
            parts.append(f"<h4>The checks</h4><pre>{html.escape(shown + chr(10).join(errors))}</pre>")
        if gid in grades:
            score, max_score, comment = grades[gid]
            kind = "" if score is None else "ok" if score == max_score else "zero" if score == 0 else "part"
            parts.append(f"<p class='score {kind}'>" + ("to be graded by hand" if score is None else f"{score:g}")
                         + f" / {max_score:g} points</p>" + (f"<p>{html.escape(comment)}</p>" if comment else ""))
    return "".join(parts) + "</body></html>\n"


def feedback(course, assignment):
    import json
    from nbgrader.api import Gradebook
    course = Path(course).resolve()
    nbgrader(course, "generate_feedback", assignment, "--force", "--log-level=WARN")
    n = 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for page in sorted((course / "feedback").glob(f"*/{assignment}/*.html")):
            student, nb_name = page.parent.parent.name, page.stem
            nb = json.loads((course / "autograded" / student / assignment / f"{nb_name}.ipynb").read_text())
            sub = gb.find_submission_notebook(nb_name, assignment, student)
            comments = {c.name: c.comment for c in sub.comments}
            grades = {g.name: (g.score, g.max_score, comments.get(g.name)) for g in sub.grades}
            write_atomic(page, light_feedback(nb, grades, f"{assignment}: {student}"))
            n += 1
    print(f"{n} light feedback page(s) in {course / 'feedback'}; release them with nbgrader release_feedback {assignment}")


def warm(course):
    course = Path(course).resolve()
    cache = course / "toy-cache"
    env = {**os.environ, "TOY_CACHE_DIR": str(cache),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    notebooks = sorted((course / "source").glob("part3-*/*.ipynb"))
    for nb in notebooks:
        t = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                                  "--allow-errors", "--output-dir", tmp, str(nb)], env=env,
                                 capture_output=True, text=True)
        print(f"warm {nb.name}: {time.time() - t:.0f} s" + ("" if run.returncode == 0 else " (failed)"))
    print(f"the trained models of Part III are in {cache}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["all"] and len(args) == 3:
        grade_all(*args[1:])
    elif args[:1] == ["export"] and len(args) == 3:
        export(*args[1:])
    elif args[:1] == ["feedback"] and len(args) == 3:
        feedback(*args[1:])
    elif args[:1] == ["warm"] and len(args) == 2:
        warm(args[1])
    else:
        sys.exit(__doc__.split("\n\n")[1])
