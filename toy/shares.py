r"""A share pooled over seeds and its standard error (``ratio_se``): e.g. the part of the runs'
gap lost at one guess, of the whole gap (Part I's ledger).

Kept apart from :mod:`toy.metrics` on purpose: the evidence record keys each measurement of a
Part III run by the source files the measuring function imports (``toy.metrics`` among them), so
a new statistic there would leave every recorded measurement stale."""
import numpy as np

from ._check_args import as_array, checked
from .metrics import se

__all__ = ["ratio_se"]


def _check_ratio_se(num, den):
    num = as_array(num, "num")
    if num.ndim != 1 or len(num) < 2:
        raise ValueError(f"num must be one value per seed, at least 2 seeds (1-D), got shape {num.shape}")
    den = as_array(den, "den")
    if den.shape != num.shape:
        raise ValueError(f"den must have the shape of num {num.shape}, got {den.shape}")
    if not den.sum() > 0:
        raise ValueError(f"den must have a positive sum (the whole the share is of), got {den.sum()}")
    return {"num": num, "den": den}


@checked(_check_ratio_se)
def ratio_se(num, den):
    r"""A share pooled over K seeds, :math:`\hat r = \sum_k n_k / \sum_k d_k` (e.g. the part of the
    runs' gap lost at one guess, of the whole gap), and its standard error by the delta method,

    .. math:: \mathrm{se}(\hat r) = \frac{1}{\bar d}\sqrt{\frac{\sum_k (n_k - \hat r\, d_k)^2}{K (K - 1)}}

    (the s.e. of the mean of :math:`n_k - \hat r d_k`, divided by the mean whole). Returns
    ``(share, se)``."""
    n, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    r = n.sum() / d.sum()
    return r, se(n - r * d) / d.mean()
