"""The numbers do not depend on how many BLAS threads the machine offers (``toy._blas`` pins one in
every process that imports ``toy``): the same SFT warm-up and RL run, trained in fresh interpreters
started with one and with two BLAS/OpenMP threads, end at the same parameters, bit for bit. (CI
once ran the whole unit suite a second time with one thread to show this; this test shows it
directly, in seconds.)"""
import os
import subprocess
import sys

SCRIPT = """
from toy.record.keys import params_sha256
from toy.tinylm import many, model as M, train as T
import numpy as np
tiny = M.ModelConfig(n_layer=1, n_head=2, n_embd=16, mlp_hidden=24)
sft, _ = T.train_sft(T.SFTConfig(model=tiny, steps=20, batch_size=8), progress=False)
policy, hist = many.train_rl_many(sft, [T.RLConfig(steps=3, n_prompts=4, G=4, mu=2)], [0], progress=False)[0]
a = np.random.default_rng(0).standard_normal((300, 300))
print(params_sha256(sft), params_sha256(policy), np.float64((a @ a).sum()).hex())
"""


def hashes(threads):
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          check=True).stdout.split()


def test_one_and_two_blas_threads_give_the_same_parameters():
    one, two = hashes(1), hashes(2)
    assert len(one) == 3 and one == two
