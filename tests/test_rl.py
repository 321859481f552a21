"""toy.rl against independent references: naive loops, closed forms and the lectures' worked answers."""
import itertools
import re

import numpy as np
import pytest

from finite_differences import central
from toy import rl
from toy.prob import softmax


def naive_grpo(r, eps, ddof=0):
    out = []
    for group in r:
        m = sum(group) / len(group)
        sd = (sum((x - m) ** 2 for x in group) / (len(group) - ddof)) ** 0.5
        out.append([(x - m) / (sd + eps) for x in group])
    return np.array(out)


def test_grpo_matches_naive_loop():
    r = np.random.default_rng(0).integers(0, 2, size=(50, 8)).astype(float)
    np.testing.assert_allclose(rl.grpo_advantages(r, eps=1e-4), naive_grpo(r, 1e-4), atol=1e-12)


@pytest.mark.parametrize("ddof", [0, 1])
def test_grpo_ddof_matches_naive_loop(ddof):
    r = np.random.default_rng(2).random((30, 5))
    np.testing.assert_allclose(rl.grpo_advantages(r, eps=1e-4, ddof=ddof), naive_grpo(r, 1e-4, ddof), atol=1e-12)


def test_grpo_sample_std_as_trl_and_verl():
    # torch.std([1., 0, 0, 0]) = 0.5 (unbiased): TRL/verl give +1.50 / -0.50; the lecture +1.73 / -0.58
    np.testing.assert_allclose(rl.grpo_advantages([1, 0, 0, 0], eps=0.0, ddof=1), [1.5, -0.5, -0.5, -0.5])
    np.testing.assert_allclose(rl.grpo_advantages([1, 0, 0, 0], eps=0.0, ddof=0),
                               [3 ** 0.5, -(3 ** -0.5), -(3 ** -0.5), -(3 ** -0.5)])
    with pytest.raises(ValueError, match="ddof"):
        rl.grpo_advantages([1, 0], ddof=2)


def test_grpo_lecture_5a_groups():
    # seed 004 §9: x1 = [1,1,0,0] -> ±1; x2 = [1,0,0,0] -> +1.73/-0.58; x3 = [1,1,1,0] -> +0.58/-1.73
    a = rl.grpo_advantages([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], eps=0.0)
    np.testing.assert_allclose(a[0], [1, 1, -1, -1])
    np.testing.assert_allclose(a[1], [1.73, -0.58, -0.58, -0.58], atol=0.005)
    np.testing.assert_allclose(a[2], [0.58, 0.58, 0.58, -1.73], atol=0.005)


def test_grpo_and_dr_grpo_lecture16_exercise3():
    r = [1, 0, 0, 0, 0, 0, 0, 0]
    np.testing.assert_allclose(rl.dr_grpo_advantages(r), [0.875] + [-0.125] * 7)
    a = rl.grpo_advantages(r, eps=0.0)
    assert a[0] == pytest.approx(2.65, abs=0.005) and a[1] == pytest.approx(-0.38, abs=0.005)


def test_degenerate_groups_give_zero_advantage():
    r = np.array([[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0]], float)
    assert np.all(rl.grpo_advantages(r)[:2] == 0) and np.all(rl.dr_grpo_advantages(r)[:2] == 0)
    assert rl.degenerate_fraction(r) == pytest.approx(2 / 3)


def test_rloo_matches_leave_one_out_loop_and_lecture6_exercise3():
    r = np.random.default_rng(1).random((20, 5))
    naive = np.array([[g[i] - np.mean(np.delete(g, i)) for i in range(len(g))] for g in r])
    np.testing.assert_allclose(rl.rloo_advantages(r), naive, atol=1e-12)
    np.testing.assert_allclose(rl.rloo_advantages([1, 0, 0, 0]), [1, -1 / 3, -1 / 3, -1 / 3])
    np.testing.assert_allclose(rl.rloo_advantages([1, 1, 1, 0]), [1 / 3, 1 / 3, 1 / 3, -1])
    # RLOO = G/(G-1) * (r - mean)
    np.testing.assert_allclose(rl.rloo_advantages(r), 5 / 4 * rl.dr_grpo_advantages(r), atol=1e-12)


@pytest.mark.parametrize("fn", [rl.grpo_advantages, rl.dr_grpo_advantages, rl.rloo_advantages])
def test_advantages_reject_bad_groups(fn):
    with pytest.raises(ValueError, match="G >= 2"):
        fn([[1.0], [0.0]])
    with pytest.raises(ValueError, match="rewards"):
        fn(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="rewards"):
        fn([[1, np.nan]])


def test_grpo_rejects_negative_eps():
    with pytest.raises(ValueError, match="eps"):
        rl.grpo_advantages([1, 0], eps=-1)


def naive_clip(ratio, adv, lo, hi):
    return min(ratio * adv, min(max(ratio, 1 - lo), 1 + hi) * adv)


def test_clipped_surrogate_matches_naive_and_lecture16_exercise2():
    rng = np.random.default_rng(2)
    ratio, adv = rng.uniform(0, 2, 200), rng.normal(size=200)
    got = rl.clipped_surrogate(ratio, adv, 0.2, 0.28)
    np.testing.assert_allclose(got, [naive_clip(r, a, 0.2, 0.28) for r, a in zip(ratio, adv)])
    # A = +2, eps = 0.2: r = 0.5, 1.0, 1.1, 1.5 -> 1.0, 2.0, 2.2, 2.4 with gradients 2, 2, 2, 0
    r = np.array([0.5, 1.0, 1.1, 1.5])
    np.testing.assert_allclose(rl.clipped_surrogate(r, 2.0), [1.0, 2.0, 2.2, 2.4])
    h = 1e-6
    grad = (rl.clipped_surrogate(r + h, 2.0) - rl.clipped_surrogate(r - h, 2.0)) / (2 * h)
    np.testing.assert_allclose(grad, [2, 2, 2, 0], atol=1e-6)


def test_clip_higher_lecture6_exercise4():
    # old prob 0.02, A > 0: the gradient stops at 0.02*1.2 = 0.024 (eps_high = 0.28: 0.0256)
    for eps_high, cap in [(None, 0.024), (0.28, 0.0256)]:
        ratios = np.array([cap / 0.02 - 1e-3, cap / 0.02 + 1e-3])
        h = 1e-7
        g = (rl.clipped_surrogate(ratios + h, 1.0, 0.2, eps_high)
             - rl.clipped_surrogate(ratios - h, 1.0, 0.2, eps_high)) / (2 * h)
        np.testing.assert_allclose(g, [1.0, 0.0], atol=1e-6)


def test_clipped_surrogate_bad_input():
    with pytest.raises(ValueError, match="eps_low"):
        rl.clipped_surrogate(1.0, 1.0, eps_low=-0.1)
    with pytest.raises(ValueError, match="eps_high"):
        rl.clipped_surrogate(1.0, 1.0, eps_high=-0.1)
    with pytest.raises(ValueError, match="ratio"):
        rl.clipped_surrogate([-1.0], [1.0])
    with pytest.raises(ValueError, match="broadcast"):
        rl.clipped_surrogate(np.ones(3), np.ones(4))


def test_aggregate_loss_against_loops():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6))
    lengths = [1, 6, 3, 4]
    m = np.array([[1.0] * n + [0.0] * (6 - n) for n in lengths])
    grpo = np.mean([sum(x[i, :n]) / n for i, n in enumerate(lengths)])
    dapo = sum(sum(x[i, :n]) for i, n in enumerate(lengths)) / sum(lengths)
    dr = sum(sum(x[i, :n]) for i, n in enumerate(lengths)) / (4 * 6)
    total = sum(sum(x[i, :n]) for i, n in enumerate(lengths)) / 4          # "sum": REINFORCE's
    assert rl.aggregate_loss(x, m, "grpo") == pytest.approx(grpo)
    assert rl.aggregate_loss(x, m, "dapo") == pytest.approx(dapo)
    assert rl.aggregate_loss(x, m, "dr_grpo") == pytest.approx(dr)
    assert rl.aggregate_loss(x, m, "dr_grpo", max_len=10) == pytest.approx(dr * 6 / 10)
    assert rl.aggregate_loss(x, m, "sum") == pytest.approx(total)
    assert rl.aggregate_loss(x, m, "sum", max_len=10) == pytest.approx(total)      # max_len: Dr. GRPO's only


def test_length_bias_lecture16_exercise4():
    # right answer: 100 tokens, A = +1; wrong: 1000 tokens, A = -1. Per-token weight = d loss / d token.
    T = 1000
    mask = np.zeros((2, T))
    mask[0, :100] = 1
    mask[1, :] = 1
    adv = np.array([[1.0], [-1.0]]) * mask

    def weight(loss_type, i, t):
        e = np.zeros((2, T))
        e[i, t] = 1.0
        return rl.aggregate_loss(adv + e, mask, loss_type, max_len=T) - rl.aggregate_loss(adv, mask, loss_type, max_len=T)

    # GRPO (mean over the 2 answers of per-answer means): +1/100 and -1/1000 per token, halved by the mean over answers
    assert weight("grpo", 0, 0) == pytest.approx(0.5 / 100)
    assert weight("grpo", 1, 0) == pytest.approx(0.5 / 1000)
    assert weight("dr_grpo", 0, 0) == pytest.approx(weight("dr_grpo", 1, 0))


def test_aggregate_loss_bad_input():
    x, m = np.ones((2, 3)), np.ones((2, 3))
    with pytest.raises(ValueError, match="loss_type"):
        rl.aggregate_loss(x, m, "mean")
    with pytest.raises(ValueError, match="same shape"):
        rl.aggregate_loss(x, np.ones((2, 4)), "grpo")
    with pytest.raises(ValueError, match="mask"):
        rl.aggregate_loss(x, 2 * m, "grpo")
    with pytest.raises(ValueError, match="no generated tokens"):
        rl.aggregate_loss(x, np.array([[1, 1, 1], [0, 0, 0.0]]), "grpo")
    with pytest.raises(ValueError, match="per_token"):
        rl.aggregate_loss(np.ones(3), np.ones(3), "grpo")


def test_kl_estimators_unbiasedness_by_sampling():
    rng = np.random.default_rng(4)
    pi, ref = softmax(rng.normal(size=6)), softmax(rng.normal(size=6))
    true_kl = float(np.sum(pi * np.log(pi / ref)))       # KL(pi || ref)
    x = rng.choice(6, size=400_000, p=pi)
    logr = np.log(ref[x]) - np.log(pi[x])
    assert rl.kl_k1(logr).mean() == pytest.approx(true_kl, abs=0.01)
    assert rl.kl_k3(logr).mean() == pytest.approx(true_kl, abs=0.01)
    # exact expectations over the 6 outcomes: k1, k3 unbiased; k2 is not
    lr = np.log(ref) - np.log(pi)
    assert np.sum(pi * rl.kl_k1(lr)) == pytest.approx(true_kl)
    assert np.sum(pi * rl.kl_k3(lr)) == pytest.approx(true_kl)
    assert np.sum(pi * rl.kl_k2(lr)) != pytest.approx(true_kl, abs=1e-3)
    assert np.all(rl.kl_k3(np.linspace(-5, 5, 101)) >= 0)
    assert np.all(rl.kl_k2(np.linspace(-5, 5, 101)) >= 0)


def test_overlong_penalty_piecewise():
    L = np.array([0, 10, 12, 14, 16, 20])
    np.testing.assert_allclose(rl.overlong_penalty(L, max_len=16, buffer=4), [0, 0, 0, -0.5, -1, -1])
    with pytest.raises(ValueError, match="buffer"):
        rl.overlong_penalty(L, 16, 20)
    with pytest.raises(ValueError, match="max_len"):
        rl.overlong_penalty(L, 0, 1)


def test_kimi_length_reward_lecture16_exercise5():
    got = rl.kimi_length_reward([200, 400, 600, 1000], [True, True, False, False])
    np.testing.assert_allclose(got, [0.5, 0.25, 0.0, -0.5])
    np.testing.assert_allclose(rl.kimi_length_reward([5, 5, 5], [1, 0, 1]), [0, 0, 0])
    with pytest.raises(ValueError, match="correct"):
        rl.kimi_length_reward([1, 2, 3], [True, False])


def test_reward_to_go_matches_loop():
    r = np.random.default_rng(5).random((3, 7))
    naive = np.array([[row[t:].sum() for t in range(7)] for row in r])
    np.testing.assert_allclose(rl.reward_to_go(r), naive)
    # terminal-only reward (Number Search): every weight is R(tau)
    np.testing.assert_allclose(rl.reward_to_go([0, 0, 0, 1.0]), [1, 1, 1, 1])


def test_group_baseline_including_self_scales_gradient_lecture16_exercise1():
    # E[(r_i - mean_j r_j) * score_i] = (1 - 1/G) E[r * score]; exact enumeration over G = 3 draws
    p = np.array([0.2, 0.5, 0.3])
    reward = np.array([1.0, 0.0, 0.5])
    theta_idx = 0  # d/d logit_0 of log softmax: onehot - p
    score = (np.arange(3) == theta_idx).astype(float) - p[theta_idx]
    G = 3
    total = 0.0
    for draw in itertools.product(range(3), repeat=G):
        prob = np.prod(p[list(draw)])
        r = reward[list(draw)]
        a = rl.dr_grpo_advantages(r)
        total += prob * a[0] * score[draw[0]]
    reinforce = np.sum(p * reward * score)
    assert total == pytest.approx((1 - 1 / G) * reinforce)


def test_dynamic_sampling_cost_lecture6_exercise5():
    # accuracy 0.9, groups of 8: P(all right) = 0.9^8 ≈ 0.43; 16 mixed groups need ≈ 16 / 0.57 ≈ 28 draws;
    # half the problems at 0.99 and half at 0.81: P(all right) ≈ 0.55. Checked by sampling groups.
    from toy.numsearch.train import degenerate_probability
    rng = np.random.default_rng(6)
    p_deg = float(degenerate_probability(0.9, 8))
    assert p_deg == pytest.approx(0.43, abs=0.005)               # the lecture's 0.43 (+ 1e-8 all wrong)
    assert 16 / (1 - p_deg) == pytest.approx(28, abs=0.5)
    groups = (rng.random((200_000, 8)) < 0.9).astype(float)
    assert rl.degenerate_fraction(groups) == pytest.approx(p_deg, abs=0.005)
    p = np.repeat([0.99, 0.81], 100_000)[:, None]
    mixed = (rng.random((200_000, 8)) < p).astype(float)
    all_right = float(np.mean(mixed.min(axis=1) == 1))
    assert all_right == pytest.approx(0.5 * 0.99 ** 8 + 0.5 * 0.81 ** 8, abs=0.005)
    assert all_right == pytest.approx(0.55, abs=0.01)


# ----------------------------------------------------------------------------- aggregation weights
def _naive_weights(mask, loss_type, max_len):
    """c_it by loops: the weight of token (i, t) in each aggregation's formula."""
    N, T = len(mask), len(mask[0])
    tokens = sum(sum(row) for row in mask)
    per = {"grpo": lambda i: 1 / (N * sum(mask[i])), "dapo": lambda i: 1 / tokens,
           "dr_grpo": lambda i: 1 / (N * max_len), "sum": lambda i: 1 / N}[loss_type]
    return [[per(i) if mask[i][t] else 0.0 for t in range(T)] for i in range(N)]


@pytest.mark.parametrize("loss_type", rl.LOSS_TYPES)
def test_aggregate_weights(loss_type):
    """The one test of the aggregation weights (Parts I, II and III all use rl.aggregate_weights):
    a naive loop, a hand case, the gradient of aggregate_loss (finite differences) and batches."""
    rng = np.random.default_rng(3)
    mask = (np.arange(7)[None, :] < np.array([[3], [7], [1], [5]])).astype(float)   # (4, 7)
    max_len = 9 if loss_type == "dr_grpo" else None
    c = rl.aggregate_weights(mask, loss_type, max_len=max_len)
    np.testing.assert_allclose(c, _naive_weights(mask.tolist(), loss_type, 9), rtol=1e-15)
    x = rng.normal(size=mask.shape)
    assert np.isclose((c * x).sum(), rl.aggregate_loss(x, mask, loss_type, max_len))
    for i, t in [(0, 1), (1, 6), (2, 0)]:                 # finite differences, one token at a time
        e = np.zeros_like(x)
        e[i, t] = 1e-3
        fd = (rl.aggregate_loss(x + e, mask, loss_type, max_len) - rl.aggregate_loss(x - e, mask, loss_type, max_len)) / 2e-3
        assert np.isclose(c[i, t], fd)
    assert np.all(c[mask == 0] == 0)
    hand = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], float)  # lengths 2 and 4: 6 tokens, N = 2
    expected = {"grpo": [[1 / 4, 1 / 4, 0, 0], [1 / 8] * 4], "dapo": hand / 6, "dr_grpo": hand / 20,
                "sum": hand / 2}[loss_type]
    np.testing.assert_allclose(rl.aggregate_weights(hand, loss_type, max_len=10 if loss_type == "dr_grpo" else None),
                               expected)
    two = np.stack([mask, mask[::-1]])                     # (runs, N, T): each normalised on its own
    both = rl.aggregate_weights(two, loss_type, max_len)
    np.testing.assert_array_equal(both[1], rl.aggregate_weights(mask[::-1], loss_type, max_len))


@pytest.mark.parametrize("args, kwargs, arg", [
    (([[0, 0]], "grpo"), {}, "no generated tokens"), (([[1, 2]], "grpo"), {}, "mask"),
    (([[1, 1]], "mean"), {}, "loss_type"), (([[1, 1, 1]], "dr_grpo"), {"max_len": 2}, "max_len"),
    (([1, 1], "dapo"), {}, "mask"), (([[0, 0]], "dapo"), {}, "no generated tokens"),
])
def test_aggregate_weights_bad_input(args, kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        rl.aggregate_weights(*args, **kwargs)


def test_kimi_length_reward_many_groups_equal_one_at_a_time():
    rng = np.random.default_rng(0)
    L = rng.integers(1, 50, size=(5, 6))
    L[2] = 7                                               # one group of equal lengths
    c = rng.random((5, 6)) < 0.5
    together = rl.kimi_length_reward(L, c)
    for g in range(5):
        np.testing.assert_array_equal(together[g], rl.kimi_length_reward(L[g], c[g]))
    assert np.all(together[2] == 0)


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_M3 = np.ones((2, 3))
BAD_INPUTS = [
    (rl.grpo_advantages, ([1, 1],), {"eps": 0}, "eps"),                  # 0/0 in an all-equal group
    (rl.grpo_advantages, ([1, 0],), {"eps": "0.1"}, "eps"),
    (rl.grpo_advantages, ([1, 0],), {"eps": None}, "eps"),
    (rl.grpo_advantages, ([1, 0],), {"eps": np.inf}, "eps"),
    (rl.grpo_advantages, ([1],), {}, "rewards"),
    (rl.grpo_advantages, ("10",), {}, "rewards"),
    (rl.dr_grpo_advantages, ([[1, np.nan]],), {}, "rewards"),
    (rl.rloo_advantages, (np.zeros((2, 3, 4)),), {}, "rewards"),
    (rl.degenerate_fraction, (np.zeros((0, 4)),), {}, "rewards"),
    (rl.reward_to_go, (3.0,), {}, "rewards"),
    (rl.reward_to_go, (None,), {}, "rewards"),
    (rl.clipped_surrogate, ([1.0], [1.0]), {"eps_low": 1.5}, "eps_low"),
    (rl.clipped_surrogate, ([1.0], [1.0]), {"eps_low": -0.1}, "eps_low"),
    (rl.clipped_surrogate, ([1.0], [1.0]), {"eps_low": "0.2"}, "eps_low"),
    (rl.clipped_surrogate, ([1.0], [1.0]), {"eps_high": None, "eps_low": None}, "eps_low"),
    (rl.clipped_surrogate, ([1.0], [1.0]), {"eps_high": -1}, "eps_high"),
    (rl.clipped_surrogate, ([-1.0], [1.0]), {}, "ratio"),
    (rl.clipped_surrogate, ([1.0, 1.0], [1.0, 1.0, 1.0]), {}, "ratio"),
    (rl.clipped_surrogate, ([1.0], [np.nan]), {}, "adv"),
    (rl.aggregate_loss, (np.zeros((0, 3)), np.zeros((0, 3)), "grpo"), {}, "per_token"),  # empty batch
    (rl.aggregate_loss, (np.zeros((0, 3)), np.zeros((0, 3)), "dr_grpo"), {}, "per_token"),
    (rl.aggregate_loss, (_M3, _M3, "dr_grpo"), {"max_len": 1}, "max_len"),   # a sequence of 3 > max_len
    (rl.aggregate_loss, (_M3, _M3, "dr_grpo"), {"max_len": "4"}, "max_len"),
    (rl.aggregate_loss, (_M3, _M3, "dr_grpo"), {"max_len": 0}, "max_len"),
    (rl.aggregate_loss, (_M3, _M3, "mean"), {}, "loss_type"),
    (rl.aggregate_loss, (_M3, _M3, None), {}, "loss_type"),
    (rl.aggregate_loss, (_M3, np.ones((2, 4)), "grpo"), {}, "per_token"),
    (rl.aggregate_loss, (_M3, 2 * _M3, "grpo"), {}, "mask"),
    (rl.aggregate_loss, (_M3, np.zeros((2, 3)), "grpo"), {}, "mask"),
    (rl.aggregate_loss, (_M3, np.zeros((2, 3)), "dapo"), {}, "mask"),
    (rl.aggregate_loss, (np.ones(3), np.ones(3), "dapo"), {}, "per_token"),
    (rl.aggregate_weights, (np.ones(3), "grpo"), {}, "mask"),
    (rl.aggregate_weights, (_M3, "mean"), {}, "loss_type"),
    (rl.aggregate_weights, (_M3, "dr_grpo"), {"max_len": 2}, "max_len"),
    (rl.aggregate_weights, (_M3, "dr_grpo"), {"max_len": "9"}, "max_len"),
    (rl.aggregate_weights, (np.zeros((2, 3)), "dapo"), {}, "mask"),
    (rl.kl_k1, ("x",), {}, "logr"),
    (rl.kl_k2, ([np.inf],), {}, "logr"),
    (rl.kl_k3, ([None],), {}, "logr"),
    (rl.overlong_penalty, ([-1], 10, 2), {}, "length"),
    (rl.overlong_penalty, ([5], None, 2), {}, "max_len"),
    (rl.overlong_penalty, ([5], 10, "2"), {}, "buffer"),
    (rl.overlong_penalty, ([5], 10, 0), {}, "buffer"),
    (rl.overlong_penalty, ([5], 10, 11), {}, "buffer"),
    (rl.kimi_length_reward, ([1, 2], ["no", "no"]), {}, "correct"),     # 'no' is not False
    (rl.kimi_length_reward, ([1, 2], [2, 0]), {}, "correct"),
    (rl.kimi_length_reward, ([1, 2], [True]), {}, "correct"),
    (rl.kimi_length_reward, ([], []), {}, "lengths"),
    (rl.kimi_length_reward, (np.ones((2, 0)), np.ones((2, 0), bool)), {}, "lengths"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


# ---------------------------------------------------------------- LM-PPO pieces (Part III §2)
def _ragged_mask(rng, N=30, T=12):
    """Rows with a prompt (mask 0), then 1..T-2 real tokens, then padding (mask 0)."""
    m = np.zeros((N, T))
    for i in range(N):
        start = rng.integers(0, 3)
        m[i, start:start + rng.integers(1, T - start)] = 1
    return m


def test_kl_shaped_rewards_matches_naive_loop():
    rng = np.random.default_rng(1)
    m = _ragged_mask(rng)
    kl, score = rng.normal(0, 0.5, m.shape), rng.random(len(m))
    for clamp in (True, False):
        want = np.zeros(m.shape)
        for i in range(len(m)):
            real = [t for t in range(m.shape[1]) if m[i, t] == 1]
            for t in real:
                k = max(kl[i, t], 0.0) if clamp else kl[i, t]
                want[i, t] = -0.3 * k + (score[i] if t == real[-1] else 0.0)
        np.testing.assert_allclose(rl.kl_shaped_rewards(kl, score, m, 0.3, clamp=clamp), want, atol=1e-12)
    # the clamp: a token the policy made less likely than the reference earns no KL reward
    r = rl.kl_shaped_rewards([[-2.0, 0.5]], [1.0], [[1, 1]], beta=0.1)
    np.testing.assert_allclose(r, [[0.0, 0.95]])
    np.testing.assert_allclose(rl.kl_shaped_rewards([[-2.0, 0.5]], [1.0], [[1, 1]], 0.1, clamp=False), [[0.2, 0.95]])


def naive_gae(r, v, m, gamma, lam):
    N, T = r.shape
    adv, ret = np.zeros((N, T)), np.zeros((N, T))
    for i in range(N):
        real = [t for t in range(T) if m[i, t] == 1]
        for k, t in enumerate(real):                        # A_t = sum_l (γλ)^l δ_{t+l}
            a = 0.0
            for l, t2 in enumerate(real[k:]):
                v_next = v[i, real[k + l + 1]] if k + l + 1 < len(real) else 0.0
                a += (gamma * lam) ** l * (r[i, t2] + gamma * v_next - v[i, t2])
            adv[i, t], ret[i, t] = a, a + v[i, t]
    return adv, ret


def test_gae_matches_naive_loop():
    rng = np.random.default_rng(2)
    m = _ragged_mask(rng)
    r, v = rng.normal(size=m.shape), rng.normal(size=m.shape)
    for gamma, lam in ((1.0, 1.0), (0.9, 0.95), (0.5, 0.0)):
        adv, ret = rl.gae(r, v, m, gamma, lam)
        want_adv, want_ret = naive_gae(r, v, m, gamma, lam)
        np.testing.assert_allclose(adv, want_adv, atol=1e-12)
        np.testing.assert_allclose(ret, want_ret, atol=1e-12)


def test_gae_gamma_lambda_one_is_return_to_end_minus_value():
    rng = np.random.default_rng(3)
    m = _ragged_mask(rng)
    r, v = rng.normal(size=m.shape) * m, rng.normal(size=m.shape)
    adv, ret = rl.gae(r, v, m)
    np.testing.assert_allclose(ret, rl.reward_to_go(r) * m, atol=1e-12)
    np.testing.assert_allclose(adv, (rl.reward_to_go(r) - v) * m, atol=1e-12)
    # a bandit: only the last token is rewarded, so every token's return is the score
    score = rng.random(len(m))
    adv, ret = rl.gae(rl.kl_shaped_rewards(np.zeros(m.shape), score, m, 0.1), v, m)
    np.testing.assert_allclose(ret, score[:, None] * m, atol=1e-12)


def test_softmax_pg_exact_against_finite_differences_and_enumeration():
    z, R = np.array([0.3, -1.0, 0.5, 0.0, 1.2]), np.array([1.0, 0.0, 0.2, 0.0, 0.7])
    h = 1e-6
    fd = [(softmax(z + h * e) @ R - softmax(z - h * e) @ R) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(rl.softmax_pg_exact(z, R), fd, atol=1e-8)
    # E over one sample of R(z)·∇log π(z), enumerated: the unbiased REINFORCE estimate
    p = softmax(z)
    expect = sum(p[k] * rl.score_function_estimate(z, np.array([k]), np.array([R[k]])) for k in range(5))
    np.testing.assert_allclose(expect, rl.softmax_pg_exact(z, R), atol=1e-12)


def test_score_function_estimate_matches_naive_loop_and_lecture16_exercise1():
    rng = np.random.default_rng(4)
    z = rng.normal(size=5)
    p = softmax(z)
    s, w = rng.integers(0, 5, size=(7, 8)), rng.normal(size=(7, 8))
    want = [[sum(w[m, i] * ((k == s[m, i]) - p[k]) for i in range(8)) / 8 for k in range(5)] for m in range(7)]
    np.testing.assert_allclose(rl.score_function_estimate(z, s, w), want, atol=1e-12)
    # exercise 1 by enumeration (G = 3): the group mean including the sample scales the
    # gradient by (G-1)/G; leave-one-out does not
    R, G = np.array([1.0, 0.0, 0.2, 0.0, 0.7]), 3
    draws = np.array(list(itertools.product(range(5), repeat=G)))          # (125, 3)
    prob = np.prod(p[draws], axis=1)
    exact = rl.softmax_pg_exact(z, R)
    for adv, scale in ((rl.dr_grpo_advantages, (G - 1) / G), (rl.rloo_advantages, 1.0)):
        est = rl.score_function_estimate(z, draws, adv(R[draws]))
        np.testing.assert_allclose(prob @ est, scale * exact, atol=1e-12)
    np.testing.assert_allclose(p @ (np.eye(5) - p), 0, atol=1e-15)       # E[∇ log π] = 0


@pytest.mark.parametrize("call", [
    lambda: rl.gae(np.zeros((2, 3)), np.zeros((2, 4)), np.ones((2, 3))),
    lambda: rl.gae(np.zeros((2, 3)), np.zeros((2, 3)), np.full((2, 3), 0.5)),
    lambda: rl.gae(np.zeros((2, 3)), np.zeros((2, 3)), np.ones((2, 3)), gamma=1.5),
    lambda: rl.gae(np.zeros(3), np.zeros(3), np.ones(3)),
    lambda: rl.kl_shaped_rewards(np.zeros((2, 3)), np.zeros(3), np.ones((2, 3)), 0.1),
    lambda: rl.kl_shaped_rewards(np.zeros((2, 3)), np.zeros(2), np.ones((2, 3)), -0.1),
    lambda: rl.kl_shaped_rewards(np.zeros((2, 3)), np.zeros(2), [[1, 1, 1], [0, 0, 0]], 0.1),
    lambda: rl.score_function_estimate(np.zeros(5), np.array([[0, 5]]), np.zeros((1, 2))),
    lambda: rl.score_function_estimate(np.zeros(5), np.array([[0.5, 1]]), np.zeros((1, 2))),
    lambda: rl.score_function_estimate(np.zeros(5), np.array([[0, 1]]), np.zeros((1, 3))),
    lambda: rl.softmax_pg_exact(np.zeros(5), np.zeros(4)),
])
def test_lm_ppo_pieces_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_score_function_estimate_with_one_policy_per_group():
    rng = np.random.default_rng(5)
    z = rng.normal(size=(6, 5))
    s, w = rng.integers(0, 5, size=(6, 4)), rng.normal(size=(6, 4))
    batched = rl.score_function_estimate(z, s, w)
    for i in range(6):
        np.testing.assert_allclose(batched[i], rl.score_function_estimate(z[i], s[i], w[i]), atol=1e-12)
        np.testing.assert_allclose(rl.softmax_pg_exact(z, np.arange(5.0))[i], rl.softmax_pg_exact(z[i], np.arange(5.0)))


def test_enumerate_groups_matches_brute_force():
    p = np.array([0.5, 0.3, 0.2])
    for G in (1, 2, 4):
        samples, prob = rl.enumerate_groups(p, G)
        want = {}
        for draw in itertools.product(range(3), repeat=G):
            key = tuple(sorted(draw))
            want[key] = want.get(key, 0.0) + np.prod(p[list(draw)])
        got = {tuple(row): q for row, q in zip(samples.tolist(), prob)}
        assert got.keys() == want.keys()
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=1e-14)
    samples, prob = rl.enumerate_groups(np.array([0.1, 0.2, 0.3, 0.25, 0.15]), 8)
    assert len(samples) == 495 and prob.sum() == pytest.approx(1.0)        # C(12, 4) multisets
    with pytest.raises(ValueError):
        rl.enumerate_groups([0.5, 0.6], 2)
    with pytest.raises(ValueError):
        rl.enumerate_groups([0.5, 0.5], 0)


# ------------------------------------------------------------------ the gradients of the course's losses
def test_advantages_switch_matches_each_formula():
    r = np.array([[1.0, 0, 0, 0], [0.5, 0, 1, 1]])
    assert np.array_equal(rl.advantages(r, "rft"), [[1, 0, 0, 0], [1, 0, 1, 1]])
    assert np.array_equal(rl.advantages(r, "reinforce"), r)
    assert np.array_equal(rl.advantages(r, "baseline", b=0.25), r - 0.25)
    assert np.allclose(rl.advantages(r, "rloo")[0], [1, -1 / 3, -1 / 3, -1 / 3])
    assert np.allclose(rl.advantages([1, 0, 0, 0], "grpo"), [1.732, -0.577, -0.577, -0.577], atol=1e-3)
    assert np.allclose(rl.advantages(r, "dr_grpo")[0], [0.75, -0.25, -0.25, -0.25])
    with pytest.raises(ValueError, match="^algo"):
        rl.advantages(r, "sft")
    with pytest.raises(ValueError, match="^b"):
        rl.advantages(r, "baseline", b=np.ones(3))


def test_advantages_the_section_11_table():
    """§I.11's weights of one group of four games, R = [1, 1, 0, 0] (the lecture's x1)."""
    R = np.array([[1.0, 1, 0, 0]])
    assert np.array_equal(rl.advantages(R, "rft"), R)                  # 0/1 rewards: ReST's w is R
    assert np.array_equal(rl.advantages(R, "baseline", b=0.5), R - 0.5)
    assert np.allclose(rl.advantages(R, "grpo"), [[1, 1, -1, -1]], atol=1e-3)
    assert np.allclose(rl.advantages(R, "dr_grpo"), [[0.5, 0.5, -0.5, -0.5]])
    assert np.allclose(rl.advantages(R, "rloo"), [[2 / 3, 2 / 3, -2 / 3, -2 / 3]])


@pytest.mark.parametrize("eps_high", [None, 0.28])
def test_clipped_surrogate_grad_is_the_derivative(eps_high):
    rng = np.random.default_rng(0)
    ratio = rng.uniform(0.5, 1.6, 200)
    ratio = ratio[np.min(np.abs(ratio[:, None] - [0.8, 1.2, 1.28]), axis=1) > 1e-3]  # off the kinks
    adv = rng.normal(size=ratio.shape)
    fd = (rl.clipped_surrogate(ratio + 1e-7, adv, 0.2, eps_high)
          - rl.clipped_surrogate(ratio - 1e-7, adv, 0.2, eps_high)) / 2e-7
    g = rl.clipped_surrogate_grad(ratio, adv, 0.2, eps_high)
    assert np.allclose(g, fd, atol=1e-6)
    assert set(np.unique(g == 0)) == {False, True}                       # both branches occur
    # by hand: A > 0 loses its gradient only above 1 + ε_high, A < 0 only below 1 − ε_low
    hi = 1.2 if eps_high is None else 1.28
    assert np.array_equal(rl.clipped_surrogate_grad([1.25, 1.3, 0.7, 0.7], [1, 1, 1, -1], 0.2, eps_high),
                          [0 if 1.25 > hi else 1, 0, 1, 0])


def test_clip_fraction_counts_the_tokens_without_gradient():
    ratio = np.array([[1.3, 1.3, 0.7, 1.0], [0.7, 1.0, 1.0, 9.0]])
    adv = np.array([[1.0], [-1.0]])
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])
    # row 0: 1.3 with A > 0 twice; row 1: 0.7 with A < 0 once; the 9.0 is padding
    assert rl.clip_fraction(ratio, adv, mask) == 3 / 7
    assert rl.clip_fraction(ratio, adv, mask, eps_high=0.4) == 1 / 7


def test_kl_k3_grad_is_the_derivative():
    logr = np.linspace(-3, 3, 13)
    fd = (rl.kl_k3(logr + 1e-6) - rl.kl_k3(logr - 1e-6)) / 2e-6
    assert np.allclose(rl.kl_k3_grad(logr), fd, atol=1e-6)


def _policy_case(rng, N=6, T=5):
    mask = (rng.random((N, T)) < 0.7).astype(float)
    mask[:, 0] = 1
    logp = np.log(rng.uniform(0.05, 0.95, (N, T)))
    old = logp + rng.normal(0, 0.3, (N, T))
    ref = logp + rng.normal(0, 0.3, (N, T))
    return logp, old, ref, mask


@pytest.mark.parametrize("loss_type", rl.LOSS_TYPES)
@pytest.mark.parametrize("per_token_adv", [False, True])
def test_policy_loss_gradient_against_finite_differences(loss_type, per_token_adv):
    rng = np.random.default_rng(1)
    logp, old, ref, mask = _policy_case(rng)
    adv = rng.normal(size=logp.shape if per_token_adv else logp.shape[:1])
    kw = dict(loss_type=loss_type, eps_low=0.2, eps_high=0.28, beta=0.1, ref_logp=ref)
    loss, dlogp = rl.policy_loss(logp, old, adv, mask, **kw)
    fd = central(lambda x: rl.policy_loss(x, old, adv, mask, **kw)[0], logp)
    assert np.allclose(dlogp, fd, atol=1e-7)
    assert np.all(dlogp[mask == 0] == 0)


def test_policy_loss_value_against_a_naive_loop():
    rng = np.random.default_rng(2)
    logp, old, ref, mask = _policy_case(rng)
    adv = rng.normal(size=len(logp))
    beta, lo, hi = 0.05, 0.2, 0.28
    per_seq = []
    for i in range(len(logp)):
        terms = []
        for t in range(logp.shape[1]):
            if mask[i, t]:
                rho = np.exp(logp[i, t] - old[i, t])
                surr = min(rho * adv[i], min(max(rho, 1 - lo), 1 + hi) * adv[i])
                lr = ref[i, t] - logp[i, t]
                terms.append(-surr + beta * (np.exp(lr) - 1 - lr))
        per_seq.append(sum(terms) / len(terms))
    loss, _ = rl.policy_loss(logp, old, adv, mask, "grpo", lo, hi, beta, ref)
    assert np.isclose(loss, np.mean(per_seq))


def test_policy_loss_on_policy_is_the_weighted_score_function():
    # at ρ = 1, β = 0: dL/dlogp = −c·A, the (aggregated) REINFORCE weights
    rng = np.random.default_rng(3)
    logp, _, _, mask = _policy_case(rng)
    adv = rng.normal(size=len(logp))
    _, dlogp = rl.policy_loss(logp, logp, adv, mask, "dapo")
    assert np.allclose(dlogp, -rl.aggregate_weights(mask, "dapo") * adv[:, None])


def test_policy_loss_gradient_is_clipped():
    logp = np.log(np.array([[1.5, 1.0, 0.5]]))               # ratios 1.5, 1, 0.5 against old = 0
    old = np.zeros((1, 3))
    mask = np.ones((1, 3))
    _, d = rl.policy_loss(logp, old, np.array([2.0]), mask, "dapo", 0.2)
    # A > 0: the ratio 1.5 is clipped (no gradient); the others get −A·ρ/3
    np.testing.assert_allclose(d, [[0.0, -2.0 / 3, -2 * 0.5 / 3]])
    assert np.isclose(rl.clip_fraction(np.exp(logp - old), 2.0, mask), 1 / 3)


BAD_INPUTS += [
    (rl.advantages, ([1.0, 0.0], "sft"), {}, "algo"),
    (rl.advantages, ("x", "grpo"), {}, "rewards"),
    (rl.advantages, ([[1.0, 0.0, 1.0, 0.0]], "ppo"), {}, "algo"),
    (rl.advantages, (1.0, "grpo"), {}, "rewards"),
    (rl.advantages, ([[1, np.nan]], "reinforce"), {}, "rewards"),
    (rl.advantages, ([[1.0, 0.0, 1.0, 0.0]], "baseline"), {"b": "0.5"}, "b"),
    (rl.advantages, ([[1.0, 0.0, 1.0, 0.0]], "baseline"), {"b": [0.5, 0.5]}, "b"),
    (rl.aggregate_weights, (np.ones((2, 4)), "mean"), {}, "loss_type"),
    (rl.aggregate_weights, (np.ones(4), "sum"), {}, "mask"),
    (rl.aggregate_weights, (np.zeros((0, 4)), "sum"), {}, "mask"),
    (rl.aggregate_weights, (2 * np.ones((2, 4)), "sum"), {}, "mask"),
    (rl.clipped_surrogate_grad, ([1.0], [1.0]), {"eps_low": 1.0}, "eps_low"),
    (rl.clipped_surrogate_grad, ([-1.0], [1.0]), {}, "ratio"),
    (rl.clip_fraction, ([1.0], [1.0], [0.0]), {}, "mask"),
    (rl.kl_k3_grad, ("x",), {}, "logr"),
    (rl.policy_loss, (np.zeros((2, 3)), np.zeros((2, 4)), np.zeros(2), np.ones((2, 3))), {}, "old_logp"),
    (rl.policy_loss, (np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(3), np.ones((2, 3))), {}, "adv"),
    (rl.policy_loss, (np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2), np.ones((2, 3))), {"beta": 0.1}, "ref_logp"),
    (rl.policy_loss, (np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2), np.ones((2, 3))), {"eps_low": 2}, "eps_low"),
    (rl.policy_loss, (np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2), np.ones((2, 3))), {"loss_type": "x"}, "loss_type"),
]


# ==== used by Part II

def test_mixed_groups_by_hand_and_degenerate_fraction_is_its_complement():
    r = np.array([[1, 1, 1], [0, 1, 0], [0, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(rl.mixed_groups(r), [False, True, False, True])
    np.testing.assert_array_equal(rl.mixed_groups([0.5, 0.5]), [False])        # one group (G,)
    rng = np.random.default_rng(0)
    groups = (rng.random((200, 4)) < 0.8).astype(float)
    naive = [len(set(g)) > 1 for g in groups.tolist()]                           # a plain loop
    np.testing.assert_array_equal(rl.mixed_groups(groups), naive)
    assert rl.degenerate_fraction(groups) == 1 - np.mean(naive)


BAD_INPUTS += [
    (rl.mixed_groups, (np.ones(3)[:, None],), {}, "rewards"),                   # G = 1
    (rl.mixed_groups, (np.zeros((0, 4)),), {}, "rewards"),
    (rl.mixed_groups, (np.ones((2, 3, 4)),), {}, "rewards"),
]


# ------------------------------------------------------------------ generated bad inputs, per category
from bad_inputs import cases, same, tagged, valid_numpy_scalars  # noqa: E402

_PL = {"logp": [[-1.0, -2.0]], "old_logp": [[-1.1, -2.0]], "adv": [1.0], "mask": [[1.0, 1.0]], "loss_type": "grpo",
       "eps_low": 0.2, "eps_high": 0.28, "beta": 0.1, "ref_logp": [[-1.0, -1.5]], "max_len": 4}
_CLIP = {"ratio": [1.1, 0.5], "adv": [1.0, -1.0], "eps_low": 0.2, "eps_high": 0.28}
_CLIP_SPEC = {"ratio": "array", "adv": "array", "eps_low": "nonneg", "eps_high": "nonneg?"}
_VALID = [  # (function, a valid call, the kind of each argument)
    (rl.grpo_advantages, {"rewards": [1.0, 0.0, 0.0], "eps": 1e-4, "ddof": 0},
     {"rewards": "array", "eps": "nonneg", "ddof": "int:0"}),
    (rl.dr_grpo_advantages, {"rewards": [[1.0, 0.0]]}, {"rewards": "array"}),
    (rl.rloo_advantages, {"rewards": [[1.0, 0.0]]}, {"rewards": "array"}),
    (rl.advantages, {"rewards": [[1.0, 0.0]], "algo": "baseline", "b": 0.5},
     {"rewards": "array", "algo": "choice", "b": "array"}),
    (rl.degenerate_fraction, {"rewards": [[1.0, 0.0]]}, {"rewards": "array"}),
    (rl.mixed_groups, {"rewards": [[1.0, 0.0]]}, {"rewards": "array"}),
    (rl.reward_to_go, {"rewards": [0.0, 1.0]}, {"rewards": "array"}),
    (rl.clipped_surrogate, _CLIP, _CLIP_SPEC),
    (rl.clipped_surrogate_grad, _CLIP, _CLIP_SPEC),
    (rl.clip_fraction, {**_CLIP, "mask": [1.0, 1.0]}, {**_CLIP_SPEC, "mask": "array"}),
    (rl.aggregate_loss, {"per_token": [[1.0, 2.0]], "mask": [[1.0, 0.0]], "loss_type": "dr_grpo", "max_len": 3},
     {"per_token": "array", "mask": "array", "loss_type": "choice", "max_len": "positive?"}),
    (rl.aggregate_weights, {"mask": [[1.0, 0.0]], "loss_type": "dr_grpo", "max_len": 3},
     {"mask": "array", "loss_type": "choice", "max_len": "positive?"}),
    (rl.kl_k1, {"logr": [0.1]}, {"logr": "array"}),
    (rl.kl_k2, {"logr": [0.1]}, {"logr": "array"}),
    (rl.kl_k3, {"logr": [0.1]}, {"logr": "array"}),
    (rl.kl_k3_grad, {"logr": [0.1]}, {"logr": "array"}),
    (rl.policy_loss, _PL, {"logp": "array", "old_logp": "array", "adv": "array", "mask": "array",
                           "loss_type": "choice", "eps_low": "nonneg", "eps_high": "nonneg?", "beta": "nonneg",
                           "ref_logp": "array", "max_len": "positive?", "tau_pos": "positive", "tau_neg": "positive"}),
    (rl.sapo_gate, {"ratio": [1.1, 0.5], "adv": [1.0, -1.0], "tau_pos": 1.0, "tau_neg": 1.05},
     {"ratio": "array", "adv": "array", "tau_pos": "positive", "tau_neg": "positive"}),
    (rl.cispo_weight, {"ratio": [1.1, 0.1], "eps_low": None, "eps_high": 0.28, "cap": 0.2},
     {"ratio": "array", "eps_low": "nonneg?", "cap": "positive?"}),
    (rl.high_entropy_mask, {"entropy": [[0.5, 1.0]], "mask": [[1.0, 1.0]], "top_quantile": 0.2, "micro_batches": 1},
     {"entropy": "array", "mask": "array", "top_quantile": "nonneg", "micro_batches": "int:1"}),
    (rl.overlong_penalty, {"length": [3, 9], "max_len": 10, "buffer": 4},
     {"length": "array", "max_len": "positive", "buffer": "positive"}),
    (rl.kimi_length_reward, {"lengths": [3, 5, 9], "correct": [True, False, True]},
     {"lengths": "array", "correct": "array"}),
    (rl.kl_shaped_rewards, {"kl": [[0.1, 0.2]], "score": [1.0], "mask": [[1.0, 1.0]], "beta": 0.1, "clamp": True},
     {"kl": "array", "score": "array", "mask": "array", "beta": "nonneg", "clamp": "flag"}),
    (rl.gae, {"rewards": [[0.0, 1.0]], "values": [[0.5, 0.5]], "mask": [[1.0, 1.0]], "gamma": 0.9, "lam": 0.8},
     {"rewards": "array", "values": "array", "mask": "array", "gamma": "nonneg", "lam": "nonneg"}),
    (rl.softmax_pg_exact, {"logits": [0.0, 1.0], "rewards": [1.0, 0.0]}, {"logits": "array", "rewards": "array"}),
    (rl.score_function_estimate, {"logits": [0.0, 1.0], "samples": [0, 1, 1], "weights": [1.0, 0.0, 0.5]},
     {"logits": "array", "samples": "int_array", "weights": "array"}),
    (rl.enumerate_groups, {"probs": [0.3, 0.7], "G": 3}, {"probs": "array", "G": "int:1"}),
]
BAD_INPUTS += [case for fn, valid, spec in _VALID for case in cases(fn, valid, spec)]

# overflow in an intermediate result, though every input is finite: refused, naming the argument
_HUGE = (1e308, -1e308, 1.7e308)
BAD_INPUTS += tagged("overflow", [
    *[(f, ([h, h, -h],), {}, "rewards") for h in _HUGE
      for f in (rl.grpo_advantages, rl.dr_grpo_advantages, rl.rloo_advantages, rl.reward_to_go)],
    *[(rl.grpo_advantages, ([[0.0, s]],), {"ddof": d}, "rewards") for s in (1e155, 1e200) for d in (0, 1)],
    *[(rl.advantages, ([[h, 0.0]], kind), {}, "rewards") for h in _HUGE for kind in ("grpo", "rloo", "dr_grpo")],
    *[(rl.advantages, ([[h, 0.0]], "baseline"), {"b": -h}, "b") for h in _HUGE],
    *[(rl.kl_k3, ([x],), {}, "logr") for x in (710.0, 1000.0, 1e308)],
    *[(rl.kl_k3_grad, ([x],), {}, "logr") for x in (710.0, 1e5)],
    *[(rl.kl_k2, ([x],), {}, "logr") for x in (2e154, -1e300)],
    *[(rl.clipped_surrogate, ([r], [a]), {}, "ratio and adv") for r, a in ((1e200, 1e200), (1e300, -1e10))],
    *[(rl.policy_loss, (), {**_PL, "logp": [[x, -2.0]], "beta": 0.0}, "logp - old_logp") for x in (709.0, 800.0)],
    (rl.policy_loss, (), {**_PL, "logp": [[1e308, 0.0]], "old_logp": [[-1e308, 0.0]]}, "logp - old_logp"),
    (rl.policy_loss, (), {**_PL, "logp": [[300.0, 0.0]], "old_logp": [[0.0, 0.0]], "adv": [1e200]}, "adv"),
    (rl.policy_loss, (), {**_PL, "ref_logp": [[800.0, 0.0]]}, "ref_logp - logp"),
    (rl.policy_loss, (), {**_PL, "ref_logp": [[700.0, 0.0]], "beta": 1e10}, "adv and beta"),
    (rl.aggregate_loss, ([[1e308, 1e308]], [[1.0, 1.0]], "dapo"), {}, "per_token"),
    (rl.aggregate_loss, ([[1.7e308], [1.7e308]], [[1.0], [1.0]], "sum"), {}, "per_token"),
    (rl.gae, ([[1e308, 1e308]], [[0.0, 0.0]], [[1.0, 1.0]]), {}, "rewards and values"),
    (rl.gae, ([[0.0, 0.0]], [[1e308, -1e308]], [[1.0, 1.0]]), {}, "rewards and values"),
    (rl.kl_shaped_rewards, ([[1e308]], [1e308], [[1.0]], 1.0), {}, "beta, kl and score"),
    (rl.kl_shaped_rewards, ([[1e300]], [0.0], [[1.0]], 1e10), {}, "beta, kl and score"),
    (rl.softmax_pg_exact, ([0.0, 0.0], [1e308, -1e308]), {}, "rewards"),
    (rl.score_function_estimate, ([0.0, 1.0], [0, 1], [1e308, 1e308]), {}, "weights"),
])
BAD_INPUTS += tagged("size", [
    (rl.enumerate_groups, (np.full(20, 0.05), 30), {}, "probs and G"),      # 1.9e13 groups
    (rl.enumerate_groups, ([0.5, 0.5], 10**8), {}, "probs and G"),
    (rl.enumerate_groups, (np.full(100, 0.01), 5), {}, "probs and G"),       # 9.2e7 groups
    (rl.enumerate_groups, ([0.5, 0.5], 2**63), {}, "G"),
    (rl.gae, (np.zeros((1, 10**5 + 1)), np.zeros((1, 10**5 + 1)), np.ones((1, 10**5 + 1))), {}, "rewards"),
])
BAD_INPUTS += tagged("shape", [
    (rl.policy_loss, (), {**_PL, "mask": [[1.0, 1.0, 1.0]]}, "mask"),
    (rl.policy_loss, (), {**_PL, "adv": [[1.0]]}, "adv"),
    (rl.policy_loss, (), {**_PL, "ref_logp": [[0.0]]}, "ref_logp"),
    (rl.gae, ([[0.0, 1.0]], [[0.5]], [[1.0, 1.0]]), {}, "values"),
    (rl.kl_shaped_rewards, ([[0.1, 0.2]], [1.0, 2.0], [[1.0, 1.0]], 0.1), {}, "score"),
    (rl.score_function_estimate, ([[0.0, 1.0]] * 2, [[0, 1]], [[1.0, 1.0]]), {}, "logits"),
    (rl.score_function_estimate, ([0.0, 1.0], [0, 1], [1.0]), {}, "weights"),
    (rl.softmax_pg_exact, ([0.0, 1.0], [1.0, 0.0, 0.0]), {}, "rewards"),
    (rl.clip_fraction, ([1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0]), {}, "ratio"),
    (rl.kimi_length_reward, ([1, 2, 3], [True, False]), {}, "correct"),
])
BAD_INPUTS += tagged("value", [(rl.kimi_length_reward, ([-1, 2], [True, True]), {}, "lengths")])


@pytest.mark.parametrize("fn, kwargs, expected", [
    *valid_numpy_scalars(rl.grpo_advantages, {"rewards": [1.0, 0.0, 0.0], "eps": 0.5, "ddof": 1}, ["eps", "ddof"]),
    *valid_numpy_scalars(rl.clipped_surrogate, {**_CLIP, "eps_low": 0.25, "eps_high": 0.5}, ["eps_low", "eps_high"]),
    *valid_numpy_scalars(rl.policy_loss, {**_PL, "beta": 0.5, "max_len": 4}, ["beta", "max_len"]),
    *valid_numpy_scalars(rl.overlong_penalty, {"length": [3, 9], "max_len": 10, "buffer": 4}, ["max_len", "buffer"]),
    *valid_numpy_scalars(rl.gae, {"rewards": [[0.0, 1.0]], "values": [[0.5, 0.5]], "mask": [[1.0, 1.0]],
                                  "gamma": 0.5, "lam": 1}, ["gamma", "lam"]),
    *valid_numpy_scalars(rl.enumerate_groups, {"probs": [0.3, 0.7], "G": 3}, ["G"])])
def test_numpy_scalars_of_every_width_are_accepted(fn, kwargs, expected):
    assert same(fn(**kwargs), expected)


def test_large_but_finite_rewards_still_work():
    """Only a real overflow is refused: rewards of 1e150 (GRPO) or 1e307 (Dr. GRPO, RLOO) still compute."""
    np.testing.assert_allclose(rl.grpo_advantages([1e150, -1e150]), [1.0, -1.0])
    np.testing.assert_allclose(rl.dr_grpo_advantages([1e307, 1e307, -1e307]), np.array([1, 1, -2]) * 2e307 / 3)
    np.testing.assert_allclose(rl.kl_k3([709.0]), np.expm1(709.0) - 709.0)
