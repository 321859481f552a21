"""Which way ``make test`` checks the notebooks on this machine, and why.

    python scripts/arith_mode.py          # a sentence for the log
    python scripts/arith_mode.py --mode   # "reference" (nbval, every digit) or "claims"

"reference": this process computes with the book's reference arithmetic (``toy.numerics()``), so
nbval compares every output digit for digit. "claims": it cannot (another CPU family, OS or
BLAS), so ``scripts/claims.py`` checks what the book claims instead: deterministic cells exactly,
glued experimental numbers within their spread, ledger verdicts equal.
"""
import sys

import toy  # noqa: F401  (import warnings are the point of claims mode, not of this line)
from toy import machine as arithmetic

if sys.argv[1:] == ["--mode"]:
    print(arithmetic.mode())
else:
    m = arithmetic.mode()
    print(f"make test: {m} mode. " + (
        "nbval compares every output digit for digit. " if m == "reference" else
        "The committed digits of sampled training cannot be reproduced here; checking the book's "
        "claims instead (scripts/claims.py): deterministic cells exactly, glued numbers within "
        "their spread, ledger verdicts equal. ") + arithmetic.explain())
