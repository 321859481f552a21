"""toy._check_args, the checks every public function uses: types (bool, str, None, numpy scalars of
every width, big Python ints), sizes, overflow, random sources, and configs checked where used."""
import json
import re
from dataclasses import asdict

import numpy as np
import pytest

from toy import _check_args as ca
from toy import arith
from toy.arith import train as arith_train
from toy.numsearch import train as numsearch_train
from toy.record import cache
from toy.tinylm import model, train

WIDTHS_INT = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
WIDTHS_FLOAT = (np.float16, np.float32, np.float64, np.longdouble)


@pytest.mark.parametrize("t", WIDTHS_INT + WIDTHS_FLOAT)
def test_numpy_scalars_of_every_width(t):
    assert ca.integer(t(7), "k", lo=1) == 7 and type(ca.integer(t(7), "k")) is int
    assert ca.real(t(2), "x") == 2.0 and type(ca.real(t(2), "x")) is float
    assert np.array_equal(ca.int_array(np.array([1, 2], dtype=t), "a"), [1, 2])
    assert np.array_equal(ca.as_array(np.array([1, 2], dtype=t), "a"), [1.0, 2.0])


@pytest.mark.parametrize("call, name", [
    *[((ca.integer, v, "k"), "k") for v in (True, np.bool_(False), "3", None, b"3", 1j, [3], 2.5, np.float32(0.5),
                                           np.nan, np.inf, 2**63, 10**30, -10**30, np.uint64(2**64 - 1))],
    *[((ca.real, v, "x"), "x") for v in (True, "1", None, 1j, np.nan, -np.inf, np.longdouble("inf"), 10**400,
                                        -10**309)],
    *[((ca.int_array, v, "a"), "a") for v in ([10**30], [1, 2**63], np.array([2**64 - 1], np.uint64), [1e19],
                                             "12", [True, False], [None], [0.5])],
    *[((ca.as_array, v, "a"), "a") for v in (None, "1.5", ["1.5"], True, np.bool_(True), b"1", [1j], 10**400,
                                            [1.0, 10**400], {"a": 1}, [np.nan])],
    *[((ca.random_source, v, "rng"), "rng") for v in (np.random, np.random.RandomState(0), None, 0, "rng")],
])
def test_bad_values_raise_value_error_naming_the_argument(call, name):
    fn, *args = call
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args)


def test_int64_bound_and_explicit_hi():
    assert ca.integer(2**63 - 1, "k") == 2**63 - 1
    assert ca.integer(10**30, "k", hi=10**40) == 10**30          # an explicit hi allows more
    with pytest.raises(ValueError, match="below 2\\*\\*63"):
        ca.integer(2**63, "k", lo=0)


def test_size_refuses_with_the_limit_in_the_message():
    assert ca.size(10, "n") == 10
    with pytest.raises(ValueError, match=r"^n would need 1e\+12 draws, more than the limit of 1e\+08"):
        ca.size(10**12, "n", what="draws")


def test_overflow_helpers():
    assert ca.exponent(np.array([709.0]), "x") is not None
    with pytest.raises(ValueError, match="^logr must be <= 709.78"):
        ca.exponent(np.array([710.0]), "logr")
    with pytest.raises(ValueError, match="^rewards must be small enough"):
        ca.finite_result(lambda: np.array([1e308]) * 10, "rewards", "the sum")
    with np.errstate(over="raise"):                                  # evaluated without an overflow warning
        with pytest.raises(ValueError):
            ca.finite_result(lambda: np.array([1e308]) * 10, "x", "x")


def test_a_generator_or_a_seeded_stream_is_a_random_source():
    rng = np.random.default_rng(0)
    assert ca.random_source(rng, "rng") is rng

    class Streams:
        def random(self, shape):
            return np.zeros(shape)
    assert isinstance(ca.random_source(Streams(), "rng"), Streams)


# ------------------------------------------------------------------ configs: types, and checked where used
CONFIGS = [(train.SFTConfig, "steps"), (train.RLConfig, "steps"), (model.ModelConfig, "n_layer"),
           (arith_train.STaRConfig, "rounds"), (arith_train.ReinforceConfig, "steps"),
           (arith_train.GRPOConfig, "steps"), (numsearch_train.SFTConfig, "steps"),
           (numsearch_train.ReSTConfig, "rounds"), (numsearch_train.PGConfig, "steps")]


@pytest.mark.parametrize("cls, field", CONFIGS)
def test_integral_values_become_ints_where_the_config_is_used(cls, field):
    for v in (2.0, np.int64(2), np.uint8(2), np.float32(2.0)):
        cfg = ca.instance(cls(**{field: v}), cls, "cfg")
        assert getattr(cfg, field) == 2 and type(getattr(cfg, field)) is int
        range(getattr(cfg, field))


@pytest.mark.parametrize("cls, field", CONFIGS)
def test_bad_field_types_are_refused_by_name(cls, field):
    for v in (2.5, "2", None, True, 10**30, np.nan):
        with pytest.raises(ValueError, match=rf"^{field}(?!\w)"):
            cls(**{field: v})


@pytest.mark.parametrize("cls, field", CONFIGS)
def test_a_field_changed_after_construction_is_refused_where_the_config_is_used(cls, field):
    cfg = cls()
    setattr(cfg, field, -10)
    with pytest.raises(ValueError, match=rf"^{field}(?!\w)"):
        ca.instance(cfg, cls, "cfg")


def test_trainers_recheck_their_config():
    cfg = numsearch_train.ReSTConfig()
    cfg.lr = -10
    with pytest.raises(ValueError, match="^lr"):
        numsearch_train.train_rest(np.zeros_like(numsearch_train.ns.cold_prior()), cfg)
    cfg = arith_train.STaRConfig()
    cfg.temperature = 0.0
    with pytest.raises(ValueError, match="^temperature"):
        arith_train.train_star(arith.Model(), cfg)


def test_tinylm_configs_hash_with_numpy_fields():
    a, b = train.RLConfig(steps=np.int64(3), lr=np.float32(0.5)), train.RLConfig(steps=3, lr=0.5)
    json.dumps(asdict(a))
    assert cache.config_hash(a) == cache.config_hash(b)


def test_tinylm_generate_refuses_a_temperature_that_is_zero_in_its_dtype():
    m = model.TinyLM(model.ModelConfig(n_layer=1, n_head=1, n_embd=8, mlp_hidden=8), seed=0)
    prefix = np.zeros((2, 11), dtype=np.int64)
    tiny = np.finfo(m.dtype).tiny
    for T in (1e-46, tiny / 2, 0.0):
        with pytest.raises(ValueError, match="^temperature"):
            m.generate(prefix, 3, rng=np.random.default_rng(0), temperature=T)
    out = m.generate(prefix, 3, rng=np.random.default_rng(0), temperature=tiny)     # the argmax, no NaN
    assert np.array_equal(out, m.generate(prefix, 3, greedy=True)[:, :out.shape[1]])


def test_apply_method_refuses_int64_wrap_around():
    with pytest.raises(ValueError, match="^v and operand"):
        arith.apply_method(2**62, 4, True, 0, 1)
    assert arith.apply_method(2**40, 4, True, 0, 0) == 2**42


# ------------------------------------------------------------------ the public boundary: ca.checked
def _check_scale(x, k):
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    return {"x": np.asarray(x, dtype=float)}


@ca.checked(_check_scale)
def _scale(x, k=2.0):
    """k · x (the equation alone)."""
    return x * k


def test_checked_checks_and_normalises_at_the_boundary():
    np.testing.assert_array_equal(_scale([1, 2]), [2.0, 4.0])          # the list became an array
    with pytest.raises(ValueError, match="k must be > 0"):
        _scale([1.0], k=-1)
    with pytest.raises(ValueError, match="_scale"):                     # a wrong signature names the function
        _scale([1.0], 2.0, 3.0)
    assert _scale.check is _check_scale and _scale.__wrapped__(np.ones(1), -1.0)[0] == -1.0


def test_checked_checks_every_caller_alike():
    """The same call is checked wherever it comes from (a notebook or a module of the toy package:
    no caller sniffing); ``.equation`` is the function without its checks, for a caller that has
    checked its input."""
    for caller in ("toy.somewhere", "a_notebook"):
        with pytest.raises(ValueError, match="k"):
            eval("f([1.0], -1)", {"__name__": caller, "f": _scale})
    assert _scale.equation([1.0], -1) == []                             # unchecked: a list times -1


def test_show_displays_the_equation_without_the_decorator():
    from toy import show
    src = repr(show(_scale))
    assert "@ca.checked" not in src and "@checked" not in src and src.startswith("def _scale")
