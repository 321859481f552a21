"""Moved to :mod:`toy.numsearch.train`. Kept only for the Part III notebooks that still import
``mean_se`` and ``group_update_size`` from here; remove once they import ``toy.metrics.mean_se`` and
``toy.numsearch.train.group_update_size``."""
from .metrics import mean_se  # noqa: F401
from .numsearch.train import group_update_size  # noqa: F401
