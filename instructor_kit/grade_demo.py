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

Speed (CI's budget: 90 s on two cores shared with other jobs). Graded one after the other, on
the whole notebook, a submission took 19 s, 15 of them in the release's code after the last
autograded test cell (it trains GRPO and REINFORCE on ten seeds per setting and draws the
figures), so:

- every submission is the student's notebook without that tail: the plain code cells (no
  nbgrader metadata) after the last autograded test cell (``tail``). Nothing graded depends on
  them: a test cell's score is what it printed when it ran, before any of them ran; every cell
  up to the last test cell is submitted, and so is every nbgrader cell after it (the written
  answers); and nbgrader's gradebook holds only the nbgrader cells (their checksums, the hidden
  tests, the cells ``add_missing_cells`` puts back), so each submission is graded against the
  same assignment, with the same cells, as a whole one. The release students get (``make
  assignments``) is not changed: the demo releases it and cuts the tail from the submissions.
- ``WORKERS`` ``nbgrader autograde`` processes run at once, each on its own copy of the course
  (config, source, gradebook) with its share of the submissions; each copy's gradebook gives
  its scores.
"""
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_assignments  # noqa: E402

ASSIGNMENT = "part2-s04_ppo_grpo_temperature"
NOTEBOOK = "s04_ppo_grpo_temperature.ipynb"
GRAD, CAP = "ex-p2-s04-clipped-grad", "ex-p2-s04-clip-cap"
BIN = Path(sys.executable).parent     # the instructor venv: nbgrader, alembic and the kernel's python
WORKERS = min(4, os.cpu_count() or 1)   # nbgrader autograde processes at once (docstring: Speed)

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


def is_test(c):
    meta = c["metadata"].get("nbgrader", {})
    return c["cell_type"] == "code" and meta.get("grade") and not meta.get("solution")


def tail(release):
    """Ids of the release's plain code cells (no nbgrader metadata) after its last autograded test cell."""
    cells = release["cells"]
    last = max(i for i, c in enumerate(cells) if is_test(c))
    return {c["id"] for c in cells[last + 1:] if c["cell_type"] == "code" and "nbgrader" not in c["metadata"]}


def autograde(demo, k, subs):
    """``nbgrader autograde`` of ``subs`` ({name: notebook}) on a copy of the course in demo/autograder-k:
    the scores of its gradebook (``scores``)."""
    course = demo / f"autograder-{k}"
    course.mkdir()
    shutil.copy2(demo / "nbgrader_config.py", course)
    shutil.copy2(demo / "gradebook.db", course)
    shutil.copytree(demo / "source", course / "source")
    for name, nb in subs.items():
        make_assignments.write_atomic(course / "submitted" / student_id(name) / ASSIGNMENT / NOTEBOOK,
                                      json.dumps(nb, indent=1, ensure_ascii=False))
    nbgrader(course, "autograde", ASSIGNMENT, "--force")
    return scores(course)


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
    cut = tail(release)
    trimmed = {n: {**nb, "cells": [c for c in nb["cells"] if c.get("id") not in cut]} for n, (nb, _) in subs.items()}
    shares = [dict(list(trimmed.items())[k::WORKERS]) for k in range(WORKERS)]
    t1, got = time.time(), {}
    with ThreadPoolExecutor(WORKERS) as pool:
        for found in pool.map(autograde, [demo] * WORKERS, range(1, WORKERS + 1), shares):
            got.update(found)
    t_grade = time.time() - t1
    rows, ok = compare({n: e for n, (_, e) in subs.items()}, got)
    print(f"\ngrade demo: {ASSIGNMENT}, autograded cells of {len(subs)} submissions\n")
    print(f"| submission | question | expected | got | |\n|---|---|---|---|---|")
    for name, gid, e, g, good in rows:
        print(f"| {name} | {gid.removeprefix('ex-p2-s04-')} | {e:g} | {'—' if g is None else f'{g:g}'} | "
              f"{'ok' if good else 'DIFFERS'} |")
    print(f"\n{len(subs)} submissions (without the release's {len(cut)} code cells after its last test cell) "
          f"autograded in {t_grade:.0f} s by {WORKERS} nbgrader processes at once; course and release "
          f"{t1 - t0:.0f} s; demo {time.time() - t0:.0f} s in all")
    if not ok:
        sys.exit("grade demo FAILED: a score differs from the expected one (table above)")
    print("grade demo passed: every score as expected")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python instructor_kit/grade_demo.py DEMO_DIR")
    main(sys.argv[1])
