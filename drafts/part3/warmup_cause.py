"""Is the warm-up or the arithmetic the cause? GRPO, CISPO and SAPO trained under THIS process's
arithmetic (the book's, from .venv) from the claims run's SFT warm-up 1 (trained under the other
arithmetic: its file in the model cache), on the ten seeds of warm-up 1.

    .venv/bin/python drafts/part3/warmup_cause.py /tmp/out.pkl      # ≈ 12 min on two cores

(2026-12-05: GRPO final 0.9224, each run's largest ratio median 8.61, max 22.63; CISPO − GRPO
+0.0088 ± 0.0043, SAPO − GRPO +0.0096 ± 0.0038, ± s.e. over the 10 seeds.)
"""
import glob, os, sys, time, pickle, multiprocessing as mp
import numpy as np
from toy.tinylm.store import load_model
from toy.tinylm.many import train_rl_many
from toy.tinylm import variants

def find_warmup(seed):
    for f in glob.glob(os.path.expanduser('~/.cache/rl-by-hand/tinylm-sft-*.npz')):
        m, meta = load_model(f)
        if meta['sft_config']['seed'] == seed:
            return f, m
f, WARM = find_warmup(int(os.environ.get('WARMUP', 1)))
CFG = variants.race_configs()
SEEDS = list(range(1, 30, 3))

def job(name):
    t = time.time()
    res = train_rl_many(WARM, [CFG[name]] * len(SEEDS), SEEDS, progress=False)
    acc = np.array([h['accuracy'] for _, h in res]); rmax = np.array([h['ratio_max'] for _, h in res])
    return name, acc, rmax, time.time() - t

if __name__ == '__main__':
    print(f, flush=True)
    out = {}
    with mp.get_context('fork').Pool(2) as p:
        for name, acc, rmax, dt in p.imap_unordered(job, ['GRPO', 'CISPO', 'SAPO']):
            out[name] = (acc, rmax)
            print(name, 'final %.4f' % acc[:, -10:].mean(), 'run max ratio median %.2f max %.2f' % (np.median(np.nanmax(rmax, 1)), np.nanmax(rmax)), '%.0f s' % dt, flush=True)
            pickle.dump(out, open(sys.argv[1], 'wb'))
    g = out['GRPO'][0][:, -10:].mean(1)
    for n in ('CISPO', 'SAPO'):
        d = out[n][0][:, -10:].mean(1) - g
        print(n, '− GRPO final: %+.4f ± %.4f' % (d.mean(), d.std(ddof=1) / np.sqrt(len(d))))
