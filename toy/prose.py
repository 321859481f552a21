"""``toy.glue`` (this module is ``toy.prose``): put computed numbers into the prose, rounded to what the prose shows.

A notebook glues each experimental number once and the markdown shows it with the *same*
format spec::

    glue(".3f", p1s8_std_plain=std_plain, p1s8_std_base=std_base)   # code cell
    {glue:text}`p1s8_std_plain:.3f`                                   # markdown

The value is rounded to what ``fmt`` prints (``format(value, fmt)`` read back), so the
committed output holds ``0.325``, not the 16 digits of ``repr(float)`` that no reader sees
and that can differ in the last place between machines. Numpy scalars become plain Python
numbers (their ``np.float64(…)`` text cannot be read by a format spec). Strings are glued as
they are (``fmt`` is then ignored).
"""
import math
import re
import numbers
from decimal import Decimal



__all__ = ["glue_pm", "glue", "rounded", "pm", "pm_format"]


def rounded(value, fmt):
    """``value`` rounded to exactly what ``format(value, fmt)`` shows, as a Python number.

    ``rounded(0.12547888, ".3f") == 0.125``; ``rounded(0.4449, ".0%") == 0.44``;
    ``rounded(3.04e-5, ".1e") == 3.0e-05``; ``rounded(6400, ",") == 6400``.
    """
    if not isinstance(fmt, str):
        raise ValueError(f"fmt must be a format spec string such as '.3f', got {type(fmt).__name__}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"value must be a real number, got {type(value).__name__}")
    if isinstance(value, numbers.Integral) and fmt in ("", "d", ","):
        return int(value)
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value}")
    try:
        text = format(value, fmt)
    except ValueError:
        raise ValueError(f"fmt {fmt!r} is not a format spec for a number") from None
    text = text.replace(",", "").replace("_", "").strip()
    # read back in decimal, so that "99.4%" gives 0.994 and not 0.9940000000000001
    out = float(Decimal(text[:-1]).scaleb(-2)) if text.endswith("%") else float(text)
    if out == 0.0:
        out = 0.0                                   # no "-0.0"
    return int(out) if fmt in ("d", ",") else out


def pm(mean, se, decimals=3, signed=False, percent=False):
    """``"mean ± se"`` for a table or a ledger, both with ``decimals`` decimals — more where the
    standard error would round to zero, so that a non-zero error always shows its first
    significant digit (up to 12 decimals): ``pm(0.9994, 0.0003) == "0.9994 ± 0.0003"``, never
    ``"0.999 ± 0.000"``. An error of exactly 0 is no measurement error: ``"0.500 (every seed the
    same)"``, and one below 1e-12 is floating-point rounding: ``"+0.000 (every seed the same to 12
    decimals)"``. ``signed``: a sign on the mean (``"+0.081 ± 0.029"``), for differences; ``percent``:
    both in percent (``pm(0.32, 0.003, 0, percent=True) == "32.0% ± 0.3%"``)."""
    for name, v in (("mean", mean), ("se", se)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite real number, got {v!r}")
    if se < 0:
        raise ValueError(f"se must be >= 0, got {se}")
    for name, v in (("signed", signed), ("percent", percent)):
        if not isinstance(v, bool):
            raise ValueError(f"{name} must be True or False, got {v!r}")
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or not 0 <= decimals <= 12:
        raise ValueError(f"decimals must be an integer in 0..12, got {decimals!r}")
    scale, unit = (100.0, "%") if percent else (1.0, "")
    mean, se, d = float(mean) * scale, float(se) * scale, int(decimals)
    while se > 0 and d < 12 and float(format(se, f".{d}f")) == 0:
        d += 1                                      # one more digit until the error shows
    rounding = se > 0 and float(format(se, f".{d}f")) == 0         # below 1e-12: floating-point noise
    if rounding:
        d = int(decimals)
    m = format(mean, f"{'+' if signed else ''}.{d}f")
    if float(m) == 0:
        m = format(0.0, f"{'+' if signed else ''}.{d}f")              # no "-0.000"
    if rounding:
        return f"{m}{unit} (every seed the same to 12 decimals)"
    return f"{m}{unit} ± {format(se, f'.{d}f')}{unit}" if se > 0 else f"{m}{unit} (every seed the same)"


def pm_format(mean, se, fmt=".3f"):
    """:func:`pm` with a format spec as the prose uses: ``".3f"``, ``"+.3f"`` (signed) or ``".1%"``."""
    m = re.fullmatch(r"(\+)?\.(\d+)([f%])", fmt) if isinstance(fmt, str) else None
    if m is None:
        raise ValueError(f"fmt must look like '.3f', '+.3f' or '.1%', got {fmt!r}")
    return pm(mean, se, int(m.group(2)), signed=bool(m.group(1)), percent=m.group(3) == "%")


def glue(fmt, **values):
    """Glue each ``name=value`` for the prose (not displayed in the cell), each value rounded
    to what ``fmt`` shows (see ``rounded``); strings are glued unchanged."""
    if not values:
        raise ValueError("glue needs at least one name=value")
    for name, value in values.items():
        v = value if isinstance(value, str) else rounded(value, fmt)
        _myst_glue(name, v, display=False)


def glue_pm(decimals=3, signed=False, **pairs):
    """Glue each ``name=(mean, se)`` as the text ``pm(mean, se, decimals, signed)``: a standard
    error that would round to zero shows its first significant digit (``"0.994 ± 0.0004"``); an
    error of exactly 0 (every seed the same) says so: ``"0.994 (every seed the same)"``; never
    ``"± 0.000"``."""
    if not pairs:
        raise ValueError("glue_pm needs at least one name=(mean, se)")
    for name, pair in pairs.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"{name} must be a (mean, se) pair, got {pair!r}")
        _myst_glue(name, pm(float(pair[0]), float(pair[1]), decimals, signed), display=False)


def _myst_glue(name, value, display):
    from myst_nb import glue as myst_glue           # imported on first use: myst_nb is heavy
    myst_glue(name, value, display=display)
