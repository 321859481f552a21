"""A progress bar for long work that a reader watches, and that no saved output ever records.

``Progress(total, what)`` shows ``what: 37 / 200 run-steps (18 %), 4.1 s, about 18 s left``
once the work has run for ``after`` seconds (default 2 s), and redraws it at most every 0.25 s:

- in a Jupyter notebook that a person runs (JupyterLab, Notebook, VS Code): in a display that is
  updated in place and emptied when the work ends;
- in a terminal: on one line of stderr (``\\r``), erased when the work ends.

Nothing is shown otherwise: not when a notebook is executed by ``nbclient`` (``jupyter nbconvert
--execute``, nbval, jupyter-book), whose outputs are the committed ones, nor when stderr is not a
terminal (a log file, pytest). How a notebook run by a person is told apart from one run by a
program: the front ends a person uses accept ``input()`` (their execute requests set
``allow_stdin``), ``nbclient`` and nbval never do. ``TOY_PROGRESS=0`` turns the bar off, ``=1``
forces it on (for a demo).
"""
import os
import sys
import time

from ._check_args import integer

__all__ = ["Progress", "where"]


def where():
    """Where a bar would show now: ``"jupyter"``, ``"terminal"`` or None (nowhere)."""
    flag = os.environ.get("TOY_PROGRESS", "")
    if flag == "0":
        return None
    ipython = sys.modules.get("IPython")                 # not imported: not in a notebook (and no 0.5 s import)
    ip = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(ip, "kernel", None)
    if kernel is not None:                                # a Jupyter kernel
        return "jupyter" if flag == "1" or getattr(kernel, "_allow_stdin", False) else None
    stream = sys.stderr
    if flag == "1" or (hasattr(stream, "isatty") and stream.isatty()):
        return "terminal"
    return None


class Progress:
    """Count ``total`` units of work (``update(n)``), showing a bar as the module says;
    ``close()`` (or leaving a ``with`` block) removes it."""

    def __init__(self, total, what="training", unit="steps", after=2.0, every=0.25):
        self.total, self.what, self.unit = max(integer(total, "total", lo=0), 1), what, unit
        self.after, self.every = after, every
        self.done, self.t0, self.drawn = 0, time.perf_counter(), 0.0
        self.place = where() if after != float("inf") else None
        self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def text(self):
        t = time.perf_counter() - self.t0
        left = t * (self.total - self.done) / self.done if self.done else float("nan")
        tail = f", about {left:.0f} s left" if self.done and self.done < self.total else ""
        return (f"{self.what}: {self.done} / {self.total} {self.unit} "
                f"({100 * self.done / self.total:.0f} %), {t:.1f} s{tail}")

    def update(self, n=1):
        self.done = min(self.total, self.done + int(n))
        if self.place is None:
            return
        now = time.perf_counter()
        if now - self.t0 < self.after or now - self.drawn < self.every:
            return
        self.drawn = now
        self._show(self.text())

    def _show(self, line):
        if self.place == "terminal":
            sys.stderr.write("\r" + line + "\033[K")
            sys.stderr.flush()
            return
        from IPython.display import display
        bundle = {"text/plain": line}
        if self.handle is None:
            self.handle = display(bundle, raw=True, display_id=True)
        else:
            self.handle.update(bundle, raw=True)

    def close(self):
        """Remove the bar (if one was drawn)."""
        if not self.drawn:
            return
        if self.place == "terminal":
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        elif self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)
        self.drawn = 0.0
