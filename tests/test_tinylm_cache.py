"""Tests of toy.tinylm.cache: the round trip, rebuilding a bad file, shareable files, an
unusable cache directory, the cache key (the code training imports, a code change), RL runs."""
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from toy.tinylm import cache
from toy.tinylm import model as M
from toy.tinylm import train as T

TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


def test_cache_roundtrip_and_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    cfg = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    m1 = cache.warmup_model(cfg, verbose=False)
    files = list(tmp_path.glob("tinylm-sft-*.npz"))
    assert len(files) == 1 and cache.config_hash(cfg) in files[0].name
    m2 = cache.warmup_model(cfg, verbose=False)              # loaded, identical
    for k, v in m1.state_dict().items():
        np.testing.assert_array_equal(v, m2.state_dict()[k])
    data = files[0].read_bytes()
    files[0].write_bytes(data[: len(data) // 2])             # truncated → rebuilt
    with pytest.raises(ValueError, match="cannot read"):
        cache.load_model(files[0])
    m3 = cache.warmup_model(cfg, verbose=False)
    for k, v in m1.state_dict().items():
        np.testing.assert_array_equal(v, m3.state_dict()[k])  # deterministic rebuild
    files[0].write_bytes(b"garbage")                          # corrupt → rebuilt
    cache.warmup_model(cfg, verbose=False)
    cache.load_model(files[0])
    assert not list(tmp_path.glob("*.tmp"))                   # no temp files left behind
    assert cache.config_hash(cfg) != cache.config_hash(T.SFTConfig(model=TINY, steps=3, batch_size=4))


def test_cache_files_are_shareable(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path / "new" / "dir"))   # created on first save
    cache.warmup_model(T.SFTConfig(model=TINY, steps=2, batch_size=4), verbose=False)
    (f,) = (tmp_path / "new" / "dir").glob("*.npz")
    assert f.stat().st_mode & 0o777 == 0o644


def test_unusable_cache_dir_warns_once_and_keeps_the_model(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TOY_CACHE_DIR", str(blocker))
    monkeypatch.setattr(cache, "_memory", {})
    monkeypatch.setattr(cache, "_warned", set())
    cfg = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    calls = []
    real = cache.train_sft
    monkeypatch.setattr(cache, "train_sft", lambda c, **kw: calls.append(c) or real(c, **kw))
    with pytest.warns(RuntimeWarning, match="not usable"):
        m1 = cache.warmup_model(cfg, verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # no second warning
        m2 = cache.warmup_model(cfg, verbose=False)          # from memory, not retrained
        p, h = cache.cached_train_rl(T.RLConfig(steps=1, n_prompts=2, G=2), sft_cfg=cfg,
                                     verbose=False)
        p2, h2 = cache.cached_train_rl(T.RLConfig(steps=1, n_prompts=2, G=2), sft_cfg=cfg,
                                       verbose=False)
    assert len(calls) == 1 and blocker.read_text() == "not a directory"
    for k, v in m1.state_dict().items():
        np.testing.assert_array_equal(v, m2.state_dict()[k])
    np.testing.assert_array_equal(h["loss"], h2["loss"])


def test_code_files_are_what_training_imports():
    """The cache key covers every toy module that a fresh interpreter loads for training."""
    out = subprocess.run([sys.executable, "-c", "import sys, toy.tinylm.train, toy.tinylm.cache; "
                          "print('\\n'.join(sorted(m.__file__ for n, m in sys.modules.items() "
                          "if n == 'toy' or n.startswith('toy.'))))"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert sorted(str(f) for f in cache.code_files()) == sorted(str(Path(f).resolve()) for f in out)


def test_code_change_changes_the_cache_key(tmp_path):
    """A one-line change to the SFT schedule gives another key (so a warm cache cannot hide it)."""
    src = Path(cache.__file__).resolve().parent.parent
    shutil.copytree(src, tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    script = ("from toy.tinylm import cache, train; print(cache.config_hash(train.SFTConfig()))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    key = lambda: subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                                 capture_output=True, text=True, check=True).stdout.strip()
    before = key()
    assert before == cache.config_hash(T.SFTConfig())        # the copy hashes like the original
    train_py = tmp_path / "toy" / "tinylm" / "train.py"
    text = train_py.read_text()
    assert "def _lr_at" in text
    train_py.write_text(text + "\n_ONE_MORE_LINE = 0.2\n")
    assert key() != before


def test_cached_rl_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    sft_cfg = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    rl_cfg = T.RLConfig(steps=2, n_prompts=2, G=2)
    p1, h1 = cache.cached_train_rl(rl_cfg, seed=0, sft_cfg=sft_cfg, verbose=False)
    p2, h2 = cache.cached_train_rl(rl_cfg, seed=0, sft_cfg=sft_cfg, verbose=False)   # from disk
    np.testing.assert_array_equal(h1["accuracy"], h2["accuracy"])
    for k, v in p1.state_dict().items():
        np.testing.assert_array_equal(v, p2.state_dict()[k])


@pytest.mark.parametrize("max_stack, processes", [(1, 2), (8, 1), (8, 2)])
def test_cached_runs_trained_in_parallel_equal_one_after_another(tmp_path, monkeypatch, max_stack, processes):
    """cached_train_rl_many trains the missing runs in two processes (one run a stack, or
    stacks of several); each result must equal train_rl run here, in this process, bit for bit
    (and a run listed twice is trained once)."""
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "MAX_STACK", max_stack)
    sft_cfg = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    runs = [(T.RLConfig(steps=3, n_prompts=2, G=2), 0), (T.RLConfig(algo="rft", steps=3, n_prompts=2, G=2), 1),
            (T.RLConfig(steps=3, n_prompts=2, G=2, beta=0.1), 2), (T.RLConfig(steps=3, n_prompts=2, G=2), 0)]
    got = cache.cached_train_rl_many(runs, sft_cfg=sft_cfg, processes=processes)
    assert len(list(tmp_path.glob("tinylm-rl-*.npz"))) == 3
    sft = cache.warmup_model(sft_cfg, verbose=False)
    for (cfg, seed), (policy, hist) in zip(runs, got):
        want_policy, want_hist = T.train_rl(sft, cfg, seed=seed)
        for k, v in want_hist.items():
            if k != "time":                                   # wall-clock seconds
                np.testing.assert_array_equal(np.asarray(v, dtype=float), hist[k], err_msg=k)
        for k, v in want_policy.state_dict().items():
            np.testing.assert_array_equal(v, policy.state_dict()[k], err_msg=k)
    with pytest.raises(ValueError, match="^runs"):
        cache.cached_train_rl_many([("grpo", 0)], sft_cfg=sft_cfg)


def test_the_arithmetic_is_part_of_the_cache_key(monkeypatch):
    """The same config and code under another arithmetic (BLAS kernels, SIMD) gives another key:
    a shared cache never hands a model trained with other kernels to a reference run."""
    from toy import arithmetic
    cfg = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    here = cache.config_hash(cfg)
    monkeypatch.setattr(cache, "fingerprint", lambda: arithmetic.fingerprint().replace("Haswell", "SkylakeX") + " other")
    assert cache.config_hash(cfg) != here
    monkeypatch.setattr(cache, "fingerprint", arithmetic.fingerprint)
    assert cache.config_hash(cfg) == here


def test_a_file_copied_under_another_keys_name_does_not_load(tmp_path, monkeypatch, capsys):
    """A cache file holds its key and configs: copied (or renamed) under the name of another
    config's key, it is rebuilt, not loaded as that model (SFT and RL files alike)."""
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    a, b = T.SFTConfig(model=TINY, steps=2, batch_size=4), T.SFTConfig(model=TINY, steps=3, batch_size=4)
    ma = cache.warmup_model(a, verbose=False)
    (fa,) = tmp_path.glob("tinylm-sft-*.npz")
    fb = tmp_path / f"tinylm-sft-{cache.config_hash(b)}.npz"
    shutil.copy(fa, fb)                                        # a's model under b's name
    mb = cache.warmup_model(b, verbose=True)
    assert "holds another model" in capsys.readouterr().out
    want, _ = T.train_sft(b)
    for k, v in want.state_dict().items():
        np.testing.assert_array_equal(mb.state_dict()[k], v, err_msg=k)
    assert not all(np.array_equal(v, ma.state_dict()[k]) for k, v in mb.state_dict().items())
    m2 = cache.warmup_model(b, verbose=False)                  # the rebuilt file now loads
    for k, v in want.state_dict().items():
        np.testing.assert_array_equal(m2.state_dict()[k], v, err_msg=k)
    # an RL run: a 2-step run's file under the name of a 3-step run (other key, other history)
    rl2, rl3 = T.RLConfig(steps=2, n_prompts=2, G=2), T.RLConfig(steps=3, n_prompts=2, G=2)
    _, h2 = cache.cached_train_rl(rl2, seed=0, sft_cfg=a, verbose=False)
    shutil.copy(tmp_path / cache._rl_name(rl2, a, 0), tmp_path / cache._rl_name(rl3, a, 0))
    _, h3 = cache.cached_train_rl(rl3, seed=0, sft_cfg=a, verbose=False)
    assert len(h2["accuracy"]) == 2 and len(h3["accuracy"]) == 3


def test_jobs_group_runs_by_shape_and_cap_the_stack(monkeypatch):
    """cached_train_rl_many's jobs: each run once, runs of one job share ``shape_key``, no job
    holds more than MAX_STACK runs, and a group is split over both processes."""
    todo = ([(f"g{i}", T.RLConfig(), i) for i in range(19)]
            + [(f"p{i}", T.RLConfig(algo="ppo", steps=25, mu=8), i) for i in range(3)])
    jobs = cache._chunks(todo, 2)
    assert sorted(name for job in jobs for name, _, _ in job) == sorted(name for name, _, _ in todo)
    assert all(len({T.shape_key(c) for _, c, _ in job}) == 1 for job in jobs)
    assert max(len(job) for job in jobs) <= cache.MAX_STACK
    assert sum(1 for job in jobs if job[0][1].algo == "ppo") >= 2     # 3 PPO runs: both processes
    monkeypatch.setattr(cache, "MAX_STACK", 8)                          # bigger stacks: still every run once
    jobs = cache._chunks(todo, 2)
    assert sorted(name for job in jobs for name, _, _ in job) == sorted(name for name, _, _ in todo)
    assert max(len(job) for job in jobs) <= 8 and len(jobs) % 2 == 0
