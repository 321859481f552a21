"""train_rl's reward hook and language-model PPO (Part III §1, §2) on a tiny untrained TinyLM."""
import dataclasses

import numpy as np
import pytest

from toy import rl
from toy.tinylm import model as M, rewards, task, train as T


def tiny_model():
    return M.TinyLM(M.ModelConfig(n_layer=1, n_embd=16, n_head=2, mlp_hidden=32), seed=0)


def test_default_reward_fn_is_the_exact_verifier():
    m = tiny_model()
    cfg = T.RLConfig(steps=3, n_prompts=4, G=4, lr=1e-2)
    p1, h1 = T.train_rl(m, cfg, seed=0)
    p2, h2 = T.train_rl(m, cfg, seed=0, reward_fn=T.exact_reward)
    assert np.array_equal(h2.pop("reward"), h2["accuracy"])
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

    monkeypatch.setattr(rl, "gae", spy)
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
    got, real_rollout, real_shaped = {}, T.rollout, rl.kl_shaped_rewards
    monkeypatch.setattr(T, "rollout", lambda *a, **k: got.setdefault("ro", []).append(real_rollout(*a, **k)) or got["ro"][-1])
    monkeypatch.setattr(rl, "kl_shaped_rewards", lambda kl, *a: got.setdefault("kl", []).append(kl) or real_shaped(kl, *a))
    _, h = T.train_rl(m, cfg, seed=0, reward_fn=reward_fn)
    ro = got["ro"][1]                                       # the second step samples from after_one
    want = after_one.logprobs(ro.seqs) - m.logprobs(ro.seqs)
    np.testing.assert_allclose(got["kl"][1] * ro.mask, want * ro.mask, atol=1e-5)
    np.testing.assert_allclose(h["kl_reward"][1], np.mean(-0.2 * (want * ro.mask).sum(axis=1)), atol=1e-5)
    assert np.abs(want * ro.mask).max() > 1e-3              # the policy has moved: the test can fail
