"""The book's seeds, and the fresh set on which its ledgers' verdicts are replicated.

Every experiment a ledger decides runs on the book's seeds (``seeds(10)`` is ``range(10)``; the SFT
warm-ups have seeds 0, 1, 2). With ``RL_BY_HAND_SEEDS=fresh`` (``make fresh``) the same code runs
on a disjoint set: RL seeds from ``FRESH_BASE`` on and warm-ups ``FRESH_BASE + 0, 1, 2``, so that a
verdict is tested on runs and warm-ups the book never used. The ledger keeps the fresh verdicts
(``toy.ledger.Ledger.fresh_seeds``) and shows, row by row, whether the book's verdict replicated.
"""
import hashlib
import json
import os
from pathlib import Path

FRESH_BASE = 1000
ENV = "RL_BY_HAND_SEEDS"

__all__ = ["FRESH_BASE", "fresh", "base", "seeds", "warmup", "fresh_file", "seal", "sealed"]


def fresh():
    """True when this process runs on the fresh seeds (``RL_BY_HAND_SEEDS=fresh``)."""
    value = os.environ.get(ENV, "book")
    if value not in ("book", "fresh"):
        raise ValueError(f"{ENV} must be 'book' or 'fresh', got {value!r}")
    return value == "fresh"


def base():
    """The first seed of the set in use: 0 (the book's) or ``FRESH_BASE``."""
    return FRESH_BASE if fresh() else 0


def seeds(n):
    """``n`` RL seeds of the set in use: ``range(n)``, or ``range(FRESH_BASE, FRESH_BASE + n)``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return range(base(), base() + n)


def warmup(w):
    """The SFT seed of warm-up ``w`` (0, 1, 2, ...) in the set in use: seed ``s`` of ``seeds`` starts
    from warm-up ``s % W`` (``toy.tinylm.warmup_configs``)."""
    if isinstance(w, bool) or not isinstance(w, int) or w < 0:
        raise ValueError(f"w must be an integer >= 0, got {w!r}")
    return base() + w


def fresh_file(name):
    """Where the fresh verdicts of ledger ``name`` are kept: ``evidence/fresh/<name>.json``
    (``$TOY_FRESH_DIR/<name>.json`` where set: ``make evidence-check`` derives them again there)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a short identifier, got {name!r}")
    if os.environ.get("TOY_FRESH_DIR"):
        return Path(os.environ["TOY_FRESH_DIR"]) / f"{name}.json"
    root = Path(os.environ.get("TOY_EVIDENCE_DIR") or Path(__file__).resolve().parent.parent / "evidence")
    return root / "fresh" / f"{name}.json"


def seal(data):
    """``data`` (a fresh-verdict file's content) with its ``seal``: a sha256 over the rest, against a
    hand edit (what proves the verdicts is deriving them again: ``make evidence-check``)."""
    body = {k: v for k, v in data.items() if k != "seal"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return {**body, "seal": hashlib.sha256(text.encode()).hexdigest()}


def sealed(data):
    """True if ``data`` carries the seal of its content."""
    return isinstance(data, dict) and data.get("seal") == seal(data)["seal"]


def write_json(path, data):
    """Write ``data`` as JSON atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
