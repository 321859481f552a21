"""Check, before the book is built, that every notebook has been executed; never run one behind
the reader's back.

A committed notebook is already executed, and ``make test`` (nbval) proves that re-executing it
reproduces every committed output. So the book build renders committed outputs
(``execute_notebooks: "off"``). A notebook with a code cell that has never run (a new notebook,
or one a reader edited and did not run) is *not* re-executed here: that would replace every
output in it, the reader's included. This script names it and stops, and says how to run it.
It also stops on a committed error output, and names any file that is not a valid notebook
(one line each).

    python scripts/execute_needed.py [NOTEBOOK ...]            # check (default: notebooks/**/*.ipynb)
    python scripts/execute_needed.py --inplace NOTEBOOK ...    # execute these, two at a time

``--inplace`` is the explicit request to execute a notebook in its place: the executed notebook
is written atomically (a temporary file, then a rename: a full disk leaves the old file intact),
the file it replaces is kept next to it as ``NAME.ipynb.<time>.bak``, and nothing is written if
the notebook changed on disk while it was executing.
"""
import json
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from safe_io import NotebookError, read_notebook, write_bytes, write_text  # noqa: E402


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def never_run(nb):
    """Indices (among the code cells) of the code cells that have never been executed."""
    return [i for i, c in enumerate(code_cells(nb)) if c.get("execution_count") is None]


def needs_execution(nb):
    return bool(never_run(nb))


def error_outputs(nb):
    return [i for i, c in enumerate(code_cells(nb)) if any(o.output_type == "error" for o in c.outputs)]


def load(path):
    """The notebook at ``path`` as an nbformat v4 node (a one-line NotebookError if it is not one)."""
    raw = read_notebook(path)
    try:
        return nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as e:  # nbformat raises many kinds; the reader needs the file's name
        raise NotebookError(f"{path}: not a notebook nbformat can read ({type(e).__name__})") from None


def cell_timeout():
    """Seconds a cell may run: 600, or none when recording evidence (``RL_BY_HAND_EVIDENCE=record``,
    ``make evidence``), where a cell trains every run the record does not hold yet (after a change
    to the training code, §III.8's race cell alone trains for half an hour)."""
    return None if os.environ.get("RL_BY_HAND_EVIDENCE") == "record" else 600


def execute(path):
    """Execute ``path`` and, if it ran without error and did not change meanwhile, write it back
    atomically, keeping the old file as a backup. Returns (path, seconds, error or None)."""
    path = pathlib.Path(path)
    before = path.read_bytes()
    nb = load(path)
    t0 = time.perf_counter()
    timeout = cell_timeout()
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except CellTimeoutError:
        return str(path), time.perf_counter() - t0, f"a cell timed out (after {timeout} s): not written"
    except CellExecutionError as e:
        return str(path), time.perf_counter() - t0, (str(e).splitlines()[-1] if str(e) else "cell error")
    seconds = time.perf_counter() - t0
    if path.read_bytes() != before:
        return str(path), seconds, "the file changed on disk while it was executing: not written"
    backup = path.with_name(f"{path.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
    text = nbformat.writes(nb)
    try:
        write_bytes(backup, before)                                  # the old file, kept
        write_text(path, text if text.endswith("\n") else text + "\n")   # nbformat.write's layout
    except OSError as e:
        return str(path), seconds, f"not written ({e.strerror or e}); the notebook is unchanged"
    return str(path), seconds, None


def main(argv):
    inplace = "--inplace" in argv
    args = [a for a in argv if a != "--inplace"]
    if inplace and not args:
        print("usage: python scripts/execute_needed.py --inplace NOTEBOOK ... (name the notebooks to run)")
        return 2
    paths = [pathlib.Path(p) for p in args] or sorted(
        p for p in pathlib.Path("notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    todo, failed = [], 0
    for p in paths:
        try:
            nb = load(p)
        except NotebookError as e:
            print(f"ERROR {e}")
            failed += 1
            continue
        if inplace or needs_execution(nb):
            todo.append((p, never_run(nb)))
        elif error_outputs(nb):
            print(f"ERROR {p}: committed outputs contain an error (code cells {error_outputs(nb)})")
            failed += 1
    if not inplace:
        print(f"{len(paths) - len(todo) - failed} notebook(s) already executed")
        for p, cells in todo:
            print(f"STOP  {p}: {len(cells)} code cell(s) never run (code cells {cells}); the book shows "
                  f"committed outputs, so run it first. Nothing was changed.\n"
                  f"      Run it in Jupyter and save, or execute it in place (its outputs are replaced; "
                  f"the old file is kept as a .bak):\n"
                  f"      .venv/bin/python scripts/execute_needed.py --inplace '{p}'")
        return 1 if failed or todo else 0
    if failed:
        return 1
    print(f"executing {len(todo)} notebook(s) in place")
    with ProcessPoolExecutor(max_workers=2) as pool:
        for path, seconds, err in pool.map(execute, [p for p, _ in todo]):
            print(f"{'ERROR' if err else 'ok   '} {seconds:6.1f} s  {path}" + (f"\n      {err}" if err else ""))
            failed += err is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
