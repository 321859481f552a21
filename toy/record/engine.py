"""Independent runs on every core, or on a cluster, through joblib: ``imap(fn, args)`` yields
``fn(*a)`` for each argument tuple, in the order the runs end.

Each run is seeded and single-threaded (``toy._blas``), so a run gives the same numbers, bit for
bit, in a worker as in the calling process; only the wall-clock time changes. Where the runs go:

- ``BACKEND=loky`` (the default): joblib's own process pool on this machine, ``WORKERS`` processes
  (default 2);
- ``BACKEND=dask``: joblib's Dask backend, on the cluster whose scheduler ``SCHEDULER`` names
  (``tcp://host:8786``; every worker must run this repository's ``.venv``, so that it computes
  with the book's reference arithmetic), or, without ``SCHEDULER``, a local cluster of ``WORKERS``
  single-threaded worker processes.

``make evidence WORKERS=8`` or ``make evidence BACKEND=dask SCHEDULER=tcp://…`` pass them through.
"""
import os

__all__ = ["imap", "settings"]


def settings(workers=None, backend=None, scheduler=None):
    """``(workers, backend, scheduler)`` from the arguments, else ``$WORKERS``, ``$BACKEND``,
    ``$SCHEDULER``; a bad value raises ``ValueError`` naming it."""
    workers = workers if workers is not None else os.environ.get("WORKERS") or 2
    try:
        workers = int(workers)
    except (TypeError, ValueError):
        raise ValueError(f"WORKERS must be a whole number of processes, got {workers!r}") from None
    if workers < 1:
        raise ValueError(f"WORKERS must be at least 1, got {workers}")
    backend = backend or os.environ.get("BACKEND") or "loky"
    if backend not in ("loky", "dask"):
        raise ValueError(f"BACKEND must be 'loky' or 'dask', got {backend!r}")
    return workers, backend, scheduler or os.environ.get("SCHEDULER") or None


def imap(fn, args, workers=None, backend=None, scheduler=None):
    """``fn(*a)`` for every ``a`` in ``args``, yielded as each ends (one process: in order, here)."""
    from joblib import Parallel, delayed, parallel_config
    workers, backend, scheduler = settings(workers, backend, scheduler)
    args = [tuple(a) for a in args]
    if backend == "loky" and (workers == 1 or len(args) < 2):
        for a in args:
            yield fn(*a)
        return
    calls = (delayed(fn)(*a) for a in args)
    if backend == "loky":
        yield from Parallel(n_jobs=min(workers, len(args)), backend="loky", return_as="generator_unordered")(calls)
        return
    from dask.distributed import Client, LocalCluster
    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  dashboard_address=None)
    with Client(scheduler or cluster) as client, parallel_config(backend="dask", wait_for_workers_timeout=60):
        n = len(client.scheduler_info()["workers"]) or workers
        yield from Parallel(n_jobs=n, return_as="generator_unordered")(calls)
    if cluster is not None:
        cluster.close()
