"""Independent runs on both cores: ``toy.parallel.starmap(fn, args)`` is ``[fn(*a) for a in args]``,
computed ``processes`` at a time by joblib (``toy.record.engine``: loky's worker processes here,
or a Dask cluster).

Each run is seeded and single-threaded (``toy._blas``), so a run gives the same numbers, bit
for bit, in a worker as in the notebook's own process; only the wall-clock time changes (about
halved on a 2-core laptop). For a single run, or ``processes=1``, the runs are computed one after
another here.
"""
from ._check_args import function, integer

__all__ = ["starmap"]


def starmap(fn, args, processes=2, poll=None):
    """``[fn(*a) for a in args]``, ``processes`` at a time (``fn`` and the results must pickle).
    ``poll()``, if given, is called as each run ends (once if there is none; e.g. to move a progress bar)."""
    from .record import engine
    function(fn, "fn")
    processes = integer(processes, "processes", lo=1)
    if poll is not None:
        function(poll, "poll")
    if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__iter__"):
        raise ValueError(f"args must be a list of argument tuples, got {type(args).__name__}")
    args = list(args)
    if not all(isinstance(a, (tuple, list)) for a in args):
        raise ValueError("args must be a list of argument tuples (one per call), got an element that is not")
    indexed = [(i, fn, tuple(a)) for i, a in enumerate(args)]
    out = [None] * len(args)
    for i, value in engine.imap(_call, indexed, workers=processes, backend="loky"):
        out[i] = value
        if poll is not None:
            poll()
    if poll is not None and not args:
        poll()
    return out


def _call(i, fn, a):
    return i, fn(*a)
