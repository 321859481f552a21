"""Write the book's exercise index (book/exercises.md) from the notebooks.

    python scripts/exercise_index.py            # rewrite book/exercises.md
    python scripts/exercise_index.py --check    # exit 1 if book/exercises.md is out of date

Every exercise of every section, with its kind, checker(s), nbgrader points and a time estimate
(rules in ``exercises.py``: ``KIND_RULE``, ``MINUTES``, ``POINTS``).
"""
import sys
from pathlib import Path

import exercises as ex

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "exercises.md"

HEADER = f"""# Exercise index

Every exercise of the book, section by section. This page is generated from the notebooks by
`scripts/exercise_index.py` (`make exercise-index`); a test fails when it is out of date.

- **Kind.** *code*: a stub to complete in the notebook, the solution hidden under it;
  *derivation*: the prompt asks to derive, prove or compute by hand; *short answer*: a few
  sentences of explanation.
- **Checker.** `check.<name>(answer)` runs the answer on a few cases and prints ✓ or a specific
  hint; it also returns a result that a grader can score (see *For instructors* in the
  [introduction](intro.md)). A code exercise without a checker is an experiment to run and
  interpret.
- **Points** are what the instructor kit's nbgrader assignments give it (`make assignments`):
  {ex.POINTS["code"]} per checker (scored per case, the book's cases and hidden ones),
  {ex.POINTS["written part of a code exercise"]} per written part of a code exercise,
  {ex.POINTS["short answer"]} for a short answer, {ex.POINTS["derivation"]} for a derivation, and
  {ex.POINTS["code (no checker)"]} for a code exercise without a checker (graded by hand). An
  instructor can change them in the course's `source/` notebooks.
- **Time** is a rough estimate by kind, not a measurement: {ex.MINUTES["short answer"]} min for a short
  answer, {ex.MINUTES["derivation"]} min for a derivation or a code exercise with a checker,
  {ex.MINUTES["code (no checker)"]} min for a code exercise without one.
"""


def hours(minutes):
    h, m = divmod(minutes, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"


def render(sections):
    out = [HEADER.rstrip("\n")]
    for part in sorted({s.part for s in sections}):
        rows = [(s, e) for s in sections if s.part == part for e in s.exercises]
        total = sum(e.minutes for _, e in rows)
        points = sum(ex.points_of(e) for _, e in rows)
        out.append(f"\n## Part {ex.ROMAN[part]}: {len(rows)} exercises, {points:g} points, about {hours(total)}\n")
        out.append("| section | exercise | kind | checker | points | time |")
        out.append("|---|---|---|---|---|---|")
        for s, e in rows:
            link = f"../{s.path.relative_to(ROOT).as_posix()}"
            checker = ", ".join(f"`check.{c}`" for c in e.checkers) or "—"
            out.append(f"| [{s.ref}]({link}) {s.title} | {{ref}}`{e.title} <{e.label}>` | {e.kind} "
                       f"| {checker} | {ex.points_of(e):g} | {e.minutes} min |")
    return "\n".join(out) + "\n"


def main(argv):
    text = render(ex.sections(ROOT / "notebooks"))
    if argv == ["--check"]:
        if PAGE.read_text() != text:
            sys.exit(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/exercise_index.py")
        return
    if argv:
        sys.exit("usage: python scripts/exercise_index.py [--check]")
    PAGE.write_text(text)
    print(f"{PAGE.relative_to(ROOT)}: {text.count('{ref}')} exercises")


if __name__ == "__main__":
    main(sys.argv[1:])
