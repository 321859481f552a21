"""The loss variants of toy.rl (GSPO, CISPO and its cap below 1, SAPO, "bnpo", δ, high-entropy tokens,
per batch and per micro-batch, the importance-weighted KL) against finite differences and against the libraries' own formulas, transcribed to numpy from
the released wheels (trl 1.16.0, verl 0.9.1; file:line at each transcription). A `.detach()` in the
library code is a constant here: the library's autograd gradient is the finite difference of its
loss with the detached quantities frozen at the evaluation point."""
import numpy as np
import pytest

from finite_differences import central
from toy import rl


def batch(seed=0, N=4, T=6, spread=0.3):
    rng = np.random.default_rng(seed)
    lp = rng.normal(-1.2, 0.4, (N, T))                      # log π_θ
    old = lp + rng.normal(0, spread, (N, T))                # log π_old: ratios from ~0.5 to ~2
    ref = lp + rng.normal(0, 0.3, (N, T))                   # log π_ref
    m = (rng.random((N, T)) < 0.75).astype(float)
    m[:, 0] = 1                                             # every answer has a token
    adv = rng.normal(size=N)
    return lp, old, ref, m, adv


# ----------------------------------------------------------------------------- library formulas
# TRL 1.16.0, trl/trainer/grpo_trainer.py, GRPOTrainer._compute_loss
def trl_loss(lp, old, adv, mask, *, loss_type="grpo", level="token", eps_low=0.2, eps_high=0.2, delta=None,
             cispo=False, sapo=False, tau_pos=1.0, tau_neg=1.05, beta=0.0, ref=None, bias_correction=True,
             entropy_mask=None, max_completion_length=None, micro_batch=None, frozen=None):
    """TRL's loss for one generation batch. ``frozen``: the log π at which `.detach()`ed factors are
    evaluated (default: ``lp`` itself)."""
    frozen = lp if frozen is None else frozen
    A = adv[:, None]
    log_ratio = lp - old
    if level == "token":                                                          # :3084-3085
        log_w = log_ratio
    else:                                                                         # :3086-3088
        log_w = ((log_ratio * mask).sum(-1) / np.maximum(mask.sum(-1), 1.0))[:, None]
    coef_1 = np.exp(log_w)                                                        # :3095
    if beta != 0.0:                                                               # :3098-3105
        per_token_kl = np.exp(ref - lp) - (ref - lp) - 1
        if bias_correction:
            per_token_kl = per_token_kl * coef_1
    if cispo:                                                                     # :3109-3111
        frozen_log_w = frozen - old if level == "token" else (
            ((frozen - old) * mask).sum(-1) / mask.sum(-1))[:, None]
        clamped = np.minimum(np.exp(frozen_log_w), eps_high)                      # .detach()
        per_token_loss = -clamped * A * lp
    elif sapo:                                                                    # :3121-3124
        temperatures = np.where(A > 0, tau_pos, tau_neg) * np.ones_like(coef_1)   # sapo_temperature_pos/_neg
        soft_coef_1 = 1 / (1 + np.exp(-temperatures * (coef_1 - 1))) * 4 / temperatures
        per_token_loss = -soft_coef_1 * A
    else:                                                                         # :3112-3120
        coef_2 = np.clip(coef_1, 1 - eps_low, 1 + eps_high)
        if delta is not None:
            coef_1 = np.minimum(coef_1, delta)
        per_token_loss = -np.minimum(coef_1 * A, coef_2 * A)
    per_token_loss = per_token_loss * np.ones_like(mask)                         # (B, 1) broadcasts
    if entropy_mask is not None:                                                  # :3143-3144
        per_token_loss = per_token_loss * entropy_mask
    if beta != 0.0:                                                               # :3149-3150
        per_token_loss = per_token_loss + beta * per_token_kl
    if loss_type in ("grpo", "sapo"):                                             # :3153-3157
        return ((per_token_loss * mask).sum(-1) / np.maximum(mask.sum(-1), 1.0)).mean()
    if loss_type == "bnpo":   # :3158-3162, one micro-batch per device step, ÷ gradient-accumulation steps
        chunks = range(0, len(mask), micro_batch)
        return sum((per_token_loss[i:i + micro_batch] * mask[i:i + micro_batch]).sum()
                   / max(mask[i:i + micro_batch].sum(), 1.0) for i in chunks) / len(chunks)
    if loss_type == "dr_grpo":                                                    # :3163-3167
        return (per_token_loss * mask).sum() / (per_token_loss.shape[0] * max_completion_length)
    if loss_type == "dapo":   # :3168-3174, one process, steps_per_generation = accumulation steps
        return (per_token_loss * mask).sum() / max(mask.sum(), 1.0)
    raise AssertionError(loss_type)


# verl 0.9.1, verl/trainer/ppo/core_algos.py
def verl_agg(loss_mat, mask, mode):                                              # agg_loss, :1140-1206
    if mode == "token-mean":                                                      # :1170-1175
        return (loss_mat * mask).sum() / mask.sum()
    if mode == "seq-mean-token-mean":                                             # :1194-1202
        seq = (loss_mat * mask).sum(-1) / (mask.sum(-1) + 1e-8)
        return seq.sum() / (mask.sum(-1) > 0).sum()
    raise AssertionError(mode)


VERL_REL = 1e-7   # seq-mean-token-mean divides by (length + 1e-8): relative differences of ~1e-8


def verl_vanilla(lp, old, adv, mask, clip_low=0.2, clip_high=0.2, clip_ratio_c=3.0, mode="token-mean"):
    A = adv[:, None] * np.ones_like(mask)             # compute_policy_loss_vanilla, :1286-1376
    ratio = np.exp(np.clip(lp - old, -20.0, 20.0))                                # :1339-1341
    pg_losses1 = -A * ratio
    pg_losses2 = -A * np.clip(ratio, 1 - clip_low, 1 + clip_high)
    clip_pg_losses1 = np.maximum(pg_losses1, pg_losses2)
    pg_losses3 = -A * clip_ratio_c                                                # :1355
    clip_pg_losses2 = np.minimum(pg_losses3, clip_pg_losses1)                     # :1356
    pg_losses = np.where(A < 0, clip_pg_losses2, clip_pg_losses1)                 # :1361
    return verl_agg(pg_losses, mask, mode)


def verl_gspo(lp, old, adv, mask, clip_low=0.2, clip_high=0.2, mode="seq-mean-token-mean", frozen=None):
    frozen = lp if frozen is None else frozen         # compute_policy_loss_gspo, :1545-1620
    A = adv[:, None]
    seq = ((frozen - old) * mask).sum(-1) / np.maximum(mask.sum(-1), 1)           # :1583-1584 (detached)
    log_s = np.minimum(lp - frozen + seq[:, None], 10.0)                          # :1589-1590
    s = np.exp(log_s)
    pg_losses = np.maximum(-A * s, -A * np.clip(s, 1 - clip_low, 1 + clip_high))  # :1595-1597
    return verl_agg(pg_losses, mask, mode)


def verl_cispo(lp, old, adv, mask, clip_low=0.2, clip_high=0.2, mode="token-mean", frozen=None):
    frozen = lp if frozen is None else frozen         # compute_policy_loss_cispo, :2047-2100
    ratio = np.exp(np.clip(frozen - old, -20.0, 20.0))                            # :2072-2074
    clipped_ratio_sg = np.clip(ratio, 1 - clip_low, 1 + clip_high)                # :2079-2080 (detached)
    return verl_agg(-clipped_ratio_sg * adv[:, None] * lp, mask, mode)            # :2084


def trl_epsilon_high(epsilon=0.2, epsilon_high=None):
    """GRPOTrainer.__init__, trl/trainer/grpo_trainer.py:945-946 (GRPOConfig defaults: epsilon = 0.2,
    grpo_config.py:693-695; epsilon_high = None, :705-706): the value CISPO's weight is clamped at (:3110)."""
    epsilon_low = epsilon                                                         # noqa: F841 (unused by cispo)
    return epsilon_high if epsilon_high is not None else epsilon


def trl_high_entropy_mask(entropies, mask, top_entropy_quantile, steps):
    """TRL's entropy mask of one generation batch cut into ``steps`` micro-batches: split_tensor_dict
    (trl/trainer/utils.py:1077-1083, equal consecutive chunks) after _prepare_inputs shuffles the rows
    (grpo_trainer.py:1543-1544; here the rows are already in their shuffled order), then, per
    micro-batch, get_high_entropy_mask (grpo_trainer.py:1380-1416) with 1 - top_entropy_quantile (:3050)."""
    chunk_size = entropies.shape[0] // steps                                      # utils.py:1077
    out = []
    for i in range(steps):                                                        # utils.py:1079-1083
        ent, m = entropies[i * chunk_size:(i + 1) * chunk_size], mask[i * chunk_size:(i + 1) * chunk_size]
        gathered = ent[m.astype(bool)].astype(np.float32)                         # :1397 (.float()), one process
        if gathered.size == 0:                                                    # :1410-1411
            out.append(np.zeros(ent.shape, bool))
            continue
        entropy_threshold = np.quantile(gathered, 1 - top_entropy_quantile)      # :1413, torch.quantile: linear
        out.append(((ent * m) >= entropy_threshold) & m.astype(bool))             # :1414-1416
    return np.concatenate(out)


def verl_sapo(lp, old, adv, mask, tau_pos=1.0, tau_neg=1.05):
    A = adv[:, None] * np.ones_like(mask)             # compute_policy_loss_sapo, :1622-1704
    gate_function = lambda x, tau: 1 / (1 + np.exp(-tau * (x - 1.0))) * (4.0 / tau)   # :1657-1659
    ratio = np.exp(np.clip(lp - old, -20.0, 20.0))                                # :1664-1668
    taus = np.where(A > 0, tau_pos, tau_neg)                                      # :1671-1675
    pg_losses = -gate_function(ratio, taus) * A                                   # :1678-1681
    return verl_agg(pg_losses, mask, "seq-mean-token-mean")                       # :1688-1690, whatever the mode


def library_grad(loss, lp, **kw):
    """The autograd gradient of a library loss: finite differences with the detached factors frozen."""
    return central(lambda x: loss(x, frozen=lp, **kw), lp)


# ----------------------------------------------------------------------------- finite differences
CONFIGS = [
    dict(),
    dict(delta=1.5),
    dict(delta=1.1, eps_high=0.28),
    dict(ratio_level="sequence"),
    dict(ratio_level="sequence", loss_type="dapo", delta=1.3),
    dict(loss_type="bnpo", micro_batch=2),
    dict(loss_type="dr_grpo", max_len=8, delta=2.0),
    dict(beta=0.1, kl_bias_correction=True),
    dict(beta=0.1, kl_bias_correction=True, ratio_level="sequence"),
    dict(beta=0.1, pg_mask="entropy"),
    dict(loss_type="sum", pg_mask="entropy", ratio_level="sequence"),
    dict(loss_mode="sapo"),
    dict(loss_mode="sapo", tau_pos=3.0, tau_neg=0.5, beta=0.1, ratio_level="sequence"),
    dict(loss_mode="sapo", pg_mask="entropy, 2 micro-batches"),
    dict(loss_type="dapo", pg_mask="entropy, 2 micro-batches", beta=0.1),
]


def _kw(cfg, m, seed=0):
    cfg = dict(cfg)
    if str(cfg.get("pg_mask")).startswith("entropy"):
        h = np.random.default_rng(seed + 100).random(m.shape)
        cfg["pg_mask"] = rl.high_entropy_mask(h, m, 0.4, 2 if "micro" in cfg["pg_mask"] else 1)
    return cfg


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_variant_gradient_matches_finite_differences(cfg, seed):
    lp, old, ref, m, adv = batch(seed)
    kw = _kw(cfg, m, seed)
    loss, g = rl.policy_loss(lp, old, adv, m, ref_logp=ref, **kw)
    fd = central(lambda x: rl.policy_loss(x, old, adv, m, ref_logp=ref, **kw)[0], lp)
    np.testing.assert_allclose(g, fd * m, atol=1e-8)
    assert np.all(g[m == 0] == 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("cap", [dict(eps_high=0.3), dict(cispo_cap=0.2), dict(cispo_cap=0.9)])
def test_cispo_gradient_is_the_stop_gradient_weight(seed, level, cap):
    # sg(ŵ): the gradient is the finite difference with the ratio held fixed; shifting old_logp with
    # logp keeps every ratio (token or sequence) where it is
    lp, old, ref, m, adv = batch(seed, spread=0.5)
    kw = dict(loss_mode="cispo", eps_low=None, ratio_level=level, beta=0.05, **cap)
    _, g = rl.policy_loss(lp, old, adv, m, ref_logp=ref, **kw)
    fd = central(lambda x: rl.policy_loss(x, old + (x - lp), adv, m, ref_logp=ref, **kw)[0], lp)
    np.testing.assert_allclose(g, fd * m, atol=1e-8)
    ratio = np.exp(lp - old)
    assert (ratio > 1.3).any() and (ratio < 0.8).any()     # both ends of the clip are exercised


# ----------------------------------------------------------------------------- against TRL 1.16.0
TRL_CASES = [
    (dict(), dict()),
    (dict(delta=1.5), dict(delta=1.5)),
    (dict(delta=1.1, eps_high=0.28), dict(delta=1.1, eps_high=0.28)),
    (dict(ratio_level="sequence"), dict(level="sequence")),
    (dict(ratio_level="sequence", loss_type="dapo"), dict(level="sequence", loss_type="dapo")),
    (dict(loss_type="bnpo", micro_batch=2), dict(loss_type="bnpo", micro_batch=2)),
    (dict(loss_type="bnpo", micro_batch=1), dict(loss_type="bnpo", micro_batch=1)),
    (dict(loss_type="dr_grpo", max_len=8), dict(loss_type="dr_grpo", max_completion_length=8)),
    (dict(beta=0.1), dict(beta=0.1, bias_correction=False)),
    (dict(beta=0.1, kl_bias_correction=True), dict(beta=0.1, bias_correction=True)),
    (dict(beta=0.1, kl_bias_correction=True, ratio_level="sequence"),
     dict(beta=0.1, bias_correction=True, level="sequence")),
    # TRL's cispo: clamp(coef_1, max=epsilon_high), epsilon_high being the cap itself (recommended 5.0)
    (dict(loss_mode="cispo", eps_low=None, eps_high=0.25, loss_type="dapo"),
     dict(cispo=True, eps_high=1.25, loss_type="dapo")),
    (dict(loss_mode="cispo", eps_low=None, eps_high=0.25, ratio_level="sequence"),
     dict(cispo=True, eps_high=1.25, level="sequence")),
    # ... and with TRL's default epsilon_high=None, the cap is epsilon = 0.2 itself: cispo_cap
    (dict(loss_mode="cispo", eps_low=None, cispo_cap=0.2, loss_type="dapo"),
     dict(cispo=True, eps_high=trl_epsilon_high(), loss_type="dapo")),
    (dict(loss_mode="cispo", eps_low=None, cispo_cap=0.2, ratio_level="sequence", beta=0.1),
     dict(cispo=True, eps_high=trl_epsilon_high(), level="sequence", beta=0.1, bias_correction=False)),
    # loss_type="sapo": the soft gate, aggregated like "grpo"
    (dict(loss_mode="sapo"), dict(sapo=True, loss_type="sapo")),
    (dict(loss_mode="sapo", tau_pos=2.0, tau_neg=0.7, ratio_level="sequence", beta=0.1, kl_bias_correction=True),
     dict(sapo=True, loss_type="sapo", tau_pos=2.0, tau_neg=0.7, level="sequence", beta=0.1)),
]


@pytest.mark.parametrize("toy_kw, trl_kw", TRL_CASES)
@pytest.mark.parametrize("seed", [0, 3])
def test_variant_matches_trl_formula(toy_kw, trl_kw, seed):
    lp, old, ref, m, adv = batch(seed, spread=0.4)
    trl_kw = {"eps_high": toy_kw.get("eps_high", 0.2), **trl_kw}
    loss, g = rl.policy_loss(lp, old, adv, m, ref_logp=ref, **toy_kw)
    assert loss == pytest.approx(trl_loss(lp, old, adv, m, ref=ref, **trl_kw), abs=1e-12)
    np.testing.assert_allclose(g, library_grad(trl_loss, lp, old=old, adv=adv, mask=m, ref=ref, **trl_kw) * m,
                               atol=1e-8)


@pytest.mark.parametrize("seed", [0, 4])
def test_high_entropy_tokens_match_trl(seed):
    lp, old, ref, m, adv = batch(seed)
    h = np.random.default_rng(seed).gamma(1.0, size=m.shape)
    keep = rl.high_entropy_mask(h, m, 0.3)
    # get_high_entropy_mask, trl/trainer/grpo_trainer.py:1380-1416, called with 1 - top_entropy_quantile (:3050)
    threshold = np.quantile(h[m.astype(bool)], 1 - 0.3)                          # torch.quantile, linear
    trl_keep = ((h * m) >= threshold) & m.astype(bool)                            # :1414-1416
    np.testing.assert_array_equal(keep, trl_keep.astype(float))
    loss, g = rl.policy_loss(lp, old, adv, m, loss_type="dapo", pg_mask=keep, beta=0.1, ref_logp=ref)
    kw = dict(old=old, adv=adv, mask=m, loss_type="dapo", entropy_mask=keep, beta=0.1, ref=ref, bias_correction=False)
    assert loss == pytest.approx(trl_loss(lp, **kw), abs=1e-12)
    np.testing.assert_allclose(g, library_grad(trl_loss, lp, **kw) * m, atol=1e-8)
    # the policy-gradient term of a dropped token is gone, its KL term stays, the normaliser is unchanged
    _, g0 = rl.policy_loss(lp, old, adv, m, loss_type="dapo", pg_mask=keep)
    assert np.all(g0[(keep == 0)] == 0) and np.any(g0[keep == 1] != 0)


@pytest.mark.parametrize("seed", [0, 4, 8])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_high_entropy_tokens_per_micro_batch_match_trl(seed, k):
    lp, old, ref, m, adv = batch(seed, N=8)
    # entropies on a coarse grid (ties with the threshold), high values on masked tokens (never counted)
    h = np.round(np.random.default_rng(seed).gamma(1.0, size=m.shape), 1) + 5 * (m == 0)
    h = h.astype(np.float32).astype(float)                  # the values TRL's .float() sees
    keep = rl.high_entropy_mask(h, m, 0.3, micro_batches=k)
    np.testing.assert_array_equal(keep, trl_high_entropy_mask(h, m, 0.3, k).astype(float))
    kw = dict(old=old, adv=adv, mask=m, loss_type="bnpo", micro_batch=8 // k, entropy_mask=keep, beta=0.1, ref=ref,
              bias_correction=False)
    loss, g = rl.policy_loss(lp, old, adv, m, loss_type="bnpo", micro_batch=8 // k, pg_mask=keep, beta=0.1,
                             ref_logp=ref)
    assert loss == pytest.approx(trl_loss(lp, **kw), abs=1e-12)
    np.testing.assert_allclose(g, library_grad(trl_loss, lp, **kw) * m, atol=1e-8)


def test_high_entropy_mask_per_micro_batch_by_hand():
    h = np.array([[0.1, 0.9], [0.5, 0.5], [3.0, 4.0], [2.0, 9.0]])
    m = np.array([[1, 1], [1, 1], [1, 1], [1, 0.0]])
    # one batch: generated 0.1 .9 .5 .5 3 4 2, the top half from the median 0.9: .9 3 4 2
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m, 0.5), [[0, 1], [0, 0], [1, 1], [1, 0]])
    # two micro-batches: rows 0-1 (0.1 .9 .5 .5: threshold 0.5, both ties kept) and rows 2-3 (3 4 2: 3)
    assert naive_quantile([0.1, 0.9, 0.5, 0.5], 0.5) == 0.5 and naive_quantile([3.0, 4.0, 2.0], 0.5) == 3.0
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m, 0.5, micro_batches=2), [[0, 1], [1, 1], [1, 1], [0, 0]])
    # a micro-batch with no generated token keeps none (TRL's gathered.numel() == 0)
    m0 = m.copy()
    m0[2:] = 0
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m0, 0.5, micro_batches=2), [[0, 1], [1, 1], [0, 0], [0, 0]])


def naive_quantile(x, q):
    """The linearly interpolated quantile of a sorted list, by hand (numpy's and torch's default)."""
    s = sorted(x)
    pos = q * (len(s) - 1)
    lo = int(pos)
    return s[lo] + (pos - lo) * (s[min(lo + 1, len(s) - 1)] - s[lo])


def test_high_entropy_mask_by_hand():
    h = np.array([[0.1, 0.9, 0.5, 7.0], [0.3, 0.2, 0.8, 0.0]])
    m = np.array([[1, 1, 1, 0], [1, 1, 1, 1.0]])
    # generated entropies 0.1 .9 .5 .3 .2 .8 0: the top 30 % quantile is at 0.56; the masked 7.0 never counts
    assert naive_quantile([0.1, 0.9, 0.5, 0.3, 0.2, 0.8, 0.0], 0.7) == pytest.approx(0.56)
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m, 0.3), [[0, 1, 0, 0], [0, 0, 1, 0]])
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m, 1.0), m)
    np.testing.assert_array_equal(rl.high_entropy_mask(h, m, 0.0), [[0, 1, 0, 0], [0, 0, 0, 0]])


def test_token_entropy_by_hand():
    np.testing.assert_allclose(rl.token_entropy(np.zeros((2, 4))), np.log(4))
    p = np.array([0.7, 0.2, 0.1])
    assert rl.token_entropy(np.log(p)) == pytest.approx(-(p * np.log(p)).sum())


# ----------------------------------------------------------------------------- against verl 0.9.1
@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("delta", [1.2, 1.5, 3.0])
def test_two_sided_clip_is_verls_dual_clip(seed, delta):
    # δ ≥ 1 + ε_high: TRL's delta and verl's clip_ratio_c are the same loss; ratios up to ~5 reach past δ
    lp, old, ref, m, adv = batch(seed, spread=0.8)
    i = np.argmin(adv)
    old[i, 0] = lp[i, 0] - np.log(delta + 0.5)             # a token with A < 0 and ρ > δ
    assert adv[i] < 0 and m[i, 0] == 1
    for mode, lt in (("token-mean", "dapo"), ("seq-mean-token-mean", "grpo")):
        loss, g = rl.policy_loss(lp, old, adv, m, loss_type=lt, delta=delta)
        assert loss == pytest.approx(verl_vanilla(lp, old, adv, m, clip_ratio_c=delta, mode=mode), rel=VERL_REL)
        fd = central(lambda x: verl_vanilla(x, old, adv, m, clip_ratio_c=delta, mode=mode), lp)
        np.testing.assert_allclose(g, fd * m, atol=1e-8)
    # without δ the toy is plain PPO, which verl's dual clip (always on, default 3) is not
    one = (np.array([[np.log(4.0)]]), np.zeros((1, 1)), np.array([-1.0]), np.ones((1, 1)))   # ρ = 4, A = −1
    assert rl.policy_loss(*one)[0] == pytest.approx(4.0) and verl_vanilla(*one) == pytest.approx(3.0)
    assert rl.policy_loss(*one, delta=3.0)[0] == pytest.approx(3.0)


def test_two_sided_surrogate_by_hand():
    # A = −1, ρ = 4, δ = 3: PPO's surrogate is −4 (gradient −1), the two-sided one the constant −3
    assert rl.clipped_surrogate(4.0, -1.0) == -4.0
    assert rl.two_sided_surrogate(4.0, -1.0, delta=3.0) == -3.0
    assert rl.two_sided_surrogate_grad(4.0, -1.0, delta=3.0) == 0.0
    assert rl.two_sided_surrogate_grad(2.0, -1.0, delta=3.0) == -1.0
    assert rl.two_sided_surrogate(4.0, 1.0, delta=3.0) == pytest.approx(1.2)   # A > 0: the usual clip


@pytest.mark.parametrize("seed", [0, 6])
def test_gspo_matches_verl_gspo(seed):
    # verl's token-level s_it = sg(s_i)·π/sg(π) has the value of s_i and the same gradient as TRL's s_i
    lp, old, ref, m, adv = batch(seed)
    for mode, lt in (("seq-mean-token-mean", "grpo"), ("token-mean", "dapo")):
        loss, g = rl.policy_loss(lp, old, adv, m, loss_type=lt, ratio_level="sequence")
        assert loss == pytest.approx(verl_gspo(lp, old, adv, m, mode=mode), rel=VERL_REL)
        np.testing.assert_allclose(g, library_grad(verl_gspo, lp, old=old, adv=adv, mask=m, mode=mode) * m,
                                   atol=1e-8)


@pytest.mark.parametrize("seed", [0, 7])
def test_cispo_matches_verl_cispo(seed):
    # verl clips the weight on both sides, clip(ρ, 1 − clip_ratio_low, 1 + clip_ratio_high)
    lp, old, ref, m, adv = batch(seed, spread=0.5)
    loss, g = rl.policy_loss(lp, old, adv, m, loss_type="dapo", loss_mode="cispo", eps_low=0.2, eps_high=0.28)
    assert loss == pytest.approx(verl_cispo(lp, old, adv, m, 0.2, 0.28), abs=1e-12)
    np.testing.assert_allclose(g, library_grad(verl_cispo, lp, old=old, adv=adv, mask=m,
                                               clip_low=0.2, clip_high=0.28) * m, atol=1e-8)


@pytest.mark.parametrize("seed", [0, 9])
@pytest.mark.parametrize("taus", [dict(), dict(tau_pos=3.0, tau_neg=0.4)])
def test_sapo_matches_verl_sapo(seed, taus):
    # verl's SAPO is aggregated as seq-mean-token-mean whatever loss_agg_mode says: the toy's "grpo"
    lp, old, ref, m, adv = batch(seed, spread=0.8)
    loss, g = rl.policy_loss(lp, old, adv, m, loss_mode="sapo", **taus)
    assert loss == pytest.approx(verl_sapo(lp, old, adv, m, **taus), rel=VERL_REL)
    np.testing.assert_allclose(g, central(lambda x: verl_sapo(x, old, adv, m, **taus), lp) * m, atol=1e-8)


def test_sapo_gate_by_hand():
    # at ρ = 1 the gate is 2/τ with slope 1 (the on-policy gradient); far out it saturates at 4/τ or 0
    assert rl.sapo_gate(1.0, 1.0) == pytest.approx(2.0)
    assert rl.sapo_gate(1.0, -1.0) == pytest.approx(2 / 1.05)
    assert rl.sapo_gate(1.0, 0.0, tau_neg=2.0) == pytest.approx(1.0)             # A = 0 takes τ_neg
    assert rl.sapo_gate(1e6, 1.0) == 4.0 and rl.sapo_gate(1.5, 1.0, tau_pos=2.0) == pytest.approx(2 / (1 + np.exp(-1)))
    lp, old, m = np.array([[0.0]]), np.zeros((1, 1)), np.ones((1, 1))            # ρ = 1, A = +1: gradient −1
    assert rl.policy_loss(lp, old, np.array([1.0]), m, loss_mode="sapo")[1][0, 0] == pytest.approx(-1.0)


def test_cispo_cap_below_one_by_hand():
    # TRL's default: min(ρ, 0.2); every ratio above 0.2 gets the weight 0.2, a token with ρ = 1 included
    assert trl_epsilon_high() == 0.2 and trl_epsilon_high(epsilon_high=5.0) == 5.0
    np.testing.assert_array_equal(rl.cispo_weight([0.1, 0.2, 1.0, 3.0], None, cap=0.2), [0.1, 0.2, 0.2, 0.2])
    np.testing.assert_array_equal(rl.cispo_weight([0.5, 3.0], 0.6, 0.28, cap=0.9), [0.5, 0.9])   # cap replaces 1.28
    lp, old, m = np.array([[0.0]]), np.zeros((1, 1)), np.ones((1, 1))            # ρ = 1, A = +1
    g = rl.policy_loss(lp, old, np.array([1.0]), m, loss_mode="cispo", eps_low=None, cispo_cap=0.2)[1]
    assert g[0, 0] == pytest.approx(-0.2)


def test_cispo_keeps_the_gradient_ppo_clips():
    # one token, A = +1, ρ = 1.5 > 1 + ε: PPO's gradient is 0, CISPO's is −ŵ·A = −1.2 (as a loss)
    lp, old, m = np.array([[np.log(1.5)]]), np.zeros((1, 1)), np.ones((1, 1))
    assert rl.policy_loss(lp, old, np.array([1.0]), m)[1][0, 0] == 0.0
    g = rl.policy_loss(lp, old, np.array([1.0]), m, loss_mode="cispo", eps_low=0.2, eps_high=0.2)[1]
    assert g[0, 0] == pytest.approx(-1.2)
    assert rl.cispo_weight(1.5, None, 4.0) == 1.5 and rl.cispo_weight(0.01, None, 4.0) == 0.01
    assert rl.cispo_weight(0.01, 0.2, 4.0) == 0.8


# ----------------------------------------------------------------------------- identities
def test_neutral_variants_equal_the_default_path():
    lp, old, ref, m, adv = batch(0)
    for lt in ("grpo", "dapo", "dr_grpo", "sum"):
        loss, g = rl.policy_loss(lp, old, adv, m, loss_type=lt, beta=0.1, ref_logp=ref)
        for kw in (dict(delta=1e9), dict(pg_mask=m.copy())):
            l2, g2 = rl.policy_loss(lp, old, adv, m, loss_type=lt, beta=0.1, ref_logp=ref, **kw)
            assert l2 == pytest.approx(loss, abs=1e-14)
            np.testing.assert_allclose(g2, g, atol=1e-15)
    # bnpo with the whole batch as one micro-batch is "dapo"; with one answer per micro-batch "grpo"
    for mb, lt in ((None, "dapo"), (4, "dapo"), (1, "grpo")):
        np.testing.assert_allclose(rl.bnpo_weights(m, mb), rl.aggregate_weights(m, lt), atol=1e-15)
    # a one-token answer has its token ratio as its sequence ratio
    m1 = np.zeros_like(m)
    m1[:, 2] = 1
    for kw in (dict(), dict(beta=0.1, ref_logp=ref, kl_bias_correction=True)):
        a = rl.policy_loss(lp, old, adv, m1, **kw, delta=50.0)
        b = rl.policy_loss(lp, old, adv, m1, **kw, ratio_level="sequence")
        assert a[0] == pytest.approx(b[0], abs=1e-14)
        np.testing.assert_allclose(a[1], b[1], atol=1e-14)


def test_sequence_log_ratio_by_hand():
    lp = np.array([[0.0, -1.0, -2.0], [-1.0, -1.0, 0.0]])
    old = np.array([[-0.5, -1.0, 9.0], [-1.5, -0.5, 0.0]])
    m = np.array([[1, 1, 0], [1, 1, 1.0]])
    np.testing.assert_allclose(rl.sequence_log_ratio(lp, old, m), [0.25, 0.0])


@pytest.mark.parametrize("bias_correction, direction", [(True, "forward"), (False, "reverse")])
def test_expected_kl_gradient_direction(bias_correction, direction):
    # a softmax policy over K answers, one token each, on policy (ρ = 1): the expected gradient of
    # β·ρ·k3 (TRL 1.16.0's default use_bias_correction_kl=True) is ∇KL(π_θ‖π_ref); of plain k3, ∇KL(π_ref‖π_θ)
    theta, ref_logits = np.array([0.3, -0.5, 1.1, 0.0]), np.array([-0.2, 0.4, 0.1, 0.6])
    lsm = lambda z: z - np.log(np.exp(z).sum())
    logpi, logref = lsm(theta), lsm(ref_logits)
    pi = np.exp(logpi)
    expected = np.zeros(4)
    for a in range(4):
        lp = np.array([[logpi[a]]])
        _, g = rl.policy_loss(lp, lp, np.zeros(1), np.ones((1, 1)), beta=1.0, ref_logp=np.array([[logref[a]]]),
                              kl_bias_correction=bias_correction)
        expected += pi[a] * g[0, 0] * (np.eye(4)[a] - pi)          # d log π_a / dθ = e_a − π
    forward = lambda z: (np.exp(lsm(z)) * (lsm(z) - logref)).sum()
    reverse = lambda z: (np.exp(logref) * (logref - lsm(z))).sum()
    want = central(forward if direction == "forward" else reverse, theta)
    np.testing.assert_allclose(expected, want, atol=1e-8)


def test_verl_k3_plus_follows_the_forward_kl():
    # verl 0.9.1 kl_penalty with "k3+" (verl/trainer/ppo/core_algos.py:2211-2213): the value of k3, the
    # gradient of k2 = ½(log π − log π_ref)²; on samples from π its expected gradient is ∇KL(π_θ‖π_ref)
    theta, ref_logits = np.array([0.3, -0.5, 1.1, 0.0]), np.array([-0.2, 0.4, 0.1, 0.6])
    lsm = lambda z: z - np.log(np.exp(z).sum())
    logpi, logref = lsm(theta), lsm(ref_logits)
    pi = np.exp(logpi)
    d_k2 = logpi - logref                                           # d k2 / d log π, per answer
    expected = (pi[:, None] * d_k2[:, None] * (np.eye(4) - pi)).sum(axis=0)
    forward = lambda z: (np.exp(lsm(z)) * (lsm(z) - logref)).sum()
    np.testing.assert_allclose(expected, central(forward, theta), atol=1e-8)


# ----------------------------------------------------------------------------- bad input
def _args():
    lp, old, ref, m, adv = batch(0)
    return dict(logp=lp, old_logp=old, adv=adv, mask=m, ref_logp=ref)


BAD = [
    (dict(ratio_level="seq"), "ratio_level"),
    (dict(loss_mode="ppo"), "loss_mode"),
    (dict(loss_type="bnp"), "loss_type"),
    (dict(delta=1.0), "delta"),
    (dict(delta="2"), "delta"),
    (dict(loss_type="bnpo", micro_batch=3), "micro_batch"),
    (dict(loss_type="bnpo", micro_batch=0), "micro_batch"),
    (dict(loss_type="bnpo", micro_batch=1.5), "micro_batch"),
    (dict(loss_type="dapo", micro_batch=2), "micro_batch"),
    (dict(pg_mask=np.ones((2, 2))), "pg_mask"),
    (dict(pg_mask=np.full((4, 6), 0.5)), "pg_mask"),
    (dict(kl_bias_correction="yes"), "kl_bias_correction"),
    (dict(loss_mode="cispo", delta=2.0), "delta"),
    (dict(loss_mode="cispo", eps_low=None, eps_high=None), "eps_high"),
    (dict(loss_mode="cispo", eps_low=1.5), "eps_low"),
    (dict(loss_mode="cispo", eps_high=-1.0), "eps_high"),
    (dict(ratio_level="sequence", mask=np.zeros((4, 6))), "mask"),
    (dict(delta=2.0, beta=0.1, ref_logp=None), "ref_logp"),
    (dict(delta=2.0, adv=np.ones(3)), "adv"),
    (dict(loss_mode="sapo", tau_pos=0.0), "tau_pos"),
    (dict(loss_mode="sapo", tau_neg=-1.0), "tau_neg"),
    (dict(loss_mode="sapo", tau_neg="1"), "tau_neg"),
    (dict(loss_mode="sapo", delta=2.0), "delta"),
    (dict(loss_mode="sapo", loss_type="dapo"), "loss_type"),
    (dict(cispo_cap=0.2), "cispo_cap"),                                          # not with loss_mode="clip"
    (dict(loss_mode="cispo", eps_high=0.28, cispo_cap=0.2), "cispo_cap"),        # the cap replaces eps_high
    (dict(loss_mode="cispo", eps_low=None, cispo_cap=0.0), "cispo_cap"),
    (dict(loss_mode="cispo", eps_low=None, cispo_cap=np.nan), "cispo_cap"),
    (dict(loss_mode="cispo", eps_low=0.2, cispo_cap=0.5), "cispo_cap"),          # below the lower bound 0.8
]


@pytest.mark.parametrize("kw, name", BAD)
def test_bad_input_names_the_argument(kw, name):
    args = {**_args(), **kw}
    with pytest.raises(ValueError, match=name):
        rl.policy_loss(**args)


@pytest.mark.parametrize("call, name", [
    (lambda: rl.high_entropy_mask(np.ones((2, 3)), np.ones((2, 3)), 1.5), "top_quantile"),
    (lambda: rl.high_entropy_mask(np.ones((2, 3)), np.ones((3, 2)), 0.2), "mask"),
    (lambda: rl.high_entropy_mask(np.ones((2, 3)), np.zeros((2, 3)), 0.2), "mask"),
    (lambda: rl.bnpo_weights(np.ones((4, 3)), 3), "micro_batch"),
    (lambda: rl.cispo_weight(-1.0), "ratio"),
    (lambda: rl.cispo_weight(1.0, None, None), "eps_high"),
    (lambda: rl.cispo_weight(1.0, None, cap=-1.0), "cap"),
    (lambda: rl.cispo_weight(1.0, 0.2, cap=0.5), "cap"),
    (lambda: rl.high_entropy_mask(np.ones((4, 3)), np.ones((4, 3)), 0.2, micro_batches=3), "micro_batches"),
    (lambda: rl.high_entropy_mask(np.ones((4, 3)), np.ones((4, 3)), 0.2, micro_batches=0), "micro_batches"),
    (lambda: rl.high_entropy_mask(np.ones((4, 3)), np.ones((4, 3)), 0.2, micro_batches=8), "micro_batches"),
    (lambda: rl.high_entropy_mask(np.ones((4, 3)), np.ones((4, 3)), 0.2, micro_batches=1.5), "micro_batches"),
    (lambda: rl.sapo_gate(-1.0, 1.0), "ratio"),
    (lambda: rl.sapo_gate(1.0, np.ones(2), tau_pos=0), "tau_pos"),
    (lambda: rl.sapo_gate(np.ones(3), np.ones(2)), "adv"),
    (lambda: rl.sequence_log_ratio(np.zeros((2, 2)), np.zeros((2, 3)), np.ones((2, 2))), "old_logp"),
    (lambda: rl.two_sided_surrogate(1.0, 1.0, delta=0.5), "delta"),
    (lambda: rl.token_entropy("x"), "logits"),
])
def test_bad_input_of_the_helpers(call, name):
    with pytest.raises(ValueError, match=name):
        call()
