"""Each notebook, executed afresh under this machine's arithmetic, keeps the book's claims
(``scripts/claims.py``: deterministic cells exactly, glued numbers within their spread, ledger
verdicts equal). The notebooks come from ``$CLAIMS_NOTEBOOKS`` (the Makefile's order) or all."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import claims  # noqa: E402

NOTEBOOKS = os.environ.get("CLAIMS_NOTEBOOKS", "").split() or \
    [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("notebooks/part*/*.ipynb"))]


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_claims_hold(notebook, record_property):
    record_property("digest", claims.digest(ROOT / notebook))    # what is checked, as the check starts
    problems = claims.check(ROOT / notebook)
    assert not problems, "\n".join(problems)
