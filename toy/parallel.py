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


def starmap(fn, args, processes=2, poll=None):
    """``[fn(*a) for a in args]``, ``processes`` at a time (``fn`` and the results must pickle).
    ``poll()``, if given, is called about every 0.25 s while the workers run (e.g. to move a
    progress bar) and once at the end."""
    function(fn, "fn")
    processes = integer(processes, "processes", lo=1)
    if poll is not None:
        function(poll, "poll")
    if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__iter__"):
        raise ValueError(f"args must be a list of argument tuples, got {type(args).__name__}")
    args = list(args)
    if not all(isinstance(a, (tuple, list)) for a in args):
        raise ValueError("args must be a list of argument tuples (one per call), got an element that is not")
    args = [tuple(a) for a in args]
    if processes == 1 or len(args) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        out = []
        for a in args:
            out.append(fn(*a))
            if poll is not None:
                poll()
        return out
    with multiprocessing.get_context("fork").Pool(min(int(processes), len(args))) as pool:
        res = pool.starmap_async(fn, args, chunksize=1)
        while poll is not None and not res.ready():
            res.wait(0.25)
            poll()
        out = res.get()
    if poll is not None:
        poll()
    return out
