"""toy.seeds: the book's seeds and the fresh set, and the warm-up each seed starts from in both
(``cache.warmup_configs`` must agree with ``seeds.warmup``: a ledger that builds its warm-ups by hand
and one that lets ``cached_train_rl_seeds`` do it must start seed s from the same model)."""
import pytest

from toy import seeds
from toy.record import cache


def test_the_book_seeds_are_the_literal_ones(monkeypatch):
    monkeypatch.delenv(seeds.ENV, raising=False)
    assert not seeds.fresh() and seeds.seeds(10) == range(10) and seeds.warmup(2) == 2
    assert [c.seed for c in cache.warmup_configs(range(4), 3)] == [0, 1, 2, 0]
    assert cache.warmup_configs([5], 1)[0] == cache.SFTConfig()          # one warm-up: the config as given


def test_the_fresh_seeds_are_disjoint_and_their_warmups_too(monkeypatch):
    monkeypatch.setenv(seeds.ENV, "fresh")
    fresh = seeds.seeds(10)
    assert seeds.fresh() and set(fresh).isdisjoint(range(100)) and len(fresh) == 10
    cfgs = cache.warmup_configs(fresh, 3)
    assert [c.seed for c in cfgs] == [seeds.warmup(s % 3) for s in fresh]      # the by-hand warm-ups agree
    assert {c.seed for c in cfgs}.isdisjoint({0, 1, 2}) and len({c.seed for c in cfgs}) == 3
    assert cache.warmup_configs(fresh, 1)[0].seed == seeds.FRESH_BASE       # one warm-up: moved too


@pytest.mark.parametrize("call, arg", [(lambda: seeds.seeds(0), "n"), (lambda: seeds.seeds(True), "n"),
                                       (lambda: seeds.warmup(-1), "w"), (lambda: seeds.fresh_file("../x"), "name")])
def test_bad_input_is_named(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()


def test_an_unknown_seed_set_is_refused(monkeypatch):
    monkeypatch.setenv(seeds.ENV, "fesh")
    with pytest.raises(ValueError, match=seeds.ENV):
        seeds.seeds(3)
