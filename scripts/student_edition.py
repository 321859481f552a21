"""Make the student edition of the notebooks: remove every cell tagged ``solution`` and the
sphinx-exercise ``solution-start`` / ``solution-end`` marker cells around them.

    python scripts/student_edition.py notebooks _build/student/notebooks
"""
import json
import pathlib
import re
import sys

MARKER = re.compile(r"^\s*```+\s*\{solution-(start|end)\}", re.M)
PROSE_SOLUTION = re.compile(r"^\s*```+\s*\{solution\}", re.M)


def is_solution(cell):
    if "solution" in cell.get("metadata", {}).get("tags", []):
        return True
    if cell["cell_type"] == "markdown":
        src = "".join(cell["source"])
        return bool(MARKER.search(src) or PROSE_SOLUTION.search(src))
    return False


def strip(nb):
    kept = [c for c in nb["cells"] if not is_solution(c)]
    removed = len(nb["cells"]) - len(kept)
    nb["cells"] = kept
    return nb, removed


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
        print(f"{out}: removed {removed} solution cell(s)")
    print(f"student edition: {total} solution cell(s) removed in total")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python scripts/student_edition.py SRC_DIR DST_DIR")
    main(*sys.argv[1:])
