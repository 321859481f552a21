"""Is the warm-up or the arithmetic the cause? GRPO, CISPO and SAPO trained under THIS process's
arithmetic (the book's, from .venv) from the claims run's SFT warm-up 1 (trained under the other
arithmetic: its file in the model cache), on the ten seeds of warm-up 1.

    .venv/bin/python drafts/part3/warmup_cause.py      # ≈ 12 min on two cores

(2026-12-05: GRPO final 0.9224, each run's largest ratio median 8.61, max 22.63; CISPO − GRPO
+0.0088 ± 0.0043, SAPO − GRPO +0.0096 ± 0.0038, ± s.e. over the 10 seeds.)
"""
import multiprocessing

import numpy as np

from toy.metrics import mean_se
from toy.tinylm import SFTConfig, variants
from toy.record.cache import cache_dir, config_hash
from toy.tinylm.many import train_rl_many
from toy.record.models import load_model

WARMUP = 1
SEEDS = list(range(WARMUP, variants.N_SEEDS, variants.WARMUPS))      # the race's seeds on that warm-up
ARMS = ("GRPO", "CISPO", "SAPO")


def other_warmup():
    """The cached SFT model of warm-up ``WARMUP`` trained under another arithmetic than this one."""
    own = f"tinylm-sft-{config_hash(SFTConfig(seed=WARMUP))}.npz"
    for path in sorted(cache_dir().glob("tinylm-sft-*.npz")):
        model, meta = load_model(path)
        if path.name != own and meta["sft_config"]["seed"] == WARMUP:
            return model
    raise SystemExit(f"no warm-up {WARMUP} of another arithmetic in {cache_dir()}: "
                     'run make claims NB="drafts/part3/s08_loss_variants.ipynb" first')


def final_and_ratios(name):
    runs = train_rl_many(START, [variants.race_configs()[name]] * len(SEEDS), SEEDS, progress=False)
    return (name, np.array([np.mean(h["accuracy"][-10:]) for _, h in runs]),
            np.array([np.nanmax(np.asarray(h["ratio_max"], float)) for _, h in runs]))


if __name__ == "__main__":
    START = other_warmup()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        out = {name: (final, rmax) for name, final, rmax in pool.imap_unordered(final_and_ratios, ARMS)}
    for name in ARMS:
        final, rmax = out[name]
        print(f"{name}: final {final.mean():.4f}, each run's largest ratio median {np.median(rmax):.2f}, "
              f"max {rmax.max():.2f}")
    for name in ARMS[1:]:
        print(f"{name} − GRPO final: %+.4f ± %.4f" % mean_se(out[name][0] - out["GRPO"][0]))
