"""A reproduction ledger: each of a lecture's claims, the book's value and a verdict decided in code.

Every part of the book ends with one (§I.12, §II.7, §III.7), written the same way::

    ledger = Ledger()
    ledger.claim("§9", "one win counts more on a hard instance", "+1.73 vs +0.58",
                 f"{a:+.3f} vs {b:+.3f}", "Â(x2 win) > Â(x3 win)", holds(a > b))
    glue("", **ledger.counts(prefix="p1s12_"))      # p1s12_n_claims, p1s12_n_reproduced, ...
    ledger.table(caption="Part I: the lecture's claims and what the book computes")

A verdict is one of ``VERDICTS``: *reproduced*, *partly*, *not reproduced*, or *beyond the
lecture* (an experiment the lecture does not run). ``close``, ``holds`` and ``verdict`` turn a
number or a few conditions into one; ``effect`` and ``no_effect`` decide a measured difference
by one rule: an effect is *reproduced* when it clears 2 s.e. over the seeds, 2 s.e. over the
warm-ups (clustered, where runs start from a few warm-ups) and a stated margin, *partly* when it
clears 2 s.e. over the seeds only, else *not reproduced*; "no effect" is *reproduced* when the
whole 2-s.e. interval lies within a stated tolerance, "not worse" (``non_inferior``) when the
interval stays above minus a stated margin. A row is an ``"experiment"`` (a phenomenon of training or
sampling) or ``"by construction"`` (a calibration we chose, an exercise's closed-form answer):
the two are counted and shown apart, because the second kind cannot fail for an interesting
reason.
"""
import json

import numpy as np

from ._check_args import as_array, nonneg, one_of

REPRODUCED, PARTLY, NOT, BEYOND = "reproduced", "partly", "not reproduced", "beyond the lecture"
VERDICTS = (REPRODUCED, PARTLY, NOT, BEYOND)
KINDS = ("experiment", "by construction")
COLOURS = {REPRODUCED: "#e3f1e6", PARTLY: "#fbf1d6", NOT: "#f8dcd6", BEYOND: "#e2e8f4"}
COLUMNS = ("§", "claim", "lecture says", "book", "criterion", "verdict", "fresh seeds", "note")
SAME, NOT_RUN = "same", "not run"
_TEXT = ["claim", "lecture says", "book", "criterion", "fresh seeds", "note"]       # left-aligned in the table

__all__ = ["Ledger", "close", "holds", "verdict", "effect", "no_effect", "non_inferior", "VERDICTS", "KINDS",
           "REPRODUCED", "PARTLY", "NOT", "BEYOND"]


def verdict(ok, partly=False):
    """*reproduced* if ``ok``, else *partly* if ``partly``, else *not reproduced*."""
    for v, name in ((ok, "ok"), (partly, "partly")):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False (a criterion's outcome), got {v!r}")
    return REPRODUCED if ok else PARTLY if partly else NOT


def close(value, target, tol, tol_partly=None):
    """A number (or every entry of an array) against the lecture's: *reproduced* if
    |value − target| ≤ tol everywhere, *partly* if ≤ tol_partly everywhere, else *not reproduced*."""
    value, target = as_array(value, "value"), as_array(target, "target")
    tol = nonneg(tol, "tol")
    if tol_partly is not None and nonneg(tol_partly, "tol_partly") < tol:
        raise ValueError(f"tol_partly must be >= tol = {tol}, got {tol_partly}")
    gap = np.abs(value - target).max(initial=0.0)
    return verdict(gap <= tol, tol_partly is not None and gap <= tol_partly)


def holds(*conditions):
    """A statement made of several parts: all hold → *reproduced*, some → *partly*, none → *not
    reproduced*. One condition: *reproduced* or *not reproduced*."""
    if not conditions:
        raise ValueError("conditions must hold at least one condition, got none")
    n = sum(bool(c) for c in conditions)
    return verdict(n == len(conditions), n > 0)


def _number(x, name):
    a = as_array(x, name)
    if a.ndim or not np.isfinite(a):
        raise ValueError(f"{name} must be one finite number, got {x!r}")
    return float(a)


def _mean_se(diff, se):
    return _number(diff, "diff"), nonneg(_number(se, "se"), "se")


def _se_warmups(se_warmups):
    return None if se_warmups is None else nonneg(_number(se_warmups, "se_warmups"), "se_warmups")


def effect(diff, se, se_warmups=None, *, sign=1, k=2.0, margin=0.0):
    """A claimed effect of a known sign, measured as ``diff`` ± ``se`` (a paired difference over
    seeds; ``effect(*pair)`` takes a ``(mean, se)`` or ``(mean, se, se_warmups)`` pair), decided
    by the book's one rule. With d = sign·diff:

    - *reproduced*: d ≥ k·se over the seeds, d ≥ k·``se_warmups`` over the warm-ups (the clustered
      s.e., where runs start from a few warm-ups), and d > ``margin`` (the size the claim needs);
    - *partly*: d ≥ k·se over the seeds, but not over the warm-ups or not beyond the margin;
    - *not reproduced*: fewer than k standard errors over the seeds (not detectable), or reversed."""
    diff, se = _mean_se(diff, se)
    if isinstance(sign, bool) or sign not in (1, -1):
        raise ValueError(f"sign must be +1 (an increase) or -1 (a decrease), got {sign!r}")
    k, margin, sew = nonneg(k, "k"), nonneg(_number(margin, "margin"), "margin"), _se_warmups(se_warmups)
    d = sign * diff
    seeds = d > 0 and d >= k * se
    return verdict(seeds and (sew is None or d >= k * sew) and d > margin, seeds)


def no_effect(diff, se, tol, k=2.0, se_warmups=None):
    """A claim of no effect (none larger than ``tol``), measured as ``diff`` ± ``se``: an
    equivalence test, so that noisier data passes less easily, never more.

    - *reproduced*: |diff| + k·s ≤ tol, s the larger of ``se`` and ``se_warmups`` (the whole
      k-s.e. interval lies within ±tol);
    - *partly*: |diff| < tol, but the interval reaches past tol (too noisy to bound it);
    - *not reproduced*: |diff| ≥ tol."""
    diff, se = _mean_se(diff, se)
    tol, k, sew = nonneg(tol, "tol"), nonneg(k, "k"), _se_warmups(se_warmups)
    s = se if sew is None else max(se, sew)
    return verdict(abs(diff) + k * s <= tol, abs(diff) < tol)


def non_inferior(diff, se, se_warmups=None, *, margin, k=2.0):
    """A claim that one arm is *not worse* than another (as good, the gap closed), measured as
    ``diff`` = arm − comparator ± ``se``, against a stated ``margin`` (how much worse still counts
    as "as good"): an interval test, so that noisier data passes less easily, never more.

    - *reproduced*: diff − k·s ≥ −margin, s the larger of ``se`` and ``se_warmups``;
    - *partly*: diff ≥ −margin, but the interval reaches below −margin (too noisy to tell);
    - *not reproduced*: diff < −margin."""
    diff, se = _mean_se(diff, se)
    margin, k, sew = nonneg(_number(margin, "margin"), "margin"), nonneg(k, "k"), _se_warmups(se_warmups)
    s = se if sew is None else max(se, sew)
    return verdict(diff - k * s >= -margin, diff >= -margin)


class Ledger:
    """The rows of one part's ledger, in the order they are claimed."""

    def __init__(self):
        self.rows = []

    def claim(self, section, claim, lecture_says, book, criterion, verdict, kind="experiment", note=""):
        """One row: where the book shows it, the claim, what the lecture says (quoted), what the
        book computes, the criterion of the verdict, the verdict (``close`` / ``holds`` /
        ``verdict``, or *beyond the lecture*), its kind and an optional note."""
        for name, text in [("section", section), ("claim", claim), ("lecture_says", lecture_says),
                           ("book", book), ("criterion", criterion), ("note", note)]:
            if not isinstance(text, str):
                raise ValueError(f"{name} must be a string, got {type(text).__name__}")
        one_of(verdict, "verdict", VERDICTS), one_of(kind, "kind", KINDS)
        self.rows.append({"§": section, "claim": claim, "lecture says": lecture_says, "book": book,
                          "criterion": criterion, "verdict": verdict, "note": note, "kind": kind})

    @staticmethod
    def _key(row):
        return f"{row['§']} | {row['claim']}"

    @staticmethod
    def _finding(row):
        """What a row decides: its verdict, or (beyond the lecture) its note, which states the finding."""
        return row["note"] if row["verdict"] == BEYOND else row["verdict"]

    def fresh_seeds(self, name):
        """The replication of every experimental row on seeds the book never used (``toy.seeds``).

        On the fresh seeds (``RL_BY_HAND_SEEDS=fresh``, ``make fresh``): keep each row's verdict
        (for a row *beyond the lecture*, its note) in ``evidence/fresh/<name>.json``. On the book's
        seeds: read them, and give each row its ``fresh seeds`` entry: *same*, the other finding
        (the verdict flipped), or *not run* (no fresh result for this row). Returns
        ``(replicated, compared)``: the experimental rows whose finding is the same, of those with one."""
        from . import seeds
        path = seeds.fresh_file(name)
        rows = [r for r in self.rows if r["kind"] == "experiment"]
        if seeds.fresh():
            seeds.write_json(path, seeds.seal({"seeds": f"RL seeds from {seeds.FRESH_BASE}, warm-ups {seeds.FRESH_BASE} + w",
                                               "rows": {self._key(r): {"finding": self._finding(r), "book": r["book"]}
                                                        for r in rows}}))
        kept = json.loads(path.read_text(encoding="utf-8"))["rows"] if path.is_file() else {}
        same = compared = 0
        for r in rows:
            got = kept.get(self._key(r), {}).get("finding")
            r["fresh seeds"] = NOT_RUN if got is None else SAME if got == self._finding(r) else got
            compared += got is not None
            same += got is not None and got == self._finding(r)
        return same, compared

    def _select(self, kind, verdicts):
        one_of(kind, "kind", KINDS)
        if verdicts is not None:
            for v in verdicts:
                one_of(v, "verdicts", VERDICTS)
        return [r for r in self.rows if r["kind"] == kind and (verdicts is None or r["verdict"] in verdicts)]

    def counts(self, kind="experiment", prefix=""):
        """The number of rows of ``kind`` and of each verdict among them, named for ``toy.glue``:
        ``{prefix}n_claims``, ``{prefix}n_reproduced``, ``{prefix}n_partly``,
        ``{prefix}n_not_reproduced``, ``{prefix}n_beyond_the_lecture``."""
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {type(prefix).__name__}")
        rows = self._select(kind, None)
        out = {f"{prefix}n_claims": len(rows)}
        for v in VERDICTS:
            out[f"{prefix}n_{v.replace(' ', '_')}"] = sum(r["verdict"] == v for r in rows)
        return out

    def listing(self, verdict, kind="experiment"):
        """"§: claim; §: claim; …" for the rows with this verdict (for the prose)."""
        one_of(verdict, "verdict", VERDICTS)
        return "; ".join(f"{r['§']}: {r['claim']}" for r in self._select(kind, [verdict]))

    def frame(self, kind="experiment", verdicts=None):
        """The rows of ``kind`` (only those with one of ``verdicts``, if given) as a DataFrame
        numbered from 1 (index "#"); the note and fresh-seeds columns only if some row has one."""
        import pandas as pd
        rows = self._select(kind, verdicts)
        columns = [c for c in COLUMNS if c not in ("note", "fresh seeds") or any(r.get(c) for r in rows)]
        df = pd.DataFrame([{c: r.get(c, "") for c in columns} for r in rows], columns=columns)
        df.index = pd.RangeIndex(1, len(df) + 1, name="#")
        return df

    def table(self, kind="experiment", verdicts=None, caption=None, uuid=None):
        """``frame`` in the book's table style, each verdict on its colour (``COLOURS``), the text
        columns left-aligned. ``uuid`` (the HTML id; default: from ``kind`` and ``verdicts``) must
        differ between the tables of one page, or their styles mix."""
        from . import plots
        df = self.frame(kind, verdicts)
        uuid = uuid or "_".join(["ledger", kind, *(verdicts or ())]).replace(" ", "_")
        t = plots.table(df, caption=caption, uuid=uuid)
        text = [f"td.col{i}" for i, c in enumerate(df.columns) if c in _TEXT]   # beats the style's "td"
        t.styler = t.styler.map(lambda v: f"background-color: {COLOURS[v]}" if v in COLOURS else "",
                                subset=["verdict"])
        if "fresh seeds" in df.columns:                       # replicated: green; flipped: red
            t.styler = t.styler.map(lambda v: "" if v == NOT_RUN else
                                    f"background-color: {COLOURS[REPRODUCED if v == SAME else NOT]}",
                                    subset=["fresh seeds"])
        t.styler = t.styler.set_table_styles(
            [{"selector": sel, "props": "text-align: left;"} for sel in text], overwrite=False)
        return t
