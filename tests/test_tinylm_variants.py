"""The loss-variant race (toy/tinylm/variants.py): each variant is GRPO's run with exactly the fields
of its paper's setting changed, every variant on the same ten seeds (so that the differences
are paired), and the run list that the notebook and the ledger share."""
import dataclasses

from toy.tinylm import train as T, variants as V


def _changed(cfg, base):
    return {f.name for f in dataclasses.fields(cfg) if getattr(cfg, f.name) != getattr(base, f.name)}


def test_each_variant_changes_only_its_own_fields():
    cfgs = V.race_configs()
    base = cfgs["GRPO"]
    assert base == T.RLConfig(algo="grpo", steps=100, n_prompts=32, G=8, lr=1e-4, mu=4)
    assert base.mu > 1                                     # at μ = 1 GSPO, CISPO, δ are GRPO
    want = {"GSPO": {"ratio_level", "eps_low", "eps_high"}, "CISPO": {"loss_mode", "eps_low", "eps_high"},
            "δ = 4": {"delta"}, "bnpo": {"loss_type", "micro_batch"}, "top 20 % entropy": {"top_entropy_quantile"}}
    assert {k: _changed(c, base) for k, c in cfgs.items() if k != "GRPO"} == want
    assert (cfgs["GSPO"].eps_low, cfgs["GSPO"].eps_high) == (3e-4, 4e-4)       # GSPO's paper, §5.1
    assert 1 + cfgs["CISPO"].eps_high == 5.0 and cfgs["CISPO"].eps_low == 1.0  # TRL's cap 5, no lower bound
    ctrl = V.race_configs(controls=True)["GSPO, clip 0.2"]
    assert _changed(ctrl, base) == {"ratio_level"}          # GSPO's ratio with GRPO's clip range


def test_every_variant_runs_on_the_same_ten_seeds():
    runs = V.race_runs()
    assert len(runs) == 10 * len(V.RACE)
    for i, name in enumerate(V.RACE):
        block = runs[10 * i:10 * (i + 1)]
        assert [s for _, s in block] == list(range(10))
        assert all(c == V.race_configs()[name] for c, _ in block)
    assert [s for _, s in V.race_runs(controls=True)] == list(range(10))
