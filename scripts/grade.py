"""Grade one assignment of the course, end to end, with the real nbgrader (instructor venv).

    python scripts/grade.py all COURSE ASSIGNMENT     # make grade ASSIGNMENT=... [COURSE=...]
    python scripts/grade.py export COURSE ASSIGNMENT  # only the two CSV files
    python scripts/grade.py warm COURSE               # fill COURSE/toy-cache (make assignments does)

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

``warm`` runs each Part III source notebook once with ``TOY_CACHE_DIR=COURSE/toy-cache``, so that
grading a submission reuses the trained models instead of training them again. Files are written
atomically; nothing else in the course is changed.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_assignments import write_atomic  # noqa: E402

BIN = Path(sys.executable).parent


def nbgrader(course, *args, check=True):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=course, check=check, env=env)


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
                row.append("" if g.score is None else f"{g.score:g}")
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
    nbgrader(course, "collect", assignment, "--log-level=WARN", check=False)   # nothing to collect is fine
    t = time.time()
    nbgrader(course, "autograde", assignment, "--log-level=WARN")
    print(f"autograde: {time.time() - t:.0f} s")
    export(course, assignment)


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
    elif args[:1] == ["warm"] and len(args) == 2:
        warm(args[1])
    else:
        sys.exit(__doc__.split("\n\n")[1])
