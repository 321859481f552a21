"""The nbgrader round trip on real submissions (``make grade-demo``; run with the instructor venv).

    python scripts/grade_demo.py COURSE_DIR ASSIGNMENT [ASSIGNMENT ...]

For each assignment (already released by ``nbgrader generate_assignment``, ``make assignments``)
it submits two notebooks — ``solution``: the source notebook with the book's solutions;
``untouched``: the release notebook as a student receives it — runs the real
``nbgrader db student add`` and ``nbgrader autograde``, prints every graded cell's score from the
gradebook, and exits 1 unless the solution gets full marks on every autograded cell and the
untouched notebook zero on every graded cell.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SUBMISSIONS = {"solution": "source", "untouched": "release"}
BIN = Path(sys.executable).parent     # the instructor venv: nbgrader, alembic and the kernel's python


def nbgrader(course, *args):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([BIN / "nbgrader", *args], cwd=course, check=True, env=env)


def submit(course, assignment):
    for student, folder in SUBMISSIONS.items():
        nbgrader(course, "db", "student", "add", student, f"--last-name={student}", "--log-level=WARN")
        dst = course / "submitted" / student / assignment
        if dst.exists():
            shutil.rmtree(dst)
        dst.mkdir(parents=True)
        for nb in (course / folder / assignment).glob("*.ipynb"):
            shutil.copy(nb, dst / nb.name)


def scores(course, assignment):
    """[(student, notebook, grade_id, kind, score, max_score, needs manual grade)] from the gradebook."""
    from nbgrader.api import Gradebook
    rows = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for nb in gb.find_assignment(assignment).notebooks:
            for student in SUBMISSIONS:
                sub = gb.find_submission_notebook(nb.name, assignment, student)
                for g in sorted(sub.grades, key=lambda g: g.name):
                    # the test cells make_assignments.py writes are "<label>-check"
                    kind = "autograded" if g.name.endswith("-check") else "manual"
                    rows.append((student, nb.name, g.name, kind, g.score, g.max_score,
                                 g.needs_manual_grade))
    return rows


def problems(rows):
    """What is wrong with the scores: the solution must get full marks on every autograded cell,
    the untouched release zero on every graded cell (none left for manual grading)."""
    bad = []
    for student, nb, name, kind, score, max_score, manual in rows:
        if student == "solution" and kind == "autograded" and score != max_score:
            bad.append(f"solution {nb} {name}: {score} of {max_score}, expected full marks")
        if student == "untouched" and (score != 0 or manual):
            bad.append(f"untouched {nb} {name}: {score} of {max_score}"
                       f"{' (left for manual grading)' if manual else ''}, expected 0")
    if not any(r[0] == "solution" and r[3] == "autograded" for r in rows):
        bad.append("no autograded cell at all")
    return bad


def main(course, assignments):
    course, bad, t0 = Path(course).resolve(), [], time.time()
    for assignment in assignments:
        submit(course, assignment)
        nbgrader(course, "autograde", assignment, "--force", "--log-level=WARN")
        rows = scores(course, assignment)
        print(f"\n{assignment}: score per graded cell")
        for student, nb, name, kind, score, max_score, manual in rows:
            note = "  (needs manual grading)" if manual else ""
            print(f"  {student:9s} {nb:16s} {name:32s} {kind:10s} {score:g} / {max_score:g}{note}")
        for student in SUBMISSIONS:
            mine = [r for r in rows if r[0] == student]
            auto = [r for r in mine if r[3] == "autograded"]
            print(f"  {student}: autograded {sum(r[4] for r in auto):g} / {sum(r[5] for r in auto):g}, "
                  f"total so far {sum(r[4] for r in mine):g} / {sum(r[5] for r in mine):g}, "
                  f"{sum(r[6] for r in mine)} cell(s) left for manual grading")
        bad += problems(rows)
    print(f"\ngrade demo: {len(assignments)} assignment(s) autograded in {time.time() - t0:.0f} s")
    if bad:
        sys.exit("grade demo FAILED:\n  " + "\n  ".join(bad))
    print("grade demo passed: full marks for the solutions, zero for the untouched release")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python scripts/grade_demo.py COURSE_DIR ASSIGNMENT [ASSIGNMENT ...]")
    main(sys.argv[1], sys.argv[2:])
