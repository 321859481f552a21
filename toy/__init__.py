"""toy: the numpy package behind *RL for Reasoning, by Hand*.

Modules (each does one thing):

- ``toy.rl``       the course's equations (advantages, clipping, loss aggregation, KL estimators, ...)
- ``toy.metrics``  pass@k, maj@k, entropy
- ``toy.prob``     sigmoid / softmax / sampling helpers
- ``toy.bandit``   the two-armed bandit of Part I §8
- ``toy.numsearch``, ``toy.numsearch_train``   Number Search and its trainers (Part I)
- ``toy.arith``, ``toy.arith_train``, ``toy.arith_variant``   the arithmetic toy LLM (Part II)
- ``toy.length_toy`` a policy whose answer length never changes its reward (Part III §4)
- ``toy.tinylm``   the ~70k-parameter thinking model (Part III): task, model, training, evals, cache
- ``toy.plots``    the book's plotting style and figure helpers
- ``toy.widgets``  one slider helper that works live (ipywidgets) and static (scrubber)
- ``toy.check``    exercise checkers: ``toy.check.<exercise>(answer)``
- ``toy.show``     show a toy function's source in a notebook
- ``toy.glue``     glue computed numbers for the prose, rounded to what the prose shows
"""
from ._blas import one_blas_thread

one_blas_thread()           # outputs identical at any number of BLAS threads (see toy._blas)

from . import metrics, prob, rl  # noqa: E402,F401
from .prose import glue  # noqa: E402,F401
from .source import show  # noqa: E402,F401

__version__ = "0.1.0"
