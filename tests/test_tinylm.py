"""Tests of toy.tinylm: the verifier, the loss weights, training, the disk cache (the model's
tests are in test_tinylm_model.py)."""
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from toy import rl
from toy.tinylm import cache, task
from toy.tinylm import model as M
from toy.tinylm import train as T
from toy.tinylm.evals import evaluate, pass_at_k_curve, thinking_budget

# a tiny model (~2k parameters) keeps finite differences fast; init_std 0.5 makes every path matter
TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


# ----------------------------------------------------------------------------- the task
def test_verifier_on_hand_made_strings():
    d = [9, 4, 5, 8, 0, 7, 3, 0, 2, 1]                       # sum 39 → 9
    assert task.verify("#9$", d) == 1.0
    assert task.verify("[9386636689]#9$", d) == 1.0         # the lecture's example chain
    assert task.verify("[0000000000]#9$", d) == 1.0         # only the final digit is rewarded
    assert task.verify("#9$$$$", d) == 1.0                  # padding after '$' is ignored
    for wrong in ("#8$", "[9386636689]#8$"):
        assert task.verify(wrong, d) == 0.0
    for bad in ("", "9", "#9", "#$", "#99$", "[938663668]#9$", "[93866366899]#9$", "[9386636689#9$",
                "9386636689]#9$", "[938663668a]#9$", "[9386636689]9$", "=#9$", "$#9$", None, 9):
        assert task.verify(bad, d) == 0.0, bad


def test_parse_and_chain():
    assert task.parse_answer("[9386636689]#9$") == ("think", 9, "9386636689")
    assert task.parse_answer("#3$") == ("direct", 3, None)
    assert task.parse_answer("#3") == ("malformed", None, None)
    d = np.array([[9, 4, 5, 8, 0, 7, 3, 0, 2, 1]])
    assert "".join(map(str, task.running_sums(d)[0])) == "9386636689"
    v = task.verify_batch(["[9386636689]#9$", "[9386636680]#0$", "#9$", "xx"], np.repeat(d, 4, 0))
    assert v["reward"].tolist() == [1, 0, 1, 0]
    assert v["chain_ok"].tolist() == [1, 0, 0, 0]
    assert v["think"].tolist() == [1, 1, 0, 0]
    assert v["length"].tolist() == [15, 15, 3, 2]


def test_verify_tokens_matches_verify_batch():
    """The vectorised verifier against the string one, on teacher, near-miss and random answers."""
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(600, rng)
    good = task.teacher_answers(digits[:200], rng)
    near = [a[:-1] + "#" if i % 3 == 0 else a.replace("]", "0", 1) if i % 3 == 1 else "[" + a
            for i, a in enumerate(task.teacher_answers(digits[200:400], rng))]
    rand = ["".join(rng.choice(list(task.VOCAB), size=rng.integers(1, 17))) for _ in range(200)]
    answers = good + near + rand
    L = max(len(a) for a in answers)
    toks = np.full((600, L), task.EOS)                        # padded with '$' as generate does
    for i, a in enumerate(answers):
        toks[i, :len(a)] = task.encode(a)
    v1 = task.verify_batch([task.decode(t) for t in toks], digits)
    v2 = task.verify_tokens(toks, digits)
    for k in v1:
        np.testing.assert_array_equal(v1[k], v2[k], err_msg=k)
    assert v1["reward"][:200].mean() > 0.5 and 0 < v1["reward"][200:].mean() < 0.5


def test_tokenizer_roundtrip_and_errors():
    s = "0123456789=[9]#9$"
    assert task.decode(task.encode(s)) == s
    with pytest.raises(ValueError, match="s contains"):
        task.encode("12a")
    with pytest.raises(ValueError, match="n must"):
        task.make_prompts(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="digits"):
        task.true_answers([[1, 2, 3]])


def test_teacher_statistics():
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(4000, rng)
    ans = task.teacher_answers(digits, rng)
    v = task.verify_batch(ans, digits)
    think = v["think"] > 0
    assert abs(think.mean() - 0.5) < 0.03
    assert v["reward"][~think].mean() == 1.0                 # direct answers are right
    assert abs(v["chain_ok"][think].mean() - task.TEACHER_CHAIN_ACC) < 0.03
    # the teacher's final answer is its chain's last digit (errors carry on)
    for a in ans[:200]:
        fmt, final, chain = task.parse_answer(a)
        assert fmt == "direct" or final == int(chain[-1])
    # with a perfect teacher every chain is right
    ans0 = task.teacher_answers(digits[:100], rng, think_prob=1.0, error_rate=0.0)
    assert task.verify_batch(ans0, digits[:100])["chain_ok"].all()


def test_policy_loss_gradient_is_clipped():
    logp = np.log(np.array([[1.5, 1.0, 0.5]]))               # ratios 1.5, 1, 0.5 against old = 0
    old = np.zeros((1, 3))
    mask = np.ones((1, 3))
    _, d = rl.policy_loss(logp, old, np.array([2.0]), mask, "dapo", 0.2)
    # A > 0: the ratio 1.5 is clipped (no gradient); the others get −A·ρ/3
    np.testing.assert_allclose(d, [[0.0, -2.0 / 3, -2 * 0.5 / 3]])
    assert np.isclose(rl.clip_fraction(np.exp(logp - old), 2.0, mask), 1 / 3)


# ----------------------------------------------------------------------------- training
def test_sft_then_rl_smoke_and_history():
    sft_cfg = T.SFTConfig(model=TINY, steps=3, batch_size=4)
    m, hist = T.sft_warmup(sft_cfg)
    assert len(hist["loss"]) == 3 and np.isfinite(hist["loss"]).all()
    before = m.state_dict()
    for algo, upd in (("grpo", 1), ("dr_grpo", 1), ("rft", 1), ("ppo", 2)):
        cfg = T.RLConfig(algo=algo, steps=2, n_prompts=4, G=4, mu=upd, beta=0.04)
        pol, h = T.train_rl(m, cfg, seed=0)
        for k in ("accuracy", "think_share", "mean_length", "chain_acc", "teacher_chain_acc",
                  "all_right", "all_wrong", "loss", "time"):
            assert len(h[k]) == 2, (algo, k)
    for k, v in m.state_dict().items():                      # train_rl trains a copy
        np.testing.assert_array_equal(v, before[k])
    assert "value.w" in pol.state_dict() and "value.w" not in before
    with pytest.raises(ValueError, match="algo"):
        T.RLConfig(algo="dpo")
    with pytest.raises(ValueError, match="G"):
        T.RLConfig(G=1)
    s = T.CurriculumSampler(task.make_prompts(10, np.random.default_rng(0))[0])
    pol, h = T.train_rl(m, T.RLConfig(steps=2, n_prompts=4, G=2), prompt_sampler=s)
    assert not np.all(s.success == 0.5)


def test_evaluation_helpers_run():
    m = M.TinyLM(TINY, seed=0)
    e = evaluate(m, n_prompts=20)
    assert 0 <= e["accuracy"] <= 1 and e["think_share"] + e["malformed"] <= 1
    p = pass_at_k_curve(m, ks=(1, 4), n_prompts=5, n_samples=4)
    assert set(p) == {1, 4} and p[1] <= p[4]
    b = thinking_budget(m, budgets=[0, 10], n_prompts=10)
    assert set(b) == {0, 10}


# ----------------------------------------------------------------------------- the cache
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
    real = cache.sft_warmup
    monkeypatch.setattr(cache, "sft_warmup", lambda c: calls.append(c) or real(c))
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


def test_train_rl_is_deterministic_and_shares_prompts():
    """A fixed seed gives identical runs; the shared-prompt training step matches the plain one."""
    sft_cfg = T.SFTConfig(model=TINY, steps=3, batch_size=4)
    m, _ = T.sft_warmup(sft_cfg)
    cfg = T.RLConfig(steps=3, n_prompts=4, G=4)
    p1, h1 = T.train_rl(m, cfg, seed=1)
    p2, h2 = T.train_rl(m, cfg, seed=1)
    for k in h1:
        if k != "time":
            np.testing.assert_array_equal(h1[k], h2[k], err_msg=k)
    for k, v in p1.state_dict().items():
        np.testing.assert_array_equal(v, p2.state_dict()[k])


def test_distinct_rows_give_the_full_batch_loss_and_gradient():
    """train_rl's shortcut (rows with advantage 0 left out, repeated answers computed once,
    prompts shared) gives the loss and gradient of the plain full batch, in float64."""
    rng = np.random.default_rng(0)
    m = M.TinyLM(TINY, seed=2, dtype=np.float64)
    P, G = task.PROMPT_LEN, 4
    prompts = np.repeat(rng.integers(0, 10, size=(3, P)), G, axis=0)         # 3 groups of 4
    ans = rng.integers(0, 15, size=(12, 6))
    ans[1] = ans[0]                                                           # a repeated answer
    ans[5] = ans[6] = ans[4]
    seqs = np.concatenate([prompts, ans], axis=1)
    mask = np.concatenate([np.zeros((12, P - 1)), np.ones((12, 6))], axis=1)
    R = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [0, 1, 0, 0]], float)          # group 2: all right
    adv = rl.grpo_advantages(R).ravel()
    assert (adv[4:8] == 0).all() and (adv != 0).sum() == 8

    logits = m.forward(seqs[:, :-1])                                         # the plain batch
    lp, probs = M.token_logprobs(logits, seqs[:, 1:])
    loss1, dlp = rl.policy_loss(lp, lp.copy(), adv, mask, "grpo")
    m.backward(M.token_logprobs_backward(probs, seqs[:, 1:], dlp))
    g1 = {k: v.copy() for k, v in m.named_grads().items()}

    rows = T.DistinctRows(seqs, adv != 0)
    assert len(rows.seqs) == 7                                               # 8 needed, 1 repeat
    np.testing.assert_array_equal(rows.seqs[rows.index[adv != 0]], seqs[adv != 0])
    lp_u, probs_u = M.token_logprobs(m.forward(rows.seqs[:, :-1], **rows.share), rows.seqs[:, 1:])
    lp2 = rows.expand(lp_u)
    loss2, dlp2 = rl.policy_loss(lp2, lp2.copy(), adv, mask, "grpo")
    m.backward(M.token_logprobs_backward(probs_u, rows.seqs[:, 1:], rows.reduce(dlp2)))
    assert np.isclose(loss1, loss2, rtol=1e-12, atol=1e-15)
    for k, g in m.named_grads().items():
        np.testing.assert_allclose(g, g1[k], rtol=1e-9, atol=1e-13, err_msg=k)
    m.zero_grad()
    assert all((g == 0).all() for g in m.named_grads().values())


def test_decode_rows_matches_decode():
    ids = np.random.default_rng(0).integers(0, 15, size=(50, 16))
    assert task.decode_rows(ids) == [task.decode(r) for r in ids]
    with pytest.raises(ValueError, match="ids"):
        task.decode_rows(np.array([[15]]))


# ----------------------------------------------------------------------------- problems of varying length
def test_make_prompts_with_varying_length():
    d10, p10 = task.make_prompts(50, np.random.default_rng(3))
    np.testing.assert_array_equal(d10, np.random.default_rng(3).integers(0, 10, size=(50, 10)))  # unchanged
    d, p = task.make_prompts(2000, np.random.default_rng(3), min_digits=4)
    k = task.n_digits(d)
    assert set(np.unique(k)) == set(range(4, 11))
    for row, prow, kk in zip(d[:50], p[:50], k[:50]):
        assert np.all(row[kk:] == task.PAD) and np.all(row[:kk] >= 0)
        assert task.decode(prow) == "".join(map(str, row[:kk])) + "$" * (10 - kk) + "="


def test_short_problem_by_hand():
    d = np.array([[9, 4, 5, 8] + [task.PAD] * 6])          # 9 + 4 + 5 + 8 = 26 → 6
    assert task.true_answers(d)[0] == 6 and task.n_digits(d)[0] == 4
    np.testing.assert_array_equal(task.running_sums(d)[0, :4], [9, 3, 8, 6])
    assert task.think_answer(task.running_sums(d)[0, :4]) == "[9386]#6$"
    assert task.decode(task.prompts_of(d)[0]) == "9458$$$$$$="
    assert task.verify("[9386]#6$", d) == 1.0 and task.verify("#6$", d) == 1.0
    assert task.verify("[9386000006]#6$", d) == 0.0            # ten chain digits for a 4-digit problem
    assert task.parse_answer("[9386]#6$", k=4)[0] == "think"
    assert task.parse_answer("[9386]#6$")[0] == "malformed"     # the 10-digit task needs 10


def test_verify_tokens_matches_verify_batch_on_varying_lengths():
    rng = np.random.default_rng(11)
    d, _ = task.make_prompts(300, rng, min_digits=3)
    answers = task.teacher_answers(d, rng)
    answers[::7] = ["[" + a[1:] if a.startswith("#") else a[:-3] + "#1$" for a in answers[::7]]
    answers[1::9] = [a[:3] + a[4:] for a in answers[1::9]]      # drop a chain digit: malformed
    ids = np.full((len(answers), 16), task.EOS)
    for i, a in enumerate(answers):
        e = task.encode(a)
        ids[i, :len(e)] = e
    fast, slow = task.verify_tokens(ids, d), task.verify_batch(answers, d)
    for key in slow:
        np.testing.assert_array_equal(fast[key], slow[key], err_msg=key)
    assert 0 < fast["think"].mean() < 1 and 0 < fast["chain_ok"].sum() < fast["think"].sum()


def test_teacher_on_short_problems():
    d, _ = task.make_prompts(200, np.random.default_rng(2), min_digits=2)
    answers = task.teacher_answers(d, np.random.default_rng(0), think_prob=1.0, error_rate=0.0)
    v = task.verify_batch(answers, d)
    assert np.all(v["think"] == 1) and np.all(v["chain_ok"] == 1) and np.all(v["reward"] == 1)
    np.testing.assert_array_equal(v["length"], task.n_digits(d) + 5)


@pytest.mark.parametrize("kwargs, arg", [({"min_digits": 0}, "min_digits"), ({"min_digits": 11}, "min_digits"),
                                         ({"min_digits": 2.5}, "min_digits")])
def test_make_prompts_bad_min_digits(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        task.make_prompts(3, np.random.default_rng(0), **kwargs)


def test_padding_only_on_the_left():
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[1, task.PAD] + [2] * 8]))
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[task.PAD] + [2] * 9]))
    with pytest.raises(ValueError, match="PAD"):
        task.true_answers(np.array([[task.PAD] * 10]))


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_LM = M.TinyLM(TINY, seed=0)
_RNG = np.random.default_rng(0)
_D = np.arange(10)[None] % 10
BAD_INPUTS = [
    (task.encode, (5,), {}, "s"),
    (task.encode, ("12x",), {}, "s"),
    (task.decode, ([1.5],), {}, "ids"),
    (task.decode, ([15],), {}, "ids"),
    (task.decode_rows, ([1, 2],), {}, "ids"),
    (task.make_prompts, (0, _RNG), {}, "n"),
    (task.make_prompts, (None, _RNG), {}, "n"),
    (task.make_prompts, (3, 0), {}, "rng"),
    (task.make_prompts, (3, _RNG), {"min_digits": 0}, "min_digits"),
    (task.make_prompts, (3, _RNG), {"min_digits": 2.5}, "min_digits"),
    (task.prompts_of, ([[1] * 9],), {}, "digits"),
    (task.prompts_of, ([[-1] + [1] * 9],), {}, "digits"),
    (task.n_digits, ([[1.5] * 10],), {}, "digits"),
    (task.parse_answer, ("#9$",), {"k": 0}, "k"),
    (T.SFTConfig, (), {"min_digits": 11}, "min_digits"),
    (T.RLConfig, (), {"min_digits": 0}, "min_digits"),
    (task.true_answers, ([[1.5] * 10],), {}, "digits"),
    (task.true_answers, ([[1] * 9],), {}, "digits"),
    (task.running_sums, ([[10] * 10],), {}, "digits"),
    (task.think_answer, ([],), {}, "chain"),
    (task.think_answer, ([1] * 11,), {}, "chain"),
    (task.think_answer, ([12] * 10,), {}, "chain"),
    (task.direct_answer, (10,), {}, "answer"),
    (task.direct_answer, ("9",), {}, "answer"),
    (task.teacher_answers, (_D, _RNG), {"think_prob": "0.5"}, "think_prob"),
    (task.teacher_answers, (_D, _RNG), {"error_rate": 2}, "error_rate"),
    (task.teacher_answers, (_D, None), {}, "rng"),
    (task.verify, ("#9$", np.ones((2, 10), int)), {}, "digits"),
    (task.verify_batch, ("#9$", _D), {}, "answers"),
    (task.verify_batch, (["#9$", "#1$"], _D), {}, "answers"),
    (task.verify_tokens, ([[1, 2]], np.ones((2, 10), int)), {}, "ans"),
    (task.verify_tokens, ([[1, 20]], _D), {}, "ans"),
    (T.SFTConfig, (), {"steps": -1}, "steps"),
    (T.SFTConfig, (), {"batch_size": 0}, "batch_size"),
    (T.SFTConfig, (), {"lr": np.nan}, "lr"),
    (T.SFTConfig, (), {"warmup_steps": -1}, "warmup_steps"),
    (T.SFTConfig, (), {"think_prob": 1.5}, "think_prob"),
    (T.SFTConfig, (), {"teacher_error_rate": None}, "teacher_error_rate"),
    (T.SFTConfig, (), {"seed": "0"}, "seed"),
    (T.SFTConfig, (), {"model": {"n_layer": 1}}, "model"),
    (T.sft_warmup, ({"steps": 3},), {}, "cfg"),
    (T.sft_warmup, (), {"callback": 3}, "callback"),
    (T.RLConfig, (), {"algo": "reinforce"}, "algo"),
    (T.RLConfig, (), {"steps": 2.5}, "steps"),
    (T.RLConfig, (), {"steps": "10"}, "steps"),
    (T.RLConfig, (), {"n_prompts": 0}, "n_prompts"),
    (T.RLConfig, (), {"G": 1}, "G"),
    (T.RLConfig, (), {"lr": 0}, "lr"),
    (T.RLConfig, (), {"mu": 0}, "mu"),
    (T.RLConfig, (), {"eps_low": -1}, "eps_low"),
    (T.RLConfig, (), {"eps_low": 1.5}, "eps_low"),
    (T.RLConfig, (), {"eps_high": -0.1}, "eps_high"),
    (T.RLConfig, (), {"beta": -0.1}, "beta"),
    (T.RLConfig, (), {"loss_type": "mean"}, "loss_type"),
    (T.RLConfig, (), {"vf_coef": None}, "vf_coef"),
    (T.RLConfig, (), {"temperature": "1"}, "temperature"),
    (T.RLConfig, (), {"grad_clip": -1}, "grad_clip"),
    (T.rollout, (_LM, _D, 0, _RNG), {}, "G"),                        # was reported as n_repeat
    (T.rollout, (_LM, _D, 2, _RNG), {"temperature": 0}, "temperature"),
    (T.rollout, (_LM, [[1] * 9], 2, _RNG), {}, "digits"),
    (T.rollout, ("model", _D, 2, _RNG), {}, "model"),
    (T.rollout, (_LM, _D, 2, None), {}, "rng"),
    (T.DistinctRows, (np.ones((2, 12), int), [True]), {}, "needed"),
    (T.DistinctRows, (np.ones((2, 12), int), [1, 0]), {}, "needed"),
    (T.DistinctRows, (np.ones(12, int), [True]), {}, "seqs"),
    (T.CurriculumSampler, ([],), {}, "pool"),
    (T.CurriculumSampler, (5,), {}, "pool"),
    (T.CurriculumSampler, (_D,), {"init": 2}, "init"),
    (T.CurriculumSampler, (_D,), {"decay": -1}, "decay"),
    (T.CurriculumSampler, (_D,), {"floor": 0}, "floor"),
    (T.CurriculumSampler(_D), (0, _RNG), {}, "n"),
    (T.CurriculumSampler(_D), (2, None), {}, "rng"),
    (T.CurriculumSampler(_D).update, (np.ones((2, 4)),), {}, "rewards"),     # before any draw
    (T.train_rl, ("model",), {}, "model"),
    (T.train_rl, (_LM, {"steps": 1}), {}, "cfg"),
    (T.train_rl, (_LM,), {"seed": -1}, "seed"),
    (T.train_rl, (_LM,), {"callback": "print"}, "callback"),
    (T.train_rl, (_LM,), {"prompt_sampler": [1, 2]}, "prompt_sampler"),
    (evaluate, (_LM,), {"n_prompts": 0}, "n_prompts"),               # was reported as n
    (evaluate, (_LM,), {"temperature": "1"}, "temperature"),
    (evaluate, (_LM,), {"seed": None}, "seed"),
    (evaluate, (_LM,), {"digits": [[1] * 9]}, "digits"),
    (evaluate, ("model",), {}, "model"),
    (pass_at_k_curve, (_LM,), {"ks": (1, 32)}, "ks"),
    (pass_at_k_curve, (_LM,), {"ks": (0,)}, "ks"),
    (pass_at_k_curve, (_LM,), {"ks": ()}, "ks"),
    (pass_at_k_curve, (_LM,), {"n_prompts": 0}, "n_prompts"),
    (pass_at_k_curve, (_LM,), {"n_samples": None}, "n_samples"),
    (thinking_budget, (_LM,), {"budgets": [11]}, "budgets"),
    (thinking_budget, (_LM,), {"budgets": [2.5]}, "budgets"),
    (thinking_budget, (_LM,), {"n_prompts": -1}, "n_prompts"),
    (thinking_budget, (_LM,), {"temperature": 0}, "temperature"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
