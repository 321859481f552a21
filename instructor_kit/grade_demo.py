"""The nbgrader round trip on eight submissions with known scores (``make grade-demo``; CI runs it).

    python instructor_kit/grade_demo.py DEMO_DIR

builds a fresh course in DEMO_DIR with one assignment, §II.4 (two autograded exercises,
``clipped_grad`` and ``clip_cap``, 2 points each), releases it with ``nbgrader generate_assignment``,
submits eight notebooks, autogrades them with the real ``nbgrader autograde`` and compares each
autograded cell's score in the gradebook with the score expected:

==================  =====================================================================
full                the book's solutions                                    → 2 + 2
partial             ``clip_cap`` without the ``min`` with 1 (passes 4 of the 6 book cases
                    and 4 of the 6 hidden ones: 8/12 × 2)                   → 2 + 1.33
untouched           the release as a student receives it                    → 0 + 0
edited test cell    stubs, and the ``clip_cap`` test cell replaced by ``2`` (nbgrader
                    restores it from the gradebook)                         → 0 + 0
deleted test cell   solutions; ``clip_cap``'s test cell deleted and ``clipped_grad``'s
                    stripped of its metadata (``add_missing_cells`` puts them back) → 2 + 2
patched checker     ``check.clipped_grad = lambda fn: True`` under a stub, then the right
                    ``clip_cap`` (tampering: every later test cell scores 0) → 0 + 0
patched numpy       ``np.allclose = lambda *a, **k: True`` and ``clip_cap`` returning zeros
                    (the ``clipped_grad`` right, graded before the patch)  → 2 + 0
warning but right   solutions whose ``clip_cap`` warns (``np.log(0)``, ``warnings.warn``)
                    and writes to stderr                                    → 2 + 2
==================  =====================================================================

It prints the table of expected and obtained scores and exits 1 if any differs.
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_assignments  # noqa: E402

ASSIGNMENT = "part2-s04_ppo_grpo_temperature"
NOTEBOOK = "s04_ppo_grpo_temperature.ipynb"
GRAD, CAP = "ex-p2-s04-clipped-grad", "ex-p2-s04-clip-cap"
BIN = Path(sys.executable).parent     # the instructor venv: nbgrader, alembic and the kernel's python

NO_MIN = "def clip_cap(p_old, eps):\n    return np.asarray(p_old, float) * (1 + eps)   # forgets π ≤ 1\n"
NOISY = ("import sys, warnings\n\n\ndef clip_cap(p_old, eps):\n    np.log(0.0)                      # a stray warning\n"
         "    warnings.warn('left over from debugging')\n    print('debug', file=sys.stderr)\n"
         "    return np.minimum(np.asarray(p_old, float) * (1 + eps), 1.0)\n")
ZEROS = "def clip_cap(p_old, eps):\n    return np.zeros_like(np.asarray(p_old, float))\n"


def nbgrader(course, *args):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run([BIN / "nbgrader", *args, "--log-level=ERROR"], cwd=course, env=env,
                         capture_output=True, text=True)                  # the kernels' chatter: only on failure
    if run.returncode:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{run.stdout}{run.stderr}")


def load(path):
    """A notebook with each cell's source as one string (nbformat may write a list of lines)."""
    nb = json.loads(path.read_text())
    for c in nb["cells"]:
        c["source"] = "".join(c["source"])
    return nb


def cell(nb, grade_id):
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def solution(source, grade_id):
    """The book's solution code of an answer cell (between the solution markers of the source)."""
    text = cell(source, grade_id)["source"]
    return text.split("### BEGIN SOLUTION\n", 1)[1].split("\n### END SOLUTION", 1)[0] + "\n"


def submissions(source, release):
    """{name: (notebook, {grade id: expected score})} of the eight submissions."""
    def answered(**answers):
        nb = json.loads(json.dumps(release))
        for gid, text in answers.items():
            cell(nb, f"{gid}-code")["source"] = text
        return nb
    right = {GRAD: solution(source, f"{GRAD}-code"), CAP: solution(source, f"{CAP}-code")}
    stub = {GRAD: cell(release, f"{GRAD}-code")["source"], CAP: cell(release, f"{CAP}-code")["source"]}
    out = {}
    out["full"] = (answered(**right), {GRAD: 2, CAP: 2})
    out["partial"] = (answered(**{GRAD: right[GRAD], CAP: NO_MIN}), {GRAD: 2, CAP: round(2 * 8 / 12, 2)})
    out["untouched"] = (answered(), {GRAD: 0, CAP: 0})
    nb = answered()
    cell(nb, f"{CAP}-check")["source"] = "2"
    out["edited test cell"] = (nb, {GRAD: 0, CAP: 0})
    nb = answered(**right)
    nb["cells"].remove(cell(nb, f"{CAP}-check"))
    del cell(nb, f"{GRAD}-check")["metadata"]["nbgrader"]
    out["deleted test cell"] = (nb, {GRAD: 2, CAP: 2})
    out["patched checker"] = (answered(**{GRAD: stub[GRAD] + "\ncheck.clipped_grad = lambda fn: True\n",
                                          CAP: right[CAP]}), {GRAD: 0, CAP: 0})
    out["patched numpy"] = (answered(**{GRAD: right[GRAD], CAP: ZEROS + "\nnp.allclose = lambda *a, **k: True\n"}),
                            {GRAD: 2, CAP: 0})
    out["warning but right"] = (answered(**{GRAD: right[GRAD], CAP: NOISY}), {GRAD: 2, CAP: 2})
    return out


def student_id(name):
    return name.replace(" ", "-")


def scores(course):
    """{(student, grade id): (score, max score)} of the autograded cells, from the gradebook."""
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in gb.students:
            try:
                sub = gb.find_submission_notebook(Path(NOTEBOOK).stem, ASSIGNMENT, student.id)
            except Exception:  # noqa: BLE001 — not submitted
                continue
            for g in sub.grades:
                if g.name.endswith("-check") or "-check-" in g.name:
                    out[(student.id, g.name[:-len("-check")])] = (g.score, g.max_score)
    return out


def compare(expected, got):
    """Rows (submission, question, expected, got, ok) and whether every score is as expected."""
    rows = []
    for name, exp in expected.items():
        for gid, e in exp.items():
            g = got.get((student_id(name), gid), (None, None))[0]
            rows.append((name, gid, e, g, g is not None and abs(g - e) < 0.006))
    return rows, all(r[4] for r in rows)


def main(demo):
    demo, t0 = Path(demo).resolve(), time.time()
    if demo.exists():
        shutil.rmtree(demo)
    make_assignments.main(ROOT / "notebooks", demo, only=[ASSIGNMENT])
    nbgrader(demo, "generate_assignment", ASSIGNMENT, "--force")
    source = load(demo / "source" / ASSIGNMENT / NOTEBOOK)
    release = load(demo / "release" / ASSIGNMENT / NOTEBOOK)
    subs = submissions(source, release)
    roster = "id,first_name,last_name,email\n" + "".join(f"{student_id(n)},,{n},\n" for n in subs)
    (demo / "demo_students.csv").write_text(roster)
    nbgrader(demo, "db", "student", "import", "demo_students.csv")
    for name, (nb, _) in subs.items():
        dst = demo / "submitted" / student_id(name) / ASSIGNMENT
        dst.mkdir(parents=True)
        (dst / NOTEBOOK).write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    t1 = time.time()
    nbgrader(demo, "autograde", ASSIGNMENT, "--force")
    t_grade = time.time() - t1
    rows, ok = compare({n: e for n, (_, e) in subs.items()}, scores(demo))
    print(f"\ngrade demo: {ASSIGNMENT}, autograded cells of {len(subs)} submissions\n")
    print(f"| submission | question | expected | got | |\n|---|---|---|---|---|")
    for name, gid, e, g, good in rows:
        print(f"| {name} | {gid.removeprefix('ex-p2-s04-')} | {e:g} | {'—' if g is None else f'{g:g}'} | "
              f"{'ok' if good else 'DIFFERS'} |")
    print(f"\n{len(subs)} submissions autograded in {t_grade:.0f} s ({t_grade / len(subs):.1f} s each); "
          f"demo {time.time() - t0:.0f} s in all")
    if not ok:
        sys.exit("grade demo FAILED: a score differs from the expected one (table above)")
    print("grade demo passed: every score as expected")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python instructor_kit/grade_demo.py DEMO_DIR")
    main(sys.argv[1])
