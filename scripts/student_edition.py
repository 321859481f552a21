"""Make the student edition of the notebooks: remove the solutions and nothing else.

Removed:
- every ``{solution}`` directive in a markdown cell (the rest of the cell, e.g. the "Exercises"
  heading, the exercise statements and the discussion around them, is kept);
- every cell tagged ``solution``, and everything between a ``{solution-start}`` and its
  ``{solution-end}`` marker (the markers, the solution code and any solution prose in between).

The code cells that directly follow a removed solution (the checker that ran against it) lose
their outputs, so no "✓ all N cases pass" stands under an empty stub; run the cell to see the
checker's verdict on your own code.

    python scripts/student_edition.py [--force] notebooks _build/student/notebooks

Nothing a person made is lost: each folder this script writes holds a manifest of what it wrote
(``.student-edition.json``, by SHA-256); a file edited since (a student's work in the handout)
is never overwritten or removed without ``--force``, and even then it is kept as a ``.bak``.
Every write is atomic (a temporary file in the same folder, then a rename).
"""
import hashlib
import json
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from safe_io import NotebookError, notebook_text, read_notebook, write_bytes, write_text  # noqa: E402

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


MANIFEST = ".student-edition.json"   # in each folder this script writes: what it wrote, by hash


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _files(folder):
    """The files under ``folder`` (relative paths), without the manifest and Jupyter's checkpoints."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and p.name != MANIFEST and ".ipynb_checkpoints" not in p.parts}


def _manifest(folder):
    try:
        return json.loads((folder / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def edited(folder):
    """The files of ``folder`` that this script did not write, or that changed since it wrote
    them (a student's or an instructor's edits), sorted."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        return []
    ours = _manifest(folder)
    return sorted(rel for rel in _files(folder) if ours.get(rel) != _sha((folder / rel).read_bytes()))


def sync(folder, files, force=False):
    """Make ``folder`` hold ``files`` ({relative path: bytes}) without losing anything a person made.

    A file is written (atomically) only if it is new, unchanged since this script wrote it, or
    already identical; a file this script wrote earlier that is no longer wanted is removed only if
    unchanged. A file that a person edited (or that this script did not write) is left alone and
    named, and nothing at all is written (exit 1); with ``force`` it is first kept as
    ``NAME.<time>.bak`` and then replaced. Returns the number of files written."""
    folder = pathlib.Path(folder)
    ours = _manifest(folder) if folder.is_dir() else {}
    present = _files(folder) if folder.is_dir() else set()
    clash = []
    for rel in sorted(present & set(files) | present & set(ours)):
        data = (folder / rel).read_bytes()
        if ours.get(rel) != _sha(data) and data != files.get(rel):
            clash.append(rel)
    if clash and not force:
        for rel in clash:
            print(f"KEEP  {folder / rel}: edited since make student wrote it (or not written by it)")
        sys.exit(f"student edition: {len(clash)} file(s) in '{folder}' were edited and are left as they "
                 f"are; nothing was written. Move them away, or rerun with FORCE=1 "
                 f"(make student FORCE=1), which keeps each one as NAME.<time>.bak before replacing it.")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for rel in clash:
        backup = folder / f"{rel}.{stamp}.bak"
        write_bytes(backup, (folder / rel).read_bytes())          # atomic: no half .bak on a full disk
        print(f"kept  {backup} (edited; replaced because of FORCE)")
    written, manifest = 0, {}
    for rel, data in sorted(files.items()):
        out = folder / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if not (out.is_file() and out.read_bytes() == data):
            write_bytes(out, data)
            written += 1
        manifest[rel] = _sha(data)
    for rel in sorted(set(ours) - set(files)):        # ours, no longer wanted (unchanged, or kept as .bak)
        if (folder / rel).is_file():
            (folder / rel).unlink()
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / MANIFEST, json.dumps({"files": manifest}, indent=1) + "\n")
    return written


def edition(src):
    """{relative path: bytes} of the student notebooks made from the notebooks under ``src``, and
    the number of solution cells removed or cut in each (a one-line exit on a broken notebook)."""
    src = pathlib.Path(src)
    files, removed = {}, {}
    for path in sorted(src.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        try:
            nb, n = strip(read_notebook(path))
        except NotebookError as e:
            sys.exit(f"student edition: {e}")
        rel = path.relative_to(src).as_posix()
        files[rel], removed[rel] = notebook_text(nb).encode("utf-8"), n
    return files, removed


def site(handout, root="."):
    """{relative path: bytes} of the Jupyter Book source of the student HTML: ``book/``,
    ``_toc.yml``, ``_config.yml`` with the solutions hidden, and the handout as ``notebooks/``."""
    root, handout = pathlib.Path(root), pathlib.Path(handout)
    files = {f"book/{p.relative_to(root / 'book').as_posix()}": p.read_bytes()
             for p in sorted((root / "book").rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    files["_toc.yml"] = (root / "_toc.yml").read_bytes()
    config = (root / "_config.yml").read_text(encoding="utf-8")
    config = re.sub(r"(?m)^    hide_solutions: false", "    hide_solutions: true", config)
    config = re.sub(r'(?m)^title: "(.*)"', r'title: "\1 (student edition)"', config)
    if "hide_solutions: true" not in config or 'execute_notebooks: "off"' not in config:
        sys.exit("student edition: _config.yml must have 'hide_solutions: false' under the solution "
                 "options and 'execute_notebooks: \"off\"'")
    files["_config.yml"] = config.encode("utf-8")
    for rel in sorted(_manifest(handout)):                         # the notebooks this script wrote
        files[f"notebooks/{rel}"] = (handout / rel).read_bytes()
    return files


USAGE = """usage:
  python scripts/student_edition.py [--force] SRC_DIR HANDOUT_DIR    # the notebooks to hand out
  python scripts/student_edition.py --site [--force] HANDOUT_DIR SITE_DIR   # the student HTML's source
  python scripts/student_edition.py --check-edits DIR ...            # exit 1 naming edited files"""


def main(argv):
    force = "--force" in argv
    args = [a for a in argv if a != "--force"]
    if args[:1] == ["--check-edits"] and len(args) > 1:
        changed = [f"{pathlib.Path(d) / rel}" for d in args[1:] for rel in edited(d)]
        for f in changed:
            print(f"KEEP  {f}: edited since make student wrote it (or not written by it)")
        return 1 if changed else 0
    if args[:1] == ["--site"] and len(args) == 3:
        written = sync(args[2], site(args[1]), force)
        print(f"student edition: HTML source in '{args[2]}' ({written} file(s) updated)")
        return 0
    if len(args) != 2 or args[0].startswith("--"):
        sys.exit(USAGE)
    files, removed = edition(args[0])
    written = sync(args[1], files, force)
    for rel, n in removed.items():
        print(f"{pathlib.Path(args[1]) / rel}: {n} solution cell(s) removed or cut")
    print(f"student edition: {sum(removed.values())} solution cell(s) removed or cut in total; "
          f"{written} file(s) updated in '{args[1]}'")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as e:          # a full disk, a file size limit, no permission: one line, files intact
        sys.exit(f"student edition: cannot write {e.filename or ''} ({e.strerror or e}); every file written "
                 f"is complete, and no edited file was replaced")
