"""Claims mode (``scripts/claims.py``) runs only when asked: ``make claims``, or ``make nbval`` on
a machine off the reference arithmetic. ``make unit`` (``pytest tests``) skips this folder."""
import os

if not os.environ.get("RL_BY_HAND_CLAIMS"):
    collect_ignore_glob = ["test_*.py"]
