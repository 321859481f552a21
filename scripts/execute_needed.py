"""Execute the notebooks that need it, before the book is built.

A committed notebook is already executed, and ``make test`` (nbval) proves that re-executing it
reproduces every committed output. So the book build renders committed outputs
(``execute_notebooks: "off"``) and this script only executes a notebook that has never been run
(a code cell without an execution count: a new or cleared notebook), in place, two at a time.
It fails on any cell error, and on any committed error output.

    python scripts/execute_needed.py [NOTEBOOK ...]     # default: notebooks/**/*.ipynb
"""
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]


def needs_execution(nb):
    return any(c.get("execution_count") is None for c in code_cells(nb))


def error_outputs(nb):
    return [i for i, c in enumerate(code_cells(nb)) if any(o.output_type == "error" for o in c.outputs)]


def execute(path):
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(pathlib.Path(path).parent)}})
    try:
        client.execute()
    except CellExecutionError as e:
        return path, time.perf_counter() - t0, str(e).splitlines()[-1] if str(e) else "cell error"
    nbformat.write(nb, path)
    return path, time.perf_counter() - t0, None


def main(paths):
    paths = [pathlib.Path(p) for p in paths] or sorted(
        p for p in pathlib.Path("notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    todo, failed = [], 0
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        if needs_execution(nb):
            todo.append(str(p))
        elif error_outputs(nb):
            print(f"ERROR {p}: committed outputs contain an error (cells {error_outputs(nb)})")
            failed += 1
    print(f"{len(paths) - len(todo)} notebook(s) already executed; executing {len(todo)}")
    with ProcessPoolExecutor(max_workers=2) as pool:
        for path, seconds, err in pool.map(execute, todo):
            print(f"{'ERROR' if err else 'ok   '} {seconds:6.1f} s  {path}" + (f"\n      {err}" if err else ""))
            failed += err is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
