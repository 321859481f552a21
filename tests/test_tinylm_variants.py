"""The loss-variant race (toy/tinylm/variants.py, §III.8): each arm is GRPO's run with exactly the
fields of its paper's setting changed, RLOO's reward gives RLOO's advantage exactly, every arm runs
on the same seeds over the same warm-ups (so that the differences are paired), and each arm's TRL
and verl settings are those of book/toy_to_real.md (no setting, no tag invented)."""
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from toy import rl
from toy.tinylm import task, train as T, variants as V

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "book" / "toy_to_real.md").read_text(encoding="utf-8")


def _changed(cfg, base):
    return {f.name for f in dataclasses.fields(cfg) if getattr(cfg, f.name) != getattr(base, f.name)}


def test_each_arm_changes_only_its_own_fields():
    cfgs = V.race_configs()
    base = cfgs["GRPO"]
    assert base == T.RLConfig(algo="grpo", steps=100, n_prompts=32, G=8, lr=1e-4, mu=4)
    assert base.mu > 1                                     # at μ = 1 GSPO, CISPO, δ are GRPO
    want = {"Dr. GRPO": {"algo"}, "DAPO token mean": {"loss_type"}, "GSPO": {"ratio_level", "eps_low", "eps_high"},
            "CISPO": {"loss_mode", "eps_low", "eps_high"}, "BNPO": {"loss_type", "micro_batch"}, "δ = 4": {"delta"},
            "top 20 % entropy": {"top_entropy_quantile"}, "RLOO": {"algo", "loss_type"}, "SAPO": {"loss_mode"}}
    assert {k: _changed(c, base) for k, c in cfgs.items() if k != "GRPO"} == want
    assert cfgs["RLOO"].loss_type == "grpo" and cfgs["Dr. GRPO"].loss_type is None   # RLOO keeps GRPO's loss
    assert (cfgs["GSPO"].eps_low, cfgs["GSPO"].eps_high) == (3e-4, 4e-4)       # GSPO's paper, §5.1
    assert 1 + cfgs["CISPO"].eps_high == 5.0 and cfgs["CISPO"].eps_low == 1.0  # TRL's cap 5, no lower bound
    ctrl = V.race_configs(controls=True)
    assert _changed(ctrl["GSPO, clip 0.2"], base) == {"ratio_level"}          # GSPO's ratio with GRPO's range
    assert _changed(ctrl["no ÷σ"], base) == {"algo", "loss_type"} and ctrl["no ÷σ"] == cfgs["RLOO"]
    assert _changed(ctrl["CISPO, cap 0.2"], base) == {"loss_mode", "eps_low", "cispo_cap"}   # TRL's default cap
    assert ctrl["CISPO, cap 0.2"].cispo_cap == 0.2 and ctrl["CISPO, cap 0.2"].eps_high is None
    assert _changed(ctrl["top 20 % entropy, per micro-batch"], base) == {"top_entropy_quantile", "entropy_micro_batches"}
    assert 32 * 8 == base.n_prompts * base.G                                  # micro-batches of 8 answers (TRL's default)
    assert set(V.REWARDS) == {"RLOO"}                     # RLOO = "no ÷σ" on the reward × 8/7, nothing else
    far = V.race_configs(far=True)
    assert set(far) == {"GRPO", "CISPO", "SAPO", "δ = 4"}                    # the off-policy knobs and GRPO
    assert all(_changed(far[n], cfgs[n]) == {"lr"} and far[n].lr == 4 * base.lr for n in far)   # only the lr, × 4


def test_rloo_reward_gives_rloo_advantages_exactly():
    """Dr. GRPO's advantage (r − group mean) of the verifier's reward × 8/7 is RLOO's leave-one-out
    advantage, against a naive loop over the other G − 1 answers, on a real batch of answers."""
    rng = np.random.default_rng(3)
    digits, _ = task.make_prompts(16, rng)
    rep = np.repeat(digits, 8, axis=0)                                     # 16 groups of 8 answers
    guess = np.where(rng.random(128) < 0.4, rep.sum(axis=1) % 10, rng.integers(0, 10, 128))
    tokens = np.stack([task.encode(f"#{d}$") for d in guess])             # direct answers, some right
    r = task.verify_tokens(tokens, rep)["reward"].reshape(16, 8)
    assert 0 < r.mean() < 1                                      # some groups hold both
    loop = np.array([[r[g, i] - np.mean(np.delete(r[g], i)) for i in range(8)] for g in range(16)])
    got = rl.advantages(V.rloo_reward(tokens, rep).reshape(16, 8), "dr_grpo")
    np.testing.assert_allclose(got, loop, atol=1e-12)
    np.testing.assert_allclose(got, rl.rloo_advantages(r), atol=1e-12)


def test_every_arm_runs_on_the_same_seeds_over_the_same_warmups(monkeypatch):
    from toy.record import cache
    calls = []
    monkeypatch.setattr(cache, "cached_train_rl_seeds",
                        lambda cfg, seeds, warmups, reward_fn: calls.append((cfg, list(seeds), warmups, reward_fn)))
    V.race()
    V.race(controls=True, names=["no ÷σ"])
    assert [c[0] for c in calls] == list(V.race_configs().values()) + [V.race_configs(True)["no ÷σ"]]
    assert all(c[1] == list(range(30)) and c[2] == 3 for c in calls)         # ten seeds on each of 3 warm-ups
    assert [c[3] for c in calls] == [V.rloo_reward if n == "RLOO" else None for n in V.RACE] + [None]
    with pytest.raises(ValueError, match="names"):
        V.race(names=["GSPO, clip 0.2"])                                     # a control, not an arm of RACE
    with pytest.raises(ValueError, match="n_seeds"):
        V.race(n_seeds=2)
    calls.clear()
    V.race(far=True)
    assert [c[0] for c in calls] == list(V.race_configs(far=True).values())
    assert all(c[1] == list(range(12)) and c[2] == 3 for c in calls)         # four seeds on each of 3 warm-ups
    with pytest.raises(ValueError, match="far"):
        V.race(controls=True, far=True)


def _facts():
    """The ids of book/toy_to_real.md's checked facts."""
    table = PAGE[PAGE.index("\n## Checked facts"):]
    return set(re.findall(r"^\| ([TV]\d+) \|", table, flags=re.M))


def test_settings_are_those_of_toy_to_real():
    """Each arm's TRL and verl setting cites checked facts that exist, and every setting it names
    (a code span) is on book/toy_to_real.md: the race invents no setting."""
    facts = _facts()
    assert set(V.SETTINGS) == set(V.RACE) | set(V.CONTROLS)
    page_spans = set(re.findall(r"`([^`]+)`", PAGE))
    for name, (trl, verl) in V.SETTINGS.items():
        for text in (trl, verl):
            for tag in re.findall(r"\[([TV]\d+)\]", text):
                assert tag in facts, (name, tag)
            for a, lo, hi in re.findall(r"\[([TV])(\d+)\]–\[[TV](\d+)\]", text):   # a range [T11]–[T16]
                assert {f"{a}{i}" for i in range(int(lo), int(hi) + 1)} <= facts, (name, text)
            for span in re.findall(r"`([^`]+)`", text):
                key = span.split("=")[0].split(".")[-1]
                assert any(key in s for s in page_spans), (name, span)
    assert "none" == V.SETTINGS["BNPO"][1] and "none" == V.SETTINGS["top 20 % entropy"][1]   # verl has neither
    assert "[T11]" in V.SETTINGS["RLOO"][0] and "[V12]" in V.SETTINGS["RLOO"][1]
    assert "[T56]" in V.SETTINGS["CISPO"][0] and "5.0" in V.SETTINGS["CISPO"][0]


def test_paired_differences_draws_both_intervals():
    """The race's figure: each arm's point at its mean, its thick bar ± 2 s.e. over the seeds and
    its thin bar ± 2 s.e. over the warm-ups, arms top to bottom in the given order."""
    import matplotlib
    matplotlib.use("Agg")
    from toy import plots
    from toy.tinylm import figures
    _, ax = plots.figure()
    figures.paired_differences(ax, ["a", "b"], [(0.1, 0.01, 0.03), (-0.2, 0.02, 0.005)])
    warm, seeds = ax.containers                             # errorbar containers, in drawing order
    for container, k in ((warm, 2), (seeds, 1)):
        segs = container.lines[2][0].get_segments()
        np.testing.assert_allclose([s[1, 0] - s[0, 0] for s in segs], [4 * 0.03, 4 * 0.005] if k == 2 else [4 * 0.01, 4 * 0.02])
        np.testing.assert_allclose([s[:, 0].mean() for s in segs], [0.1, -0.2])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"] and ax.yaxis_inverted()
