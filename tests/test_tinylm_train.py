"""Pinning tests of the Part III trainers (toy/tinylm/train.py): Adam, the SFT learning-rate
schedule and ``train_sft``, each algorithm's advantages in ``train_rl``, PPO's value targets,
``CurriculumSampler``, ``DistinctRows``, the reward hook and LM-PPO. Each is compared with an
independent reference written here: a naive scalar loop, a closed form, the plain full batch,
or a case computed by hand."""
import dataclasses
import math
import re

import numpy as np
import pytest

from toy import rl
from toy.tinylm import many as MANY, model as M, records, rewards, task, train as T

TINY = M.ModelConfig(n_layer=2, n_head=2, n_embd=8, mlp_hidden=12, init_std=0.5)


# ----------------------------------------------------------------------------- Adam
class _Params:
    """The two methods of a model that Adam uses, on plain arrays: ``params`` and ``grads``."""

    def __init__(self, **params):
        self.dtype = np.dtype(np.float64)
        self.params = {k: np.array(v, dtype=float) for k, v in params.items()}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def named_params(self):
        return [(k, self, k) for k in self.params]

    def named_grads(self):
        return dict(self.grads)


def _naive_adam(x0, grads, lrs, b1=0.9, b2=0.999, eps=1e-8, clip=1.0):
    """Kingma & Ba, one scalar at a time: x0 {name: list}, grads[t] {name: list} → x after each step."""
    x = {k: list(map(float, v)) for k, v in x0.items()}
    m = {k: [0.0] * len(v) for k, v in x.items()}
    v = {k: [0.0] * len(v) for k, v in x.items()}
    out = []
    for t, (g, lr) in enumerate(zip(grads, lrs), start=1):
        norm = math.sqrt(sum(gi * gi for k in g for gi in g[k]))
        scale = min(1.0, clip / (norm + 1e-12)) if clip else 1.0
        for k in x:
            for i in range(len(x[k])):
                gi = g[k][i] * scale
                m[k][i] = b1 * m[k][i] + (1 - b1) * gi
                v[k][i] = b2 * v[k][i] + (1 - b2) * gi * gi
                mhat, vhat = m[k][i] / (1 - b1 ** t), v[k][i] / (1 - b2 ** t)
                x[k][i] -= lr * mhat / (math.sqrt(vhat) + eps)
        out.append({k: list(xs) for k, xs in x.items()})
    return out


@pytest.mark.parametrize("clip, gscale", [(0.0, [1e-6] * 6), (1.0, [1e-6] * 6), (None, [3, 0.3, 0.1, 2, 0.4, 0.1])])
def test_adam_matches_a_naive_scalar_loop(clip, gscale):
    """Six steps of ``Adam`` (default β1 = 0.9, β2 = 0.999, ε = 1e-8, bias correction, global-norm
    clipping, by default at 1) against the scalar loop above. Gradients of size 1e-6 make ε matter
    (√v̂ ≈ 1e-6); sizes from 0.1 to 3 make the clipping act on some steps only; the learning rate
    changes every step (as in SFT)."""
    rng = np.random.default_rng(0)
    x0 = {"a": rng.normal(size=3), "b": rng.normal(size=2)}
    grads = [{k: (gs * rng.normal(size=len(v))).tolist() for k, v in x0.items()} for gs in gscale]
    lrs = [0.1, 0.05, 0.2, 0.1, 0.01, 0.3]
    model = _Params(**x0)
    opt = M.Adam(0.1) if clip is None else M.Adam(0.1, grad_clip=clip)
    ref = _naive_adam({k: v.tolist() for k, v in x0.items()}, grads, lrs, clip=1.0 if clip is None else clip)
    for t, (g, lr) in enumerate(zip(grads, lrs)):
        model.grads = {k: np.array(gk) for k, gk in g.items()}
        opt.step(model, lr=lr)
        for k in x0:
            np.testing.assert_allclose(model.params[k], ref[t][k], rtol=1e-12, atol=1e-15,
                                       err_msg=f"step {t + 1}, {k}")


def test_adam_first_step_by_hand():
    """Bias correction makes the first step lr·g/(|g| + ε) = lr·sign(g) for |g| ≫ ε, whatever
    β1, β2; without clipping; ``lr=None`` uses the optimiser's own rate."""
    model = _Params(w=[1.0, 1.0, 1.0])
    model.grads = {"w": np.array([0.5, -2.0, 1e-8])}
    M.Adam(0.1, grad_clip=0).step(model)
    np.testing.assert_allclose(model.params["w"], [1 - 0.1 * 0.5 / (0.5 + 1e-8), 1 + 0.1 * 2 / (2 + 1e-8),
                                                   1 - 0.1 * 1e-8 / 2e-8], rtol=1e-12)


# ----------------------------------------------------------------------------- SFT schedule
def test_lr_schedule_by_hand():
    """Linear warm-up to the peak over ``warmup_steps``, then cosine decay to a floor of 10 %."""
    cfg = T.SFTConfig(lr=2.0, warmup_steps=4, steps=12)
    assert [T._lr_at(s, cfg) for s in range(4)] == pytest.approx([0.5, 1.0, 1.5, 2.0])
    assert T._lr_at(4, cfg) == pytest.approx(2.0)                       # decay starts at the peak
    assert T._lr_at(8, cfg) == pytest.approx(2.0 * 0.55)                # halfway: (1 + 0.1) / 2
    assert T._lr_at(12, cfg) == pytest.approx(2.0 * 0.1)                # the floor, at the end
    ref = [2.0 * (0.1 + 0.45 * (1 + math.cos(math.pi * (s - 4) / 8))) for s in range(4, 12)]
    assert [T._lr_at(s, cfg) for s in range(4, 12)] == pytest.approx(ref, rel=1e-12)
    no_decay = T.SFTConfig(lr=1.0, warmup_steps=3, steps=3)             # max(1, 0) steps of decay
    assert [T._lr_at(s, no_decay) for s in range(3)] == pytest.approx([1 / 3, 2 / 3, 1.0])


def _recording_adam(monkeypatch):
    """Replace train.Adam by a subclass that records the learning rate of every step."""
    used = []

    class Recording(M.Adam):
        def step(self, model, lr=None):
            used.append(self.lr if lr is None else lr)
            return super().step(model, lr)

    monkeypatch.setattr(T, "Adam", Recording)
    return used


def _recording_stack_adam(monkeypatch):
    """Record the runs of every step of train_rl's optimiser (``runs.StackAdam``)."""
    used = []
    real = T.runs.StackAdam.step

    def step(self, st, runs):
        used.append(list(runs))
        return real(self, st, runs)

    monkeypatch.setattr(T.runs.StackAdam, "step", step)
    return used


def test_train_sft_steps_lr_sequence_and_callback(monkeypatch):
    used = _recording_adam(monkeypatch)
    seen = []
    cfg = T.SFTConfig(model=TINY, steps=7, batch_size=4, lr=0.01, warmup_steps=2)
    _, hist = T.train_sft(cfg, callback=lambda s, loss: seen.append((s, loss)))
    assert hist["step"] == list(range(7)) and len(hist["loss"]) == 7
    assert seen == list(zip(hist["step"], hist["loss"]))
    ref = [0.005, 0.01] + [0.01 * (0.1 + 0.45 * (1 + math.cos(math.pi * k / 5))) for k in range(5)]
    np.testing.assert_allclose(used, ref, rtol=1e-12)


def _naive_nll(model, prompts, answers):
    """Token-mean NLL of the answer tokens (up to and including '$'), one row at a time, float64."""
    total, count = 0.0, 0
    for p, a in zip(prompts, answers):
        seq = np.concatenate([p, task.encode(a)])
        logits = model.forward(seq[None, :-1])[0].astype(np.float64)          # (len − 1, V)
        for t in range(len(p) - 1, len(seq) - 1):                             # predicts seq[t + 1]
            z = logits[t]
            total -= z[seq[t + 1]] - z.max() - math.log(np.exp(z - z.max()).sum())
            count += 1
    return total / count


def _naive_nll_grad(model, prompts, answers):
    """Gradient of ``_naive_nll``, row by row (the model's backward is checked by finite
    differences in test_tinylm_model.py), summed over rows."""
    n_tok = sum(len(a) for a in answers)
    total = None
    for p, a in zip(prompts, answers):
        seq = np.concatenate([p, task.encode(a)])[None]
        lp, probs = M.token_logprobs(model.forward(seq[:, :-1]), seq[:, 1:])
        dlp = np.zeros(lp.shape)
        dlp[0, len(p) - 1:] = -1.0 / n_tok
        model.backward(M.token_logprobs_backward(probs, seq[:, 1:], dlp))
        g = {k: v.astype(np.float64) for k, v in model.named_grads().items()}
        total = g if total is None else {k: total[k] + g[k] for k in g}
    return total


def test_train_sft_first_two_losses_independently():
    """Step 0's loss is the fresh model's NLL on the first teacher batch; step 1's is the NLL
    on the second batch after one Adam step, which is lr₀·g/(|g| + ε) with g the clipped
    gradient and lr₀ = lr / warmup_steps (Adam's bias correction makes m̂ = g, v̂ = g²)."""
    cfg = T.SFTConfig(model=TINY, steps=2, batch_size=6, lr=0.02, warmup_steps=4, seed=3)
    _, hist = T.train_sft(cfg)
    rng = np.random.default_rng(3)
    model = M.TinyLM(TINY, seed=3)
    batches = []
    for _ in range(2):
        digits, prompts = task.make_prompts(6, rng)
        batches.append((prompts, task.teacher_answers(digits, rng, 0.5, task.TEACHER_ERROR_RATE)))
    assert hist["loss"][0] == pytest.approx(_naive_nll(model, *batches[0]), rel=1e-5)
    g = _naive_nll_grad(model, *batches[0])
    norm = math.sqrt(sum((v ** 2).sum() for v in g.values()))
    scale = min(1.0, 1.0 / norm)
    state = model.state_dict()
    lr0 = 0.02 / 4
    model.load_state_dict({k: state[k] - lr0 * g[k] * scale / (np.abs(g[k] * scale) + 1e-8) for k in g})
    assert hist["loss"][1] == pytest.approx(_naive_nll(model, *batches[1]), rel=1e-4)


def test_train_sft_learns_and_is_deterministic():
    cfg = T.SFTConfig(model=TINY, steps=60, batch_size=16, lr=0.01, warmup_steps=5)
    m1, h1 = T.train_sft(cfg)
    m2, h2 = T.train_sft(cfg)
    assert h1["loss"] == h2["loss"]
    for k, v in m1.state_dict().items():
        np.testing.assert_array_equal(v, m2.state_dict()[k], err_msg=k)
    assert np.mean(h1["loss"][-10:]) < 0.7 * np.mean(h1["loss"][:5])
    _, h3 = T.train_sft(T.SFTConfig(model=TINY, steps=60, batch_size=16, lr=0.01, warmup_steps=5, seed=1))
    assert h3["loss"] != h1["loss"]


# ----------------------------------------------------------------------------- PPO
@pytest.fixture(scope="module")
def sft_model():
    """A TINY model after 60 SFT steps: right on a few % of answers, so that rewards are not all 0."""
    return T.train_sft(T.SFTConfig(model=TINY, steps=60, batch_size=16, lr=0.01, warmup_steps=5))[0]


def _naive_ppo(reward, values, mask):
    """A_t = R − V_t normalised by the mean and (population) std over the masked tokens, by loops."""
    N, Tn = values.shape
    toks = [(i, t) for i in range(N) for t in range(Tn) if mask[i, t]]
    a = {(i, t): reward[i] - float(values[i, t]) for i, t in toks}
    mu = sum(a.values()) / len(toks)
    sd = math.sqrt(sum((x - mu) ** 2 for x in a.values()) / len(toks))
    adv = np.zeros((N, Tn))
    for i in range(N):
        for t in range(Tn):
            adv[i, t] = (reward[i] - float(values[i, t]) - mu) / (sd + 1e-8)
    return np.repeat(np.asarray(reward, float)[:, None], Tn, axis=1), adv


def test_ppo_targets_naive_loop():
    rng = np.random.default_rng(0)
    reward = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    values = rng.normal(size=(5, 6)).astype(np.float32)
    mask = (rng.random((5, 6)) < 0.6).astype(np.float32)
    mask[:, -1] = 1
    ret, adv = rl.ppo_targets(reward, values, mask)
    ref_ret, ref_adv = _naive_ppo(reward, values, mask)
    np.testing.assert_array_equal(ret, ref_ret)
    np.testing.assert_allclose(adv, ref_adv, rtol=1e-6, atol=1e-6)
    # by hand: V = 0, one answer right (3 tokens) and one wrong (1 token): mean 3/4, std √3/4
    ret, adv = rl.ppo_targets(np.array([1.0, 0.0]), np.zeros((2, 3)), np.array([[1, 1, 1], [1, 0, 0.]]))
    np.testing.assert_allclose(adv[0], (1 - 0.75) / (math.sqrt(3) / 4 + 1e-8))
    np.testing.assert_allclose(adv[1], -0.75 / (math.sqrt(3) / 4 + 1e-8))


def test_train_rl_ppo_uses_the_targets_in_both_losses(monkeypatch, sft_model):
    """In ``train_rl`` (PPO) every update of a batch gets the normalised advantages of R − V(π_old),
    and the value loss is ½·token-mean of (V − R)², R each answer's reward, at every step."""
    rollouts, targets, calls = [], [], []
    real_rollout, real_targets, real_loss = T._scored, T.rl.ppo_targets, T.rl.policy_loss

    def rec_rollout(*a, **k):
        rollouts.append(real_rollout(*a, **k))
        return rollouts[-1]

    def rec_targets(reward, values, mask):
        targets.append((reward, np.array(values), mask))
        return real_targets(reward, values, mask)

    def rec_loss(logp, old_logp, adv, mask, *a, **k):
        calls.append((np.array(adv), mask))
        return real_loss(logp, old_logp, adv, mask, *a, **k)

    monkeypatch.setattr(T, "_scored", rec_rollout)
    monkeypatch.setattr(T.rl, "ppo_targets", rec_targets)
    monkeypatch.setattr(T.rl, "policy_loss", rec_loss)
    m = sft_model
    cfg = T.RLConfig(algo="ppo", steps=3, n_prompts=16, G=8, mu=2, lr=0.01)
    T.train_rl(m, cfg, seed=0)
    assert len(targets) == 3 and len(calls) == 6                       # once per batch, per update
    assert np.all(targets[0][1] == 0) and not np.all(targets[1][1] == 0)   # zero-initialised value head
    for step, (ro, (reward, values, mask)) in enumerate(zip(rollouts, targets)):
        np.testing.assert_array_equal(reward, ro.reward)
        np.testing.assert_array_equal(mask, ro.mask)
        _, ref_adv = _naive_ppo(ro.reward, values, ro.mask)
        for adv, _ in calls[2 * step: 2 * step + 2]:                    # both updates: π_old's targets
            np.testing.assert_allclose(adv, ref_adv, rtol=1e-5, atol=1e-5)
    assert all(ro.reward.any() for ro in rollouts)                     # every step has a reward
    # one update per batch: the value loss is that of the values the targets were computed
    # from, and the loss at ratio 1 is −token-mean(Â) (= 0: Â is centred) + vf_coef · value loss
    rollouts.clear()
    targets.clear()
    cfg1 = T.RLConfig(algo="ppo", steps=3, n_prompts=16, G=8, mu=1, lr=0.01)
    _, h1 = T.train_rl(m, cfg1, seed=0)
    assert len(targets) == 3
    for step, (ro, (_, values, _)) in enumerate(zip(rollouts, targets)):
        tokens = list(zip(*np.nonzero(ro.mask)))
        vloss = 0.5 * sum((values[i, t] - ro.reward[i]) ** 2 for i, t in tokens) / len(tokens)
        assert h1["value_loss"][step] == pytest.approx(vloss, rel=1e-5)
        assert h1["loss"][step] == pytest.approx(0.5 * vloss, rel=1e-4, abs=1e-7)


# ----------------------------------------------------------------------------- curriculum
def test_curriculum_sampler_update_and_draws_naive():
    pool = np.arange(60).reshape(6, 10) % 10
    s = T.CurriculumSampler(pool, init=0.95, success_decay=0.75, floor=0.1)      # the floor binds at first
    rng, ref_rng = np.random.default_rng(4), np.random.default_rng(4)
    success = [0.95] * 6
    for step in range(5):
        p = [max(1 - x, 0.1) for x in success]
        idx = ref_rng.choice(6, size=4, replace=False, p=np.array(p) / sum(p))
        np.testing.assert_array_equal(s(4, rng), pool[idx])
        rewards = np.random.default_rng(step).random((4, 3)) < 0.3          # (n, G)
        s.update(rewards)
        for i, j in enumerate(idx):
            success[j] = 0.75 * success[j] + 0.25 * rewards[i].mean()
        np.testing.assert_allclose(s.success, success, rtol=1e-12)
    # by hand: prompt 0 drawn, its group all right: 0.5 → 0.75·0.5 + 0.25·1
    s = T.CurriculumSampler(pool[:2], success_decay=0.75)
    s.last = np.array([0])
    s.update([[1, 1]])
    np.testing.assert_allclose(s.success, [0.625, 0.5])


def test_train_rl_updates_the_curriculum_with_each_prompts_group(monkeypatch, sft_model):
    rollouts = []
    real_rollout = T._scored
    monkeypatch.setattr(T, "_scored", lambda *a, **k: rollouts.append(real_rollout(*a, **k)) or rollouts[-1])
    pool = task.make_prompts(12, np.random.default_rng(0))[0]
    s = T.CurriculumSampler(pool)
    T.train_rl(sft_model, T.RLConfig(steps=1, n_prompts=8, G=8), seed=0, prompt_sampler=s)
    ro, G = rollouts[0], 8
    ref = np.full(12, 0.5)
    for i, j in enumerate(s.last):                          # prompt i of the batch is pool[j]
        np.testing.assert_array_equal(ro.digits[i * G:(i + 1) * G], np.repeat(pool[j][None], G, 0))
        ref[j] = 0.5 * 0.5 + 0.5 * ro.reward[i * G:(i + 1) * G].mean()
    assert ro.reward.any()
    np.testing.assert_allclose(s.success, ref, rtol=1e-12)


# ----------------------------------------------------------------------------- the other advantages
@pytest.mark.parametrize("algo, loss_type, max_len", [("grpo", "grpo", None), ("dr_grpo", "dr_grpo", 16),
                                                      ("rft", "sum", None), ("ppo", "dapo", None)])
def test_train_rl_advantages_group_by_group(monkeypatch, sft_model, algo, loss_type, max_len):
    """Each algorithm's advantages, rows and loss type as ``train_rl`` passes them to
    ``policy_loss``, against a loop over the groups of each step's rollout: GRPO / Dr. GRPO apply
    ``toy.rl``'s advantage to each prompt's G rewards; RFT keeps the right answers with A = 1."""
    rollouts, calls = [], []
    real_rollout, real_loss = T._scored, T.rl.policy_loss
    monkeypatch.setattr(T, "_scored", lambda *a, **k: rollouts.append(real_rollout(*a, **k)) or rollouts[-1])

    def rec_loss(logp, old_logp, adv, mask, **k):
        calls.append((np.array(adv), np.array(mask), k["loss_type"], k["max_len"]))
        return real_loss(logp, old_logp, adv, mask, **k)

    monkeypatch.setattr(T.rl, "policy_loss", rec_loss)
    G = 8
    T.train_rl(sft_model, T.RLConfig(algo=algo, steps=2, n_prompts=8, G=G), seed=0)
    assert len(calls) == 2
    for ro, (adv, mask, lt, ml) in zip(rollouts, calls):
        assert (lt, ml) == (loss_type, max_len)
        if algo == "ppo":
            continue                                          # per token: test_train_rl_ppo_... above
        groups = [ro.reward[g * G:(g + 1) * G] for g in range(8)]
        if algo == "rft":
            keep = [i for i, r in enumerate(ro.reward) if r > 0]
            np.testing.assert_array_equal(adv, np.ones(len(keep)))
            np.testing.assert_array_equal(mask, ro.mask[keep])
        else:
            fn = rl.grpo_advantages if algo == "grpo" else rl.dr_grpo_advantages
            ref = np.concatenate([fn(r[None, :])[0] for r in groups])
            np.testing.assert_allclose(adv, ref, rtol=1e-12, atol=1e-15)
            np.testing.assert_array_equal(mask, ro.mask)
    assert any(0 < r.mean() < 1 for ro in rollouts for r in ro.reward.reshape(8, G))   # a mixed group


# ----------------------------------------------------------------------------- the whole loop
def test_sft_then_rl_smoke_and_history():
    sft_cfg = T.SFTConfig(model=TINY, steps=3, batch_size=4)
    m, hist = T.train_sft(sft_cfg)
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


def test_train_rl_is_deterministic_and_shares_prompts():
    """A fixed seed gives identical runs; the shared-prompt training step matches the plain one."""
    sft_cfg = T.SFTConfig(model=TINY, steps=3, batch_size=4)
    m, _ = T.train_sft(sft_cfg)
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

    rows = MANY.DistinctRows(seqs, adv != 0)
    assert len(rows.seqs) == 7                                               # 8 needed, 1 repeat
    np.testing.assert_array_equal(rows.seqs[rows.index[adv != 0]], seqs[adv != 0])
    lp_u, probs_u = M.token_logprobs(m.forward(rows.seqs[:, :-1]), rows.seqs[:, 1:])
    lp2 = rows.expand(lp_u)
    loss2, dlp2 = rl.policy_loss(lp2, lp2.copy(), adv, mask, "grpo")
    m.backward(M.token_logprobs_backward(probs_u, rows.seqs[:, 1:], rows.reduce(dlp2)))
    assert np.isclose(loss1, loss2, rtol=1e-12, atol=1e-15)
    for k, g in m.named_grads().items():
        np.testing.assert_allclose(g, g1[k], rtol=1e-9, atol=1e-13, err_msg=k)
    m.zero_grad()
    assert all((g == 0).all() for g in m.named_grads().values())


def test_record_counts_the_groups_with_all_equal_rewards_by_hand():
    """``all_right`` / ``all_wrong``: the share of groups whose G rewards are all 1 / all 0 (a
    group of equal rewards 0.5 is neither; [1, 1, 1.5] is not all equal), by a plain loop."""
    reward = np.array([1, 1, 1, 0, 0, 0, 1, 0, 1, .5, .5, .5, 1, 1, 1.5, 0, 0, 0])
    think = np.array([1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0])
    chain_ok = np.array([1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0])
    ro = T.Rollouts(None, None, None, None, reward, (reward == 1).astype(float), think, chain_ok,
                   np.full(18, 3.0), G=3)
    groups = reward.reshape(6, 3).tolist()
    rec = records.sample_record(ro, "grpo")
    assert rec["all_right"] == sum(g == [1, 1, 1] for g in groups) / 6 == 1 / 6
    assert rec["all_wrong"] == sum(g == [0, 0, 0] for g in groups) / 6 == 2 / 6
    assert rec["degenerate"] == sum(len(set(g)) == 1 for g in groups) / 6 == 4 / 6
    adv = [[(r - np.mean(g)) / (np.std(g) + 1e-4) for r in g] for g in groups]      # GRPO's, group by group
    assert rec["mean_abs_adv"] == pytest.approx(np.mean(np.abs(adv)), rel=1e-12)
    assert "mean_abs_adv" not in records.sample_record(ro, "ppo")                     # PPO's A is per token
    assert rec["accuracy"] == 7 / 18 and rec["think_share"] == 7 / 18 and rec["chain_acc"] == 4 / 7
    assert rec["reward"] == reward.mean() and rec["mean_length"] == 3.0


def test_rft_with_nothing_accepted_records_nan_and_leaves_the_model():
    """An RFT step with no accepted answer trains on nothing: the model is unchanged and every
    quantity of the update is NaN, so that every history list still has one entry per step."""
    m = M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0)
    p, h = T.train_rl(m, T.RLConfig(algo="rft", steps=2, n_prompts=4, G=4, beta=0.1), seed=0)
    assert h["accuracy"] == [0.0, 0.0]                      # an untrained model: nothing right
    assert all(len(v) == 2 for v in h.values()) and {"loss", "clip_frac", "kl"} <= set(h)
    assert np.isnan(h["loss"] + h["clip_frac"] + h["kl"]).all()
    for k, v in p.state_dict().items():
        np.testing.assert_array_equal(v, m.state_dict()[k])


def _half(ans, digits):
    """A reward for about half of an untrained model's answers (something to learn)."""
    return ((ans[:, 0] + ans[:, 1]) % 2).astype(float)


def _naive_minibatch_step(model, cfg, seed):
    """One ``train_rl`` step with minibatch epochs, written plainly: the whole batch's log π_old
    (and, for LM-PPO, V and the targets) first, then per epoch a permutation of the rows (the
    training rng after the rollout) cut into ``n_minibatches`` parts, one Adam step on each, its
    loss a mean over the part's tokens (LM-PPO) or of its answers' token means (GRPO), every row
    computed by a plain forward."""
    rng = np.random.default_rng(seed)
    policy = model.copy()
    if cfg.algo == "ppo":
        policy.add_value_head()
    digits, _ = task.make_prompts(cfg.n_prompts, rng, cfg.min_digits)
    ro = T.rollout(policy, digits, cfg.G, rng, cfg.temperature, _half)
    seqs, mask = ro.seqs, ro.mask
    old = model.logprobs(seqs)                                           # π_old = the start
    if cfg.algo == "ppo":
        values = policy.forward(seqs[:, :-1], value=True)[1]
        tok_r = rl.kl_shaped_rewards(old - model.logprobs(seqs), ro.reward, mask, cfg.kl_coef, cfg.kl_clamp)
        a, ret = rl.gae(tok_r, values, mask)
        adv = (a - (a * mask).sum() / mask.sum()) / ((a * mask)[mask > 0].std() + 1e-8)
    else:
        R = ro.reward.reshape(cfg.n_prompts, cfg.G)
        adv = np.repeat((R - R.mean(1, keepdims=True)) / (R.std(1, keepdims=True) + 1e-4), mask.shape[1]).reshape(mask.shape)
    opt = M.Adam(cfg.lr, grad_clip=cfg.grad_clip)
    n_steps = 0
    for _ in range(cfg.mu):
        for idx in np.array_split(rng.permutation(len(seqs)), cfg.n_minibatches):
            out = policy.forward(seqs[idx, :-1], value=cfg.algo == "ppo")
            logits, v = out if cfg.algo == "ppo" else (out, None)
            lp, probs = M.token_logprobs(logits, seqs[idx, 1:])
            m, A = mask[idx], adv[idx]
            ratio = np.exp(lp - old[idx])
            unclipped = np.minimum(ratio * A, np.clip(ratio, 1 - cfg.eps_low, 1 + cfg.eps_low) * A) == ratio * A
            c = m / m.sum() if cfg.algo == "ppo" else m / (len(idx) * m.sum(axis=1, keepdims=True))
            dlp = -ratio * np.where(unclipped, A, 0.0) * c
            dv = cfg.vf_coef * (v - ret[idx]) * m / m.sum() if cfg.algo == "ppo" else None
            policy.backward(M.token_logprobs_backward(probs, seqs[idx, 1:], dlp), dv)
            opt.step(policy)
            n_steps += 1
    return policy, n_steps


@pytest.mark.parametrize("algo, kw", [("ppo", {"kl_coef": 0.1}), ("grpo", {})])
def test_minibatch_epochs_match_a_naive_loop(monkeypatch, algo, kw):
    """``n_minibatches``: μ epochs of one Adam step per random minibatch, against the plain loop
    above (float64); 16 answers in 3 minibatches (6 + 5 + 5 rows), 2 epochs: 6 Adam steps."""
    m = M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0, dtype=np.float64)
    cfg = T.RLConfig(algo=algo, steps=1, n_prompts=4, G=4, mu=2, n_minibatches=3, lr=1e-2, **kw)
    want, n_steps = _naive_minibatch_step(m, cfg, seed=3)
    full, _ = T.train_rl(m, dataclasses.replace(cfg, n_minibatches=1), seed=3, reward_fn=_half)
    used, used_many = _recording_adam(monkeypatch), _recording_stack_adam(monkeypatch)
    got, h = T.train_rl(m, cfg, seed=3, reward_fn=_half)
    (got_many, h_many), = MANY.train_rl_many(m, [cfg], [3], reward_fns=[_half])      # the loop of the record
    assert 0 < h["reward"][0] < 1 and len(used) == len(used_many) == n_steps == 6
    for k, v in want.state_dict().items():    # float64 rounding, amplified where Adam divides a tiny gradient by its size
        np.testing.assert_allclose(got.state_dict()[k], v, rtol=1e-6, atol=1e-8, err_msg=k)
        np.testing.assert_allclose(got_many.state_dict()[k], v, rtol=1e-6, atol=1e-8, err_msg=k)
    assert not all(np.allclose(v, got.state_dict()[k]) for k, v in full.state_dict().items())  # ≠ full batch

# ----------------------------------------------------------------------------- the loss variants
VARIANTS = {                                          # RLConfig fields → what the plain loop passes to policy_loss
    "gspo": dict(ratio_level="sequence", eps_low=3e-4, eps_high=4e-4),
    "cispo": dict(loss_mode="cispo", eps_low=1.0, eps_high=0.05),
    "delta": dict(delta=1.02),
    "bnpo": dict(loss_type="bnpo", micro_batch=4),
    "entropy": dict(top_entropy_quantile=0.2),
    "kl_bias": dict(beta=0.1, kl_bias_correction=True),
    "sapo": dict(loss_mode="sapo", tau_pos=3.0, tau_neg=2.0),
    "cispo cap": dict(loss_mode="cispo", eps_low=1.0, cispo_cap=0.2),
    "entropy, micro-batches": dict(top_entropy_quantile=0.2, entropy_micro_batches=4),
}


def _naive_variant_step(model, cfg, seed):
    """One ``train_rl`` step of a loss variant, written plainly: the rollout, GRPO's advantages,
    then μ Adam steps, each on the whole batch (every row, one plain forward) with the loss and
    gradient of ``rl.policy_loss`` given the variant's keywords; the top-entropy tokens from
    ``rl.token_entropy`` of the logits at each step. Returns the policy."""
    rng = np.random.default_rng(seed)
    policy = model.copy()
    digits, _ = task.make_prompts(cfg.n_prompts, rng, cfg.min_digits)
    ro = T.rollout(policy, digits, cfg.G, rng, cfg.temperature, _half)
    seqs, mask = ro.seqs, ro.mask
    old = ref = model.logprobs(seqs)                                     # π_old = π_ref = the start
    R = ro.reward.reshape(cfg.n_prompts, cfg.G)
    adv = ((R - R.mean(1, keepdims=True)) / (R.std(1, keepdims=True) + 1e-4)).ravel()
    opt = M.Adam(cfg.lr, grad_clip=cfg.grad_clip)
    for _ in range(cfg.mu):
        logits = policy.forward(seqs[:, :-1])
        lp, probs = M.token_logprobs(logits, seqs[:, 1:])
        pg_mask = (rl.high_entropy_mask(rl.token_entropy(logits), mask, cfg.top_entropy_quantile,
                                        micro_batches=cfg.entropy_micro_batches)
                   if cfg.top_entropy_quantile < 1 else None)
        _, dlp = rl.policy_loss(lp, old, adv, mask, cfg.loss_type or "grpo", cfg.eps_low, cfg.eps_high,
                                cfg.beta, ref, ratio_level=cfg.ratio_level, loss_mode=cfg.loss_mode,
                                delta=cfg.delta, micro_batch=cfg.micro_batch, pg_mask=pg_mask,
                                kl_bias_correction=cfg.kl_bias_correction, tau_pos=cfg.tau_pos,
                                tau_neg=cfg.tau_neg, cispo_cap=cfg.cispo_cap)
        policy.backward(M.token_logprobs_backward(probs, seqs[:, 1:], dlp))
        opt.step(policy)
    return policy


@pytest.mark.parametrize("name", VARIANTS)
def test_each_loss_variant_trains_on_rl_policy_loss_by_a_plain_loop(name):
    """Each variant's first ``train_rl`` step (μ = 3, so that the ratios leave 1 and the variants
    differ) equals the plain loop above through ``rl.policy_loss``, in float64; and differs from
    GRPO's step (the wiring passes the variant on)."""
    m = M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0, dtype=np.float64)
    cfg = T.RLConfig(steps=1, n_prompts=4, G=4, mu=3, lr=3e-2, **VARIANTS[name])
    want = _naive_variant_step(m, cfg, seed=3)
    got, h = T.train_rl(m, cfg, seed=3, reward_fn=_half, progress=False)
    grpo, _ = T.train_rl(m, T.RLConfig(steps=1, n_prompts=4, G=4, mu=3, lr=3e-2, beta=cfg.beta),
                         seed=3, reward_fn=_half, progress=False)
    assert 0 < h["reward"][0] < 1
    for k, v in want.state_dict().items():
        np.testing.assert_allclose(got.state_dict()[k], v, rtol=1e-6, atol=1e-8, err_msg=k)
    assert not all(np.allclose(v, grpo.state_dict()[k], rtol=1e-6, atol=1e-8)
                   for k, v in got.state_dict().items())


@pytest.mark.parametrize("name, kw", [("gspo", VARIANTS["gspo"]), ("cispo", VARIANTS["cispo"]),
                                      ("delta", VARIANTS["delta"]), ("sapo", VARIANTS["sapo"]),
                                      ("bnpo_1", dict(loss_type="bnpo", micro_batch=1))])
def test_at_one_update_per_batch_the_variants_are_grpo(name, kw):
    """μ = 1: the ratio is exactly 1 at the only update, so GSPO (even with its clip of 3e-4),
    CISPO, δ, SAPO (its gate's slope is 1 at ρ = 1, whatever τ) and bnpo with micro-batches of
    one answer train exactly as GRPO: 3 steps, the same samples, the parameters equal to 1e-10
    (float64; the sums run in another order, and Adam divides the rounding of a zero gradient, the
    key bias's, by ε = 1e-8)."""
    m = M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0, dtype=np.float64)
    base = dict(steps=3, n_prompts=4, G=4, mu=1, lr=3e-2)
    want, hw = T.train_rl(m, T.RLConfig(**base), seed=1, reward_fn=_half, progress=False)
    got, hg = T.train_rl(m, T.RLConfig(**base, **kw), seed=1, reward_fn=_half, progress=False)
    assert hg["accuracy"] == hw["accuracy"] and hg["reward"] == hw["reward"]
    for k, v in want.state_dict().items():
        np.testing.assert_allclose(got.state_dict()[k], v, rtol=0, atol=1e-10, err_msg=k)
    assert any(np.abs(v - m.state_dict()[k]).max() > 1e-3 for k, v in want.state_dict().items())   # it moved


# ----------------------------------------------------------------------------- the reward hook, LM-PPO
def tiny_model():
    return M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0)


def test_default_reward_fn_is_the_exact_verifier():
    m = tiny_model()
    cfg = T.RLConfig(steps=3, n_prompts=4, G=4, lr=1e-2)
    p1, h1 = T.train_rl(m, cfg, seed=0)
    p2, h2 = T.train_rl(m, cfg, seed=0, reward_fn=T.exact_reward)
    assert np.array_equal(h2["reward"], h2["accuracy"]) and np.array_equal(h1["reward"], h1["accuracy"])
    for k in h1:
        if k != "time":
            assert np.array_equal(h1[k], h2[k], equal_nan=True), k
    for k, v in p1.state_dict().items():
        assert np.array_equal(v, p2.state_dict()[k])
    rng = np.random.default_rng(0)
    digits, _ = task.make_prompts(6, rng)
    ro = T.rollout(m, digits, 3, rng)
    np.testing.assert_array_equal(ro.reward, task.verify_batch(ro.answers, ro.digits)["reward"])


def test_reward_fn_is_what_is_trained_on_and_accuracy_stays_the_verifiers():
    m = tiny_model()
    seen = []

    def proxy(ans, digits):
        seen.append((ans.shape, digits.shape))
        return rewards.consistency_reward(task.decode_rows(ans))

    _, h = T.train_rl(m, T.RLConfig(steps=2, n_prompts=3, G=4), seed=0, reward_fn=proxy)
    assert seen[0][0][0] == 12 and seen[0][1] == (12, 10)
    # a constant reward: every group is degenerate, GRPO does not move the policy
    p, h = T.train_rl(m, T.RLConfig(steps=2, n_prompts=3, G=4), seed=0,
                      reward_fn=lambda ans, digits: np.full(len(ans), 3.0))
    assert h["reward"] == [3.0, 3.0] and h["all_right"] == [0.0, 0.0]
    for k, v in p.state_dict().items():
        assert np.array_equal(v, m.state_dict()[k])
    with pytest.raises(ValueError, match="reward_fn"):
        T.train_rl(m, T.RLConfig(steps=1, n_prompts=2, G=2), reward_fn=lambda a, d: np.zeros(3))


def test_lm_ppo_records_score_kl_reward_and_total():
    m = tiny_model()
    cfg = T.RLConfig(algo="ppo", steps=3, n_prompts=4, G=4, mu=2, kl_coef=0.1, lr=1e-2)
    starts_with_hash = lambda ans, digits: (ans[:, 0] == task.STOI["#"]).astype(float)   # something to learn
    _, h = T.train_rl(m, cfg, seed=0, reward_fn=starts_with_hash)
    np.testing.assert_allclose(np.add(h["score"], h["kl_reward"]), h["total_reward"], atol=1e-12)
    assert h["kl_reward"][0] == 0.0                         # the policy starts as the reference
    assert all(k <= 0 for k in h["kl_reward"])              # clamped KL_t >= 0
    assert h["kl_reward"][-1] < 0                           # it has moved away
    np.testing.assert_array_equal(h["score"], h["reward"])


def test_lm_ppo_advantages_are_gae_of_the_shaped_reward(monkeypatch):
    """train_rl hands toy.rl.gae the shaped per-token reward and its own values."""
    calls = []
    real_gae = rl.gae

    def spy(rewards, values, mask, gamma=1.0, lam=1.0):
        calls.append((rewards, mask))
        return real_gae(rewards, values, mask, gamma, lam)

    monkeypatch.setattr(rl.ppo, "gae", spy)                   # what rl.ppo_targets calls
    m = tiny_model()
    T.train_rl(m, T.RLConfig(algo="ppo", steps=2, n_prompts=2, G=2, kl_coef=0.5, lr=1e-2), seed=0)
    assert len(calls) == 2
    tok_r, mask = calls[1]
    assert np.all(tok_r[mask == 0] == 0)
    last = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
    body = tok_r.copy()
    body[np.arange(len(mask)), last] = 0
    assert np.all(body <= 0)                                # only −β·max(KL, 0) before the last token


@pytest.mark.parametrize("kw", [dict(kl_coef=-0.1, algo="ppo"), dict(kl_coef=0.1, algo="grpo")])
def test_kl_coef_is_checked(kw):
    with pytest.raises(ValueError, match="kl_coef"):
        T.RLConfig(**kw)


def test_lm_ppo_kl_is_log_pi_old_minus_log_pi_ref_on_the_sampled_tokens(monkeypatch):
    m = tiny_model()
    cfg = T.RLConfig(algo="ppo", steps=2, n_prompts=4, G=4, kl_coef=0.2, kl_clamp=False, lr=1e-2)
    reward_fn = lambda ans, digits: ((ans[:, 0] + ans[:, 1]) % 2).astype(float)   # about half the answers
    after_one, _ = T.train_rl(m, dataclasses.replace(cfg, steps=1), seed=0, reward_fn=reward_fn)
    got, real_rollout, real_shaped = {}, T._scored, rl.kl_shaped_rewards
    monkeypatch.setattr(T, "_scored", lambda *a, **k: got.setdefault("ro", []).append(real_rollout(*a, **k)) or got["ro"][-1])
    monkeypatch.setattr(rl, "kl_shaped_rewards", lambda kl, *a: got.setdefault("kl", []).append(kl) or real_shaped(kl, *a))
    _, h = T.train_rl(m, cfg, seed=0, reward_fn=reward_fn)
    ro = got["ro"][1]                                       # the second step samples from after_one
    want = after_one.logprobs(ro.seqs) - m.logprobs(ro.seqs)
    np.testing.assert_allclose(got["kl"][1] * ro.mask, want * ro.mask, atol=1e-5)
    np.testing.assert_allclose(h["kl_reward"][1], np.mean(-0.2 * (want * ro.mask).sum(axis=1)), atol=1e-5)
    assert np.abs(want * ro.mask).max() > 1e-3              # the policy has moved: the test can fail


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_LM = M.TinyLM(TINY, seed=0)
_RNG = np.random.default_rng(0)
_D = np.arange(10)[None] % 10
BAD_INPUTS = [
    (T.SFTConfig, (), {"min_digits": 11}, "min_digits"),
    (T.RLConfig, (), {"min_digits": 0}, "min_digits"),
    (T.SFTConfig, (), {"steps": -1}, "steps"),
    (T.SFTConfig, (), {"batch_size": 0}, "batch_size"),
    (T.SFTConfig, (), {"lr": np.nan}, "lr"),
    (T.SFTConfig, (), {"warmup_steps": -1}, "warmup_steps"),
    (T.SFTConfig, (), {"think_prob": 1.5}, "think_prob"),
    (T.SFTConfig, (), {"teacher_error_rate": None}, "teacher_error_rate"),
    (T.SFTConfig, (), {"seed": "0"}, "seed"),
    (T.SFTConfig, (), {"model": {"n_layer": 1}}, "model"),
    (T.train_sft, ({"steps": 3},), {}, "cfg"),
    (T.train_sft, (), {"callback": 3}, "callback"),
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
    (T.RLConfig, (), {"n_minibatches": 0}, "n_minibatches"),
    (T.RLConfig, (), {"n_minibatches": 2.5}, "n_minibatches"),
    (T.RLConfig, (), {"n_prompts": 2, "G": 2, "n_minibatches": 5}, "n_minibatches"),   # > the 4 answers
    (T.RLConfig, (), {"ratio_level": "answer"}, "ratio_level"),
    (T.RLConfig, (), {"loss_mode": "reinforce"}, "loss_mode"),
    (T.RLConfig, (), {"delta": 1.0}, "delta"),
    (T.RLConfig, (), {"delta": 4.0, "loss_mode": "cispo"}, "delta"),
    (T.RLConfig, (), {"micro_batch": 8}, "micro_batch"),                 # only with loss_type="bnpo"
    (T.RLConfig, (), {"micro_batch": 0, "loss_type": "bnpo"}, "micro_batch"),
    (T.RLConfig, (), {"micro_batch": 3, "loss_type": "bnpo"}, "micro_batch"),   # 3 ∤ 32 · 8
    (T.RLConfig, (), {"micro_batch": 8, "loss_type": "bnpo", "algo": "rft"}, "micro_batch"),
    (T.RLConfig, (), {"top_entropy_quantile": 1.5}, "top_entropy_quantile"),
    (T.RLConfig, (), {"top_entropy_quantile": None}, "top_entropy_quantile"),
    (T.RLConfig, (), {"kl_bias_correction": 1}, "kl_bias_correction"),
    (T.RLConfig, (), {"eps_low": 1.0}, "eps_low"),                        # 1 only for CISPO (no lower bound)
    (T.RLConfig, (), {"loss_mode": "sapo", "tau_pos": 0}, "tau_pos"),
    (T.RLConfig, (), {"tau_pos": "1"}, "tau_pos"),
    (T.RLConfig, (), {"tau_neg": -1.05}, "tau_neg"),
    (T.RLConfig, (), {"tau_neg": np.nan}, "tau_neg"),
    (T.RLConfig, (), {"loss_mode": "sapo", "loss_type": "dapo"}, "loss_type"),   # SAPO: the "grpo" aggregation
    (T.RLConfig, (), {"loss_mode": "sapo", "delta": 2.0}, "delta"),
    (T.RLConfig, (), {"cispo_cap": 0.2}, "cispo_cap"),                    # only with loss_mode="cispo"
    (T.RLConfig, (), {"cispo_cap": 0.2, "loss_mode": "cispo", "eps_low": 0.2}, "cispo_cap"),   # below 1 − eps_low
    (T.RLConfig, (), {"cispo_cap": 0.2, "loss_mode": "cispo", "eps_low": 1.0, "eps_high": 0.28}, "cispo_cap"),
    (T.RLConfig, (), {"cispo_cap": 0, "loss_mode": "cispo", "eps_low": 1.0}, "cispo_cap"),
    (T.RLConfig, (), {"cispo_cap": "0.2", "loss_mode": "cispo", "eps_low": 1.0}, "cispo_cap"),
    (T.RLConfig, (), {"entropy_micro_batches": 2}, "entropy_micro_batches"),   # only with top_entropy_quantile < 1
    (T.RLConfig, (), {"entropy_micro_batches": 0, "top_entropy_quantile": 0.2}, "entropy_micro_batches"),
    (T.RLConfig, (), {"entropy_micro_batches": 1.5, "top_entropy_quantile": 0.2}, "entropy_micro_batches"),
    (T.RLConfig, (), {"entropy_micro_batches": 3, "top_entropy_quantile": 0.2}, "entropy_micro_batches"),   # 3 ∤ 256
    (T.RLConfig, (), {"entropy_micro_batches": 2, "top_entropy_quantile": 0.2, "algo": "rft"}, "entropy_micro_batches"),
    (T.rollout, (_LM, _D, 0, _RNG), {}, "G"),                        # was reported as n_repeat
    (T.rollout, (_LM, _D, 2, _RNG), {"temperature": 0}, "temperature"),
    (T.rollout, (_LM, [[1] * 9], 2, _RNG), {}, "digits"),
    (T.rollout, ("model", _D, 2, _RNG), {}, "model"),
    (T.rollout, (_LM, _D, 2, None), {}, "rng"),
    (MANY.DistinctRows, (np.ones((2, 12), int), [True]), {}, "needed"),
    (MANY.DistinctRows, (np.ones((2, 12), int), [1, 0]), {}, "needed"),
    (MANY.DistinctRows, (np.ones(12, int), [True]), {}, "seqs"),
    (T.CurriculumSampler, ([],), {}, "pool"),
    (T.CurriculumSampler, (5,), {}, "pool"),
    (T.CurriculumSampler, (_D,), {"init": 2}, "init"),
    (T.CurriculumSampler, (_D,), {"success_decay": -1}, "success_decay"),
    (T.CurriculumSampler, (_D,), {"floor": 0}, "floor"),
    (T.CurriculumSampler(_D), (0, _RNG), {}, "n"),
    (T.CurriculumSampler(_D), (2, None), {}, "rng"),
    (T.CurriculumSampler(_D).update, (np.ones((2, 4)),), {}, "rewards"),     # before any draw
    (T.train_rl, ("model",), {}, "policy"),
    (T.train_rl, (_LM, {"steps": 1}), {}, "cfg"),
    (T.train_rl, (_LM,), {"seed": -1}, "seed"),
    (T.train_rl, (_LM,), {"callback": "print"}, "callback"),
    (T.train_rl, (_LM,), {"prompt_sampler": [1, 2]}, "prompt_sampler"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)
