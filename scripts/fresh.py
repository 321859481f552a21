"""Replicate the ledgers' verdicts on seeds the book never used (``make fresh``).

Each ledger notebook is executed with ``RL_BY_HAND_SEEDS=fresh`` (``toy.seeds``: RL seeds from
1000, warm-ups 1000, 1001, 1002) in a scratch copy: its outputs are thrown away, nothing in
``notebooks/`` is written. What it keeps is ``evidence/fresh/<part>.json`` (``Ledger.fresh_seeds``:
each row's finding on the fresh seeds); its Part III runs go into the evidence record like the
book's (``RL_BY_HAND_EVIDENCE=record``, set by the Makefile). Then re-execute the ledgers in place
(the Makefile does) to show, row by row, whether the finding replicated.

    python scripts/fresh.py NOTEBOOK ...
"""
import json
import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(path):
    nb = nbformat.read(path, as_version=4)
    os.environ["RL_BY_HAND_SEEDS"] = "fresh"
    t0 = time.time()
    NotebookClient(nb, timeout=7200, kernel_name="python3",
                   resources={"metadata": {"path": str(pathlib.Path(path).parent)}}).execute()
    return time.time() - t0


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    failed = 0
    for p in paths:
        try:
            took = run(p)
            print(f"fresh seeds: {p} executed in {took:.0f} s (outputs discarded)")
        except CellExecutionError as e:
            failed += 1
            print(f"fresh seeds: {p} failed: {str(e).strip().splitlines()[-1]}")
    if "--no-summary" in sys.argv:
        return 1 if failed else 0
    for f in sorted((ROOT / "evidence" / "fresh").glob("*.json")):
        rows = json.loads(f.read_text(encoding="utf-8"))["rows"]
        print(f"  {f.relative_to(ROOT)}: {len(rows)} experimental rows kept")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main([a for a in sys.argv[1:] if a != "--no-summary"]))
