"""Independent runs on both cores: ``toy.parallel.starmap(fn, args)`` is
``[fn(*a) for a in args]``, computed ``processes`` at a time in forked worker processes.

Each run is seeded and single-threaded (``toy._blas``), so a run gives the same numbers, bit
for bit, in a worker as in the notebook's own process; only the wall-clock time changes (about
halved on a 2-core laptop). Where ``fork`` is not available (Windows, macOS's default), or for a
single run, the runs are computed one after another here.
"""
import multiprocessing

from ._check_args import function, integer

__all__ = ["starmap"]


def starmap(fn, args, processes=2):
    """``[fn(*a) for a in args]``, ``processes`` at a time (``fn`` and the results must pickle)."""
    function(fn, "fn")
    processes = integer(processes, "processes", lo=1)
    args = [tuple(a) for a in args]
    if processes == 1 or len(args) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(*a) for a in args]
    with multiprocessing.get_context("fork").Pool(min(int(processes), len(args))) as pool:
        return pool.starmap(fn, args, chunksize=1)
