"""§III.8's race on the book's arithmetic and on the claims check's, warm-up by warm-up.

Why the race's claims check failed (drafts/README.md): under the other arithmetic the three
warm-ups are another draw, and on one of them GRPO goes far off-policy. This prints, for each
arithmetic, every arm's paired difference to GRPO (final = last 10 steps, speed = all 100 steps;
± s.e. over the 30 seeds, w = s.e. over the 3 warm-ups' mean differences), then each warm-up's
GRPO final accuracy and largest ratios and the off-policy knobs' final difference per warm-up.

    .venv/bin/python drafts/part3/claims_by_warmup.py

The book's runs are read from evidence/ (seconds). The other arithmetic's are read from the
model cache that `make claims NB=".../s08_loss_variants.ipynb"` filled (~/.cache/rl-by-hand or
$TOY_CACHE_DIR); where that cache is empty this trains all 420 runs (≈ 2 h on two cores).
"""
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PY = ROOT / ".venv" / "bin" / "python"
OTHER = {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
         "RL_BY_HAND_EVIDENCE": "off", "RL_BY_HAND_CLAIMS": "1"}
KEYS = ("accuracy", "ratio_max")


def load(out):
    """(in a child process, so that the arithmetic is set before numpy is imported)"""
    from toy import tinylm
    from toy.tinylm import variants
    tinylm.use_record(os.environ.get("RL_BY_HAND_EVIDENCE") != "off")
    runs = {**variants.race(), **variants.race(controls=True)}
    pickle.dump({n: {k: h[k] for k in KEYS} for n, (_, h) in runs.items()}, open(out, "wb"))


def report(worlds):
    import numpy as np
    from toy.metrics import mean_se, warmup_se

    def paired(a, b):
        d = a - b
        return (*mean_se(d), warmup_se(d, 3))
    final = {w: {n: h["accuracy"][:, -10:].mean(1) for n, h in runs.items()} for w, runs in worlds.items()}
    speed = {w: {n: h["accuracy"].mean(1) for n, h in runs.items()} for w, runs in worlds.items()}
    for what, m in (("final", final), ("speed", speed)):
        print(f"\n{what}: arm − GRPO, ± s.e. over seeds (w over warm-ups)")
        for n in worlds["book"]:
            print(f"  {n:36s}" + "".join(f"  {w}: %+.4f ± %.4f (w %.4f)" % paired(m[w][n], m[w]["GRPO"]) for w in worlds))
    for w, runs in worlds.items():
        print(f"\n{w}: per warm-up")
        g = runs["GRPO"]
        for k in range(3):
            rmax = np.nanmax(g["ratio_max"][k::3], axis=1)
            print(f"  warm-up {k}: GRPO final {final[w]['GRPO'][k::3].mean():.4f}, each run's largest ratio: "
                  f"median {np.median(rmax):.2f}, max {rmax.max():.2f}")
        for n in ("CISPO", "SAPO", "GSPO, clip 0.2", "CISPO, cap 0.2", "DAPO token mean", "BNPO", "no ÷σ"):
            d = final[w][n] - final[w]["GRPO"]
            print(f"    {n:16s} final − GRPO per warm-up: " +
                  "  ".join("%+.4f ± %.4f" % mean_se(d[k::3]) for k in range(3)))


if __name__ == "__main__":
    if len(sys.argv) == 2:
        load(sys.argv[1])
        sys.exit()
    worlds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, env in (("book", {}), ("other", OTHER)):
            out = os.path.join(tmp, name + ".pkl")
            subprocess.run([str(PY), __file__, out], env={**os.environ, **env}, check=True, cwd=ROOT)
            worlds[name] = pickle.load(open(out, "rb"))
    report(worlds)
