"""scripts/claims.py, the check ``make test`` runs off the reference arithmetic: worked cases on
small hand-made notebooks (committed against fresh), so that each rule can be seen to fail."""
import copy
import json
import pathlib
import sys

import nbformat
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
import claims  # noqa: E402

GLUE = "application/papermill.record/text/plain"


def glue_output(name, value):
    return nbformat.v4.new_output("display_data", data={GLUE: json.dumps(value) if not isinstance(value, str)
                                                         else repr(value)},
                                  metadata={"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}})


def ledger_output(verdicts):
    rows = "".join(f"<tr><th>{i}</th><td>claim</td><td>{v}</td></tr>" for i, v in enumerate(verdicts))
    html = f"<table><thead><tr><th></th><th>claim</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table>"
    return nbformat.v4.new_output("execute_result", data={"text/html": html, "text/plain": "table"},
                                  execution_count=1)


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    for outputs, tagged in cells:
        c = nbformat.v4.new_code_cell("x = 1")
        c.outputs = outputs
        if tagged:
            c.metadata["tags"] = [claims.TAG]
        nb.cells.append(c)
    return nb


def stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def check(committed, fresh):
    return claims.compare("nb.ipynb", committed, fresh)


def test_identical_runs_hold():
    nb = notebook(([stream("0.433\n"), glue_output("acc", 0.433)], False))
    assert check(nb, copy.deepcopy(nb)) == []


def test_an_untagged_cell_must_print_the_same():
    a = notebook(([stream("0.433\n")], False))
    b = notebook(([stream("0.434\n")], False))
    assert "not tagged" in check(a, b)[0]
    a.cells[0].metadata["tags"] = [claims.TAG]
    assert check(a, b) == []                                  # tagged: its printed digits may move


def test_the_off_reference_warning_is_not_a_difference():
    a = notebook(([], False))
    b = notebook(([nbformat.v4.new_output("stream", name="stderr",
                                          text="RuntimeWarning: toy: this machine is not on the book's reference arithmetic: ...")], False))
    assert check(a, b) == []


def test_a_stream_split_into_chunks_is_the_same_stream():
    a = notebook(([stream("P = 0.349\n"), stream("4579=#8$\n")], False))    # the kernel flushed between
    b = notebook(([stream("P = 0.349\n4579=#8$\n")], False))
    assert check(a, b) == []
    c = notebook(([stream("P = 0.349\n4579=#9$\n")], False))
    assert "not tagged" in check(a, c)[0]                     # joined, the text is still compared


def test_a_glued_number_within_four_se_of_the_difference_plus_a_unit():
    """acc = 0.433 ± 0.014 in both runs: tolerance 4·√(2)·0.014 + 0.001 = 0.0802."""
    def nb(v):
        return notebook(([glue_output("acc", v), glue_output("acc_se", 0.014), stream(f"{v}\n")], True))
    assert check(nb(0.433), nb(0.421)) == []
    assert check(nb(0.433), nb(0.433 + 0.080)) == []
    assert "tolerance" in check(nb(0.433), nb(0.433 + 0.082))[0]


def test_without_an_se_a_quarter_of_the_value():
    a = notebook(([glue_output("x", 0.80), stream("a\n")], True))
    assert check(a, notebook(([glue_output("x", 0.99), stream("b\n")], True))) == []       # 0.19 ≤ 0.2 + 0.01
    assert check(a, notebook(([glue_output("x", 0.45), stream("b\n")], True)))             # the §III.6 case


def test_a_glued_se_within_a_factor_of_ten():
    a = notebook(([glue_output("acc_se", 0.006), stream("a\n")], True))
    assert check(a, notebook(([glue_output("acc_se", 0.001), stream("b\n")], True))) == []
    assert check(a, notebook(([glue_output("acc_se", 0.0005), stream("b\n")], True)))


def test_strings_and_ledger_counts_must_be_equal():
    a = notebook(([glue_output("best", "GRPO"), glue_output("p3s07_n_reproduced", 12), stream("a\n")], True))
    b = notebook(([glue_output("best", "RFT"), glue_output("p3s07_n_reproduced", 12), stream("b\n")], True))
    c = notebook(([glue_output("best", "GRPO"), glue_output("p3s07_n_reproduced", 11), stream("b\n")], True))
    assert "must be equal" in check(a, b)[0]
    assert "must be equal" in check(a, c)[0]


def test_ledger_verdicts_must_not_change():
    a = notebook(([ledger_output(["reproduced", "partly"])], True))
    b = notebook(([ledger_output(["reproduced", "not reproduced"])], True))
    assert claims.verdicts(a.cells[0].outputs) == [["reproduced", "partly"]]
    assert "verdicts changed" in check(a, b)[0]
    assert check(a, copy.deepcopy(a)) == []


def test_an_error_is_a_broken_claim_even_in_a_tagged_cell():
    a = notebook(([stream("ok\n")], True))
    b = notebook(([nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[])], True))
    assert "raised" in check(a, b)[0]


@pytest.mark.parametrize("value, unit", [(0.433, 1e-3), (0.4, 0.1), (12, 1.0), (3.8e-05, 1e-06), (0.0, 1.0)])
def test_the_unit_of_a_glued_number_is_its_last_digit(value, unit):
    assert claims._unit(value) == pytest.approx(unit)
