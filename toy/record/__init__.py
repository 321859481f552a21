"""The book's record of its heavier runs, and how it is proved: everything here is bookkeeping, kept
apart from the models and trainers it records (``toy.tinylm`` holds the tiny model and its training
alone).

- ``keys``      what keys a record: its spec (config fields at their defaults left out), the training
                code as code (``codehash``: syntax trees of what a run reaches), the arithmetic; a
                digest of its numbers; its seal
- ``evidence``  the record itself (``evidence/`` at the repository's root): read, written, measured
- ``cache``     the local model cache, and ``cached_train_rl_seeds`` and friends, which serve a run
                from the record, else the cache, else train it (``toy.tinylm`` re-exports them)
- ``models``    a model on disk (atomic writes, read without pickle)
- ``history``   what the git history says must be trained again, and the rotation that reaches
                every record once in 20 commits (``make evidence-check``)
- ``engine``    independent runs on every core or on a Dask cluster, through joblib

The commands are ``make evidence`` (prove a refactor, re-key, re-train what is stale) and
``make evidence-check`` (``scripts/evidence.py``); CONTRIBUTING.md says how the record works.
"""
