"""Tests of toy.tinylm.cache: the round trip, rebuilding a bad file, shareable files, an
unusable cache directory, the cache key (the code training imports, a code change), RL runs."""
import shutil
import warnings

import numpy as np
import pytest

from toy.record import cache
from toy.tinylm import model as M
from toy.tinylm import many as MANY, train as T

TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


def _alone(model, cfg, seed=0, reward_fn=None):
    """One run through the loop every cached and recorded run goes through (``many.train_rl_many``)."""
    return MANY.train_rl_many(model, [cfg], [seed], reward_fns=[reward_fn], progress=False)[0]


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
        want_policy, want_hist = _alone(sft, cfg, seed=seed)
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
    from toy import machine as arithmetic
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
    shutil.copy(tmp_path / cache.Run(rl2, 0, a).name(), tmp_path / cache.Run(rl3, 0, a).name())
    _, h3 = cache.cached_train_rl(rl3, seed=0, sft_cfg=a, verbose=False)
    assert len(h2["accuracy"]) == 2 and len(h3["accuracy"]) == 3


def test_jobs_group_runs_by_shape_and_cap_the_stack(monkeypatch):
    """cached_train_rl_many's jobs: each run once, runs of one job share ``shape_key``, no job
    holds more than MAX_STACK runs, and a group is split over both processes."""
    todo = ([cache.Run(T.RLConfig(), i, T.SFTConfig()) for i in range(19)]
            + [cache.Run(T.RLConfig(algo="ppo", steps=25, mu=8), i, T.SFTConfig()) for i in range(3)])
    names = sorted(r.name() for r in todo)
    jobs = cache._chunks(todo, 2)
    assert sorted(r.name() for job in jobs for r in job) == names
    assert all(len({MANY.shape_key(r.cfg) for r in job}) == 1 for job in jobs)
    assert max(len(job) for job in jobs) <= cache.MAX_STACK
    assert sum(1 for job in jobs if job[0].cfg.algo == "ppo") >= 2     # 3 PPO runs: both processes
    monkeypatch.setattr(cache, "MAX_STACK", 8)                          # bigger stacks: still every run once
    jobs = cache._chunks(todo, 2)
    assert sorted(r.name() for job in jobs for r in job) == names
    assert max(len(job) for job in jobs) <= 8 and len(jobs) % 2 == 0


def _first_right(ans, digits):
    """A reward for the test: the verifier's, only on answers whose first token is '['."""
    from toy.tinylm import task
    v = task.verify_tokens(ans, digits)
    return v["reward"] * v["think"]


def _assert_same_run(got, want):
    (p1, h1), (p2, h2) = got, want
    for k, v in h2.items():
        if k != "time":
            np.testing.assert_array_equal(np.asarray(v, dtype=float), np.asarray(h1[k], dtype=float), err_msg=k)
    for k, v in p2.state_dict().items():
        np.testing.assert_array_equal(v, p1.state_dict()[k], err_msg=k)


def test_seeds_over_warmups_start_each_seed_from_its_warmup(tmp_path, monkeypatch):
    """``warmups=3``: seed s starts from the warm-up of SFT seed ``s % 3`` (a naive loop here:
    train_sft with that seed, then train_rl); histories are (seeds, steps); ``warmups=1`` is one
    warm-up for all; ``train_rl_seeds`` with a list of warm-ups does the same uncached."""
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    from dataclasses import replace
    base = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    rl_cfg = T.RLConfig(steps=3, n_prompts=2, G=2)
    seeds = [0, 4, 5]
    policies, hist = cache.cached_train_rl_seeds(rl_cfg, seeds, sft_cfg=base, warmups=3)
    assert hist["accuracy"].shape == (3, 3) and len(policies) == 3
    sfts = [T.train_sft(replace(base, seed=w))[0] for w in range(3)]
    for i, s in enumerate(seeds):
        want = _alone(sfts[s % 3], rl_cfg, seed=s)
        _assert_same_run((policies[i], {k: v[i] for k, v in hist.items()}), want)
    # seed 4 with warmups=3 is cached_train_rl from SFTConfig(seed=1): the same file
    _assert_same_run(cache.cached_train_rl(rl_cfg, seed=4, sft_cfg=replace(base, seed=1), verbose=False),
                     (policies[1], {k: v[1] for k, v in hist.items()}))
    assert len(list(tmp_path.glob("tinylm-sft-*.npz"))) == 3
    # warmups=1: every seed from ``base``
    _, h1 = cache.cached_train_rl_seeds(rl_cfg, seeds, sft_cfg=base)
    for i, s in enumerate(seeds):
        np.testing.assert_array_equal(h1["accuracy"][i], _alone(sfts[0], rl_cfg, seed=s)[1]["accuracy"])
    # uncached: a list of warm-up models
    pols, h2 = MANY.train_rl_seeds(sfts, rl_cfg, seeds)
    for k in ("accuracy", "think_share", "loss"):
        np.testing.assert_array_equal(h2[k], hist[k], err_msg=k)
    assert [c.seed for c in cache.warmup_configs(range(10), 3)] == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    for bad in (0, -1, 1.5, "3"):
        with pytest.raises(ValueError, match="warmups"):
            cache.cached_train_rl_seeds(rl_cfg, seeds, sft_cfg=base, warmups=bad)
    with pytest.raises(ValueError, match="^policy"):
        MANY.train_rl_seeds([], rl_cfg, seeds)


def test_a_reward_fn_run_is_cached_under_its_source(tmp_path, monkeypatch):
    """A run trained on a ``reward_fn`` is cached under a key that holds the function's source:
    it equals train_rl with that reward, loads back from disk, and is not the verifier's run."""
    monkeypatch.setenv("TOY_CACHE_DIR", str(tmp_path))
    base = T.SFTConfig(model=TINY, steps=2, batch_size=4)
    rl_cfg = T.RLConfig(algo="rft", steps=3, n_prompts=4, G=4)
    _, h = cache.cached_train_rl_seeds(rl_cfg, [0, 1], sft_cfg=base, reward_fn=_first_right)
    sft = T.train_sft(base)[0]
    for i in (0, 1):
        want = _alone(sft, rl_cfg, seed=i, reward_fn=_first_right)[1]
        np.testing.assert_array_equal(h["loss"][i], want["loss"])
    assert len(list(tmp_path.glob("tinylm-rl-*.npz"))) == 2
    _, h_again = cache.cached_train_rl_seeds(rl_cfg, [0, 1], sft_cfg=base, reward_fn=_first_right)
    np.testing.assert_array_equal(h_again["loss"], h["loss"])
    assert cache.Run(rl_cfg, 0, base, _first_right).name() != cache.Run(rl_cfg, 0, base).name()
    _, h_plain = cache.cached_train_rl_seeds(rl_cfg, [0, 1], sft_cfg=base)
    assert len(list(tmp_path.glob("tinylm-rl-*.npz"))) == 4
    np.testing.assert_array_equal(h_plain["loss"][0], _alone(sft, rl_cfg, seed=0)[1]["loss"])
    with pytest.raises(ValueError, match="reward_fn"):
        cache.cached_train_rl_seeds(rl_cfg, [0], sft_cfg=base, reward_fn=3)
    with pytest.raises(ValueError, match="reward_fn"):
        cache.cached_train_rl_seeds(rl_cfg, [0], sft_cfg=base, reward_fn=max)       # a builtin: no source
