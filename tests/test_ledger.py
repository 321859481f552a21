"""toy.ledger: verdicts on hand-made cases, counts against a naive count, the styled table read
back from its HTML; bad input raises a ValueError naming the argument."""
import re

import numpy as np
import pytest

from toy import ledger as lg
from toy.ledger import BEYOND, NOT, PARTLY, REPRODUCED, Ledger, close, effect, holds, no_effect, non_inferior, verdict


@pytest.mark.parametrize("args, expected", [
    ((0.36, 0.36, 0.0), REPRODUCED),                     # exact, tolerance 0
    ((0.364, 0.36, 0.005), REPRODUCED),
    ((0.37, 0.36, 0.005), NOT),
    ((0.37, 0.36, 0.005, 0.02), PARTLY),
    ((0.40, 0.36, 0.005, 0.02), NOT),
    (([0.75, 0.0], [0.75, 0.0004], 5e-4), REPRODUCED),   # every entry within tol
    (([0.75, 0.1], [0.75, 0.0], 5e-4), NOT),             # one entry outside
    (([1.73, -0.58], 1.73, 0.01), NOT),                  # target broadcasts
    ((-0.5, -0.5, 0), REPRODUCED),
])
def test_close_by_hand(args, expected):
    assert close(*args) == expected


@pytest.mark.parametrize("conditions, expected", [
    ((True,), REPRODUCED), ((False,), NOT), ((True, True, True), REPRODUCED),
    ((True, False, False), PARTLY), ((False, False), NOT), ((np.bool_(True), 1, "x"), REPRODUCED),
])
def test_holds_by_hand(conditions, expected):
    assert holds(*conditions) == expected


@pytest.mark.parametrize("ok, partly, expected", [
    (True, False, REPRODUCED), (True, True, REPRODUCED), (False, True, PARTLY), (False, False, NOT),
])
def test_verdict_by_hand(ok, partly, expected):
    assert verdict(ok, partly) == expected


@pytest.mark.parametrize("args, kwargs, expected", [
    ((0.081, 0.029), {}, REPRODUCED),                    # 2.8 s.e.
    ((0.040, 0.020), {}, REPRODUCED),                    # exactly 2 s.e.
    ((0.039, 0.020), {}, NOT),                           # right sign, 1.95 s.e.: not detectable
    ((-0.01, 0.02), {}, NOT),                            # reversed
    ((0.0, 0.0), {}, NOT),                               # no effect at all
    ((-0.05, 0.01), {"sign": -1}, REPRODUCED),           # a claimed decrease
    ((0.05, 0.01), {"sign": -1}, NOT),
    ((0.03, 0.02), {"k": 1}, REPRODUCED),
    ((0.011, 0.005, 0.007), {}, PARTLY),                 # 2.2 s.e. over the seeds, 1.6 over the warm-ups
    ((0.011, 0.005, 0.005), {}, REPRODUCED),
    ((0.011, 0.005, None), {}, REPRODUCED),              # no warm-ups (independent runs)
    ((0.011, 0.005), {"margin": 0.02}, PARTLY),          # detectable, smaller than the claim needs
    ((0.03, 0.005), {"margin": 0.02, "se_warmups": 0.01}, REPRODUCED),
])
def test_effect_by_hand(args, kwargs, expected):
    assert effect(*args, **kwargs) == expected


@pytest.mark.parametrize("args, kwargs, expected", [
    ((0.005, 0.004, 0.03), {}, REPRODUCED),              # 0.005 + 2·0.004 ≤ 0.03
    ((0.023, 0.002, 0.03), {}, REPRODUCED),              # small, real, bounded below 0.03
    ((0.023, 0.004, 0.03), {}, PARTLY),                  # 0.023 + 0.008 > 0.03: cannot bound it
    ((-0.023, 0.004, 0.03), {}, PARTLY),
    ((0.04, 0.03, 0.03), {}, NOT),                       # not small
    ((0.0, 0.0, 0.03), {}, REPRODUCED),                  # exactly none (an exact computation)
    ((0.0, 0.02, 0.03), {}, PARTLY),                     # noisier data passes less easily, never more
    ((0.0, 0.01, 0.03), {"se_warmups": 0.02}, PARTLY),   # the larger s.e. bounds it
    ((0.01, 0.004, 0.03), {"k": 3}, REPRODUCED),
])
def test_no_effect_by_hand(args, kwargs, expected):
    assert no_effect(*args, **kwargs) == expected


@pytest.mark.parametrize("args, kwargs, expected", [
    ((0.0, 0.004), {"margin": 0.01}, REPRODUCED),        # 0 − 0.008 ≥ −0.01
    ((-0.005, 0.002), {"margin": 0.01}, REPRODUCED),     # −0.009 ≥ −0.01
    ((-0.005, 0.003), {"margin": 0.01}, PARTLY),         # −0.011: too noisy to tell
    ((0.0, 0.02), {"margin": 0.01}, PARTLY),             # noisier data passes less easily, never more
    ((-0.019, 0.002), {"margin": 0.01}, NOT),            # worse by more than the margin
    ((0.0, 0.002, 0.008), {"margin": 0.01}, PARTLY),     # the warm-ups' s.e. bounds it
    ((0.05, 0.01), {"margin": 0.0}, REPRODUCED),
])
def test_non_inferior_by_hand(args, kwargs, expected):
    assert non_inferior(*args, **kwargs) == expected


def _ledger():
    led = Ledger()
    led.claim("§2", "a", "16", "15", "wins = 16", NOT, note="off by one")
    led.claim("§3", "b", "0.36", "0.358", "|Δ| ≤ 0.005", REPRODUCED)
    led.claim("§5", "c", "remedy", "0.01", "J > 0.05", PARTLY)
    led.claim("§6", "d", "—", "crossover at 8", "exists", BEYOND)
    led.claim("§8", "e", "0.1875", "0.1875", "|Δ| ≤ 5e-4", REPRODUCED, kind="by construction")
    led.claim("§9", "f", "1.73", "1.73", "|Δ| ≤ 0.005", NOT, kind="by construction")
    return led


def test_counts_against_a_naive_count():
    led = _ledger()
    for kind, prefix in [("experiment", "p1s12_"), ("by construction", "")]:
        rows = [r for r in led.rows if r["kind"] == kind]
        expected = {f"{prefix}n_claims": len(rows)}
        for v in ("reproduced", "partly", "not reproduced", "beyond the lecture"):
            expected[f"{prefix}n_{v.replace(' ', '_')}"] = len([r for r in rows if r["verdict"] == v])
        assert led.counts(kind, prefix=prefix) == expected
    assert led.counts(prefix="x_") == {"x_n_claims": 4, "x_n_reproduced": 1, "x_n_partly": 1,
                                      "x_n_not_reproduced": 1, "x_n_beyond_the_lecture": 1}


def test_frame_keeps_order_numbers_from_one_and_drops_an_empty_note_column():
    led = _ledger()
    df = led.frame()
    assert list(df["claim"]) == ["a", "b", "c", "d"] and list(df.index) == [1, 2, 3, 4]
    assert df.index.name == "#" and list(df.columns) == [c for c in lg.COLUMNS if c != "fresh seeds"]   # none run
    assert df.loc[1, "note"] == "off by one" and df.loc[2, "note"] == ""
    checks = led.frame("by construction")
    assert list(checks["claim"]) == ["e", "f"] and "note" not in checks.columns
    assert list(led.frame(verdicts=[PARTLY, NOT])["claim"]) == ["a", "c"]
    assert list(led.frame(verdicts=[PARTLY, NOT]).index) == [1, 2]


def test_listing_names_section_and_claim():
    led = _ledger()
    assert led.listing(NOT) == "§2: a"
    assert led.listing(NOT, kind="by construction") == "§9: f"
    assert led.listing(PARTLY) == "§5: c" and led.listing(REPRODUCED, "by construction") == "§8: e"


def test_tables_of_one_page_get_their_own_ids():
    led = _ledger()
    ids = {re.search(r'id="(T_[^"]+)"', t._repr_html_()).group(1)
           for t in (led.table(), led.table("by construction"), led.table(verdicts=(PARTLY, NOT)))}
    assert len(ids) == 3


def test_table_colours_each_verdict_cell_and_left_aligns_the_text():
    html = _ledger().table(caption="Part I", uuid="led")._repr_html_()
    assert "Part I" in html and 'id="T_led"' in html
    for row, v in enumerate([NOT, REPRODUCED, PARTLY, BEYOND]):
        col = lg.COLUMNS.index("verdict")
        css = re.search(rf"#T_led_row{row}_col{col} \{{\s*background-color: (#[0-9a-f]+);", html)
        assert css and css.group(1) == lg.COLOURS[v]
    # the left alignment must outrank the book style's "#T_led td { text-align: right }"
    left = set(re.findall(r"#T_led td\.col(\d+) \{\s*text-align: left;", html))
    shown = [c for c in lg.COLUMNS if c != "fresh seeds"]
    assert left == {str(shown.index(n)) for n in ("claim", "lecture says", "book", "criterion", "note")}
    assert re.search(r"#T_led td \{\s*text-align: right;", html)
    assert repr(_ledger().table()).splitlines()[0].split() == ["§", "claim", "lecture", "says", "book",
                                                               "criterion", "verdict", "note"]


BAD_INPUTS = [
    (close, (np.nan, 0.5, 0.1), {}, "value"),
    (close, ("x", 0.5, 0.1), {}, "value"),
    (close, (0.5, None, 0.1), {}, "target"),
    (close, (0.5, 0.5, -0.1), {}, "tol"),
    (close, (0.5, 0.5, [0.1, 0.2]), {}, "tol"),
    (close, (0.5, 0.5, 0.1, 0.05), {}, "tol_partly"),
    (close, (0.5, 0.5, 0.1, np.inf), {}, "tol_partly"),
    (holds, (), {}, "conditions"),
    (effect, (0.1, -0.01), {}, "se"), (effect, (float("nan"), 0.01), {}, "diff"),
    (effect, ([0.1, 0.2], 0.01), {}, "diff"), (effect, (0.1, 0.01), {"sign": 2}, "sign"),
    (effect, (0.1, 0.01), {"k": -1}, "k"), (non_inferior, (0.1, 0.01), {"margin": -0.1}, "margin"),
    (non_inferior, ("x", 0.01), {"margin": 0.1}, "diff"), (effect, (0.1, 0.01), {"margin": -1}, "margin"),
    (effect, (0.1, 0.01), {"se_warmups": float("nan")}, "se_warmups"), (no_effect, (0.1, 0.01, -0.1), {}, "tol"),
    (no_effect, (0.1, float("inf"), 0.1), {}, "se"),
    (Ledger().claim, ("§1", "c", "l", "b", "crit", "yes"), {}, "verdict"),
    (Ledger().claim, ("§1", "c", "l", "b", "crit", REPRODUCED), {"kind": "algebra"}, "kind"),
    (Ledger().claim, ("§1", "c", "l", 0.5, "crit", REPRODUCED), {}, "book"),
    (Ledger().claim, (1, "c", "l", "b", "crit", REPRODUCED), {}, "section"),
    (Ledger().claim, ("§1", "c", "l", "b", "crit", REPRODUCED), {"note": None}, "note"),
    (Ledger().counts, ("experiments",), {}, "kind"),
    (Ledger().counts, (), {"prefix": 3}, "prefix"),
    (Ledger().listing, ("wrong",), {}, "verdict"),
    (Ledger().frame, (), {"verdicts": ["reproduced", "nope"]}, "verdicts"),
    (Ledger().table, ("checks",), {}, "kind"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_fresh_seeds_keeps_the_verdicts_then_marks_each_row(tmp_path, monkeypatch):
    """On the fresh seeds the ledger keeps its findings; on the book's seeds each row says whether
    its finding replicated (a flipped verdict shows the fresh one; a row without a fresh result
    says so), and the count is of the rows compared."""
    monkeypatch.setenv("TOY_EVIDENCE_DIR", str(tmp_path))

    def build(v1, note):
        led = Ledger()
        led.claim("§1", "a", "x", "y", "c", v1)
        led.claim("§2", "b", "x", "y", "c", BEYOND, note=note)
        led.claim("§3", "c", "x", "y", "c", REPRODUCED, kind="by construction")
        return led

    monkeypatch.setenv("RL_BY_HAND_SEEDS", "fresh")
    assert build(PARTLY, "an effect").fresh_seeds("part9") == (2, 2)
    monkeypatch.setenv("RL_BY_HAND_SEEDS", "book")
    led = build(REPRODUCED, "an effect")
    assert led.fresh_seeds("part9") == (1, 2)
    assert [r.get("fresh seeds") for r in led.rows] == [PARTLY, "same", None]
    assert "fresh seeds" in led.frame().columns and "fresh seeds" not in led.frame("by construction").columns
    led.claim("§4", "d", "x", "y", "c", NOT)
    assert led.fresh_seeds("part9") == (1, 2) and led.rows[-1]["fresh seeds"] == "not run"
    led.table()                                                # renders with the column
    monkeypatch.setenv("RL_BY_HAND_SEEDS", "other")
    with pytest.raises(ValueError, match="RL_BY_HAND_SEEDS"):
        led.fresh_seeds("part9")


@pytest.mark.parametrize("name, notebook, uuid", [("part1", "notebooks/part1/s12_ledger.ipynb", "ledger"),
                                                  ("part2", "notebooks/part2/s07_ledger.ipynb", "ledger"),
                                                  ("part3", "notebooks/part3/s07_ledger.ipynb", "ledger_experiment")])
def test_every_committed_ledger_row_was_replicated_on_fresh_seeds(name, notebook, uuid):
    """``make fresh`` ran after the ledger's rows last changed: every experimental row of the
    committed table (the one whose HTML id is ``T_<uuid>``) has a fresh-seeds finding (none 'not
    run'), the same finding as on the book's seeds (a verdict that flips is not robust), and the
    kept file names exactly the committed rows (a row renamed or added since is caught)."""
    import html
    import json
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    nb = json.loads((root / notebook).read_text())
    page = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb["cells"] for o in c.get("outputs", [])
                   if f'id="T_{uuid}"' in "".join(o.get("data", {}).get("text/html", "")))
    header = [html.unescape(h) for h in re.findall(r'class="col_heading level0 col\d+" >([^<]*)</th>', page)]
    assert "fresh seeds" in header, "the ledger shows no fresh-seeds column: run make fresh"
    col = header.index("fresh seeds")
    cells = [html.unescape(v) for v in re.findall(rf'class="data row\d+ col{col}" >([^<]*)</td>', page)]
    assert cells and lg.NOT_RUN not in cells, f"{cells.count(lg.NOT_RUN)} rows without a fresh result: run make fresh"
    kept = json.loads((root / "evidence" / "fresh" / f"{name}.json").read_text())["rows"]
    claims = [html.unescape(v) for v in re.findall(r'class="data row\d+ col1" >([^<]*)</td>', page)]
    assert len(kept) == len(claims)
    flipped = [v for v in cells if v != lg.SAME]       # a verdict that flips is not robust: fix the claim or the experiment
    assert not flipped, f"{len(flipped)} rows whose finding differs on the fresh seeds: {flipped}"
