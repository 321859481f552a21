"""Make the student edition of the notebooks: remove the solutions and nothing else.

Removed:
- every ``{solution}`` directive in a markdown cell (the rest of the cell, e.g. the "Exercises"
  heading, the exercise statements and the discussion around them, is kept);
- every cell tagged ``solution``, and everything between a ``{solution-start}`` and its
  ``{solution-end}`` marker (the markers, the solution code and any solution prose in between).

The code cells that directly follow a removed solution (the checker that ran against it) lose
their outputs, so no "✓ all N cases pass" stands under an empty stub; run the cell to see the
checker's verdict on your own code.

    python scripts/student_edition.py notebooks _build/student/src/notebooks
"""
import json
import pathlib
import re
import sys

# the opening line of a fenced directive: ```{name} or :::{name} (MyST colon_fence), any length >= 3
OPEN = re.compile(r"^\s*(`{3,}|:{3,})\s*\{([\w-]+)\}")


def _closes(line, fence):
    """Does ``line`` close a fence opened with ``fence`` (same character, at least as long)?"""
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]}


def strip_markdown(text, inside=False):
    """Remove solution directives from one markdown cell's text.

    ``inside``: the cell starts between a {solution-start} and its {solution-end}.
    Returns (kept text, inside at the end of the cell, number of solution blocks removed)."""
    out, removed = [], 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if m is None:
            if not inside:
                out.append(lines[i])
            i += 1
            continue
        fence, name = m.groups()
        j = i + 1  # the directive runs to its closing fence (or the end of the cell)
        while j < len(lines) and not _closes(lines[j], fence):
            j += 1
        block = lines[i:j + 1]
        if name == "solution" and not inside:
            removed += 1
        elif name == "solution-start":
            inside, removed = True, removed + 1
        elif name == "solution-end":
            inside = False
        elif not inside:
            out.extend(block)
        i = j + 1
    kept = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return kept, inside, removed


def _source(cell):
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def strip(nb):
    """The student edition of a notebook (a new dict) and the number of cells removed or cut."""
    cells, touched, inside, after_solution = [], 0, False, False
    for cell in nb["cells"]:
        tagged = "solution" in cell.get("metadata", {}).get("tags", [])
        if tagged or (inside and cell["cell_type"] != "markdown"):
            touched += 1
            after_solution = True
            continue
        if cell["cell_type"] == "markdown":
            src = _source(cell)
            text, inside_now, n = strip_markdown(src, inside)
            # a cell that was all solution (marker, solution prose) leads to its checker
            after_solution = (inside or inside_now or n > 0) and not text
            inside = inside_now
            if text.strip("\n") != src.strip("\n"):
                touched += 1
                if text:
                    source = text if isinstance(cell["source"], str) else text.splitlines(keepends=True)
                    cells.append({**cell, "source": source})
            else:
                cells.append(cell)
            continue
        if cell["cell_type"] == "code" and after_solution:
            cell = {**cell, "outputs": [], "execution_count": None}
        else:
            after_solution = False
        cells.append(cell)
    return {**nb, "cells": cells}, touched


def main(src, dst):
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    total = 0
    for path in sorted(src.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb, removed = strip(json.loads(path.read_text()))
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        total += removed
        print(f"{out}: {removed} solution cell(s) removed or cut")
    print(f"student edition: {total} solution cell(s) removed or cut in total")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python scripts/student_edition.py SRC_DIR DST_DIR")
    main(*sys.argv[1:])
