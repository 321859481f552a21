"""The student edition against the full one, on the book's real notebooks.

The reference here parses the markdown with markdown-it (the parser MyST builds on) instead of the
script's line scanner: both must agree on what is a solution.
"""
import json
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import student_edition  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").rglob("s*.ipynb"))
MD = MarkdownIt("commonmark").use(colon_fence_plugin)


def _src(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def _directive(token):
    """'exercise', 'solution', 'solution-start', ... for a fenced directive token, else None."""
    if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
        return token.info.strip()[1:].split("}")[0]
    return None


def blocks(nb):
    """The notebook as (kind, text) blocks in order, each marked as solution or not: top-level
    markdown blocks (a directive is one block) and code cells."""
    out, inside = [], False
    for cell in nb["cells"]:
        tagged = "solution" in cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "markdown":
            out.append(("code", _src(cell), inside or tagged, cell))
            continue
        lines = _src(cell).split("\n")
        for tok in MD.parse(_src(cell)):
            if tok.level != 0 or tok.map is None or tok.type.endswith("_close"):
                continue
            name = _directive(tok)
            if name == "solution-start":
                inside = True
            text = "\n".join(lines[tok.map[0]:tok.map[1]]).strip()
            out.append((name or "prose", text, inside or tagged or name == "solution", cell))
            if name == "solution-end":
                inside = False
    return out


@pytest.fixture(scope="module")
def editions():
    pairs = []
    for path in NOTEBOOKS:
        full = json.loads(path.read_text())
        student, _ = student_edition.strip(json.loads(path.read_text()))
        pairs.append((path.relative_to(ROOT), full, student))
    return pairs


def test_the_book_has_solutions_to_remove(editions):
    n_solution_blocks = sum(sol for _, full, _ in editions for _, _, sol, _ in blocks(full))
    n_exercises = sum(kind == "exercise" for _, full, _ in editions for kind, *_ in blocks(full))
    assert n_solution_blocks > 50 and n_exercises > 40


def test_same_exercises_and_prose_outside_solutions(editions):
    for name, full, student in editions:
        kept = [(k, t) for k, t, sol, _ in blocks(full) if not sol]
        got = [(k, t) for k, t, _, _ in blocks(student)]
        assert got == kept, name
        n_ex = sum(k == "exercise" for k, _ in kept)
        assert n_ex == sum(k == "exercise" for k, *_ in blocks(full)), name


def test_no_solution_left(editions):
    for name, _, student in editions:
        for kind, text, sol, cell in blocks(student):
            assert not sol, (name, text[:60])
            assert not kind.startswith("solution"), (name, text[:60])
            assert "solution" not in cell.get("metadata", {}).get("tags", []), name


def stub_names(full):
    """Functions a student writes: defined in the code cell just before a {solution-start}."""
    bl = blocks(full)
    return {t.split("def ", 1)[1].split("(")[0] for (k, t, sol, _), nxt in zip(bl, bl[1:])
            if k == "code" and not sol and nxt[0] == "solution-start" and t.startswith("def ")}


def test_no_check_mark_under_a_stub(editions):
    """Every cell that calls a function left as a stub has no outputs (no "✓ all N cases pass")."""
    n_checkers = 0
    for name, full, student in editions:
        names = stub_names(full)
        for cell in student["cells"]:
            if cell["cell_type"] == "code" and any(f"({n})" in _src(cell) for n in names):
                n_checkers += 1
                assert cell["outputs"] == [], (name, _src(cell))
        assert "✓" not in json.dumps([c.get("outputs", []) for c in student["cells"]], ensure_ascii=False), name
    assert n_checkers >= 15


def test_cut_inside_a_cell_and_markers_across_cells():
    """Hand-made: a solution between statements, a longer fence around a nested code fence, a
    colon fence, and solution prose before an end marker."""
    md = lambda s: {"cell_type": "markdown", "metadata": {}, "source": s}
    code = lambda s, outputs=(): {"cell_type": "code", "metadata": {}, "source": s,
                                  "outputs": list(outputs), "execution_count": 1}
    ok = {"output_type": "stream", "name": "stdout", "text": "✓ all 3 cases pass\n"}
    nb = {"cells": [
        md("## Exercises\n\n```{exercise} A\n:label: a\n\nDo A.\n```\n\n"
           "````{solution} a\n:class: dropdown\n\n```python\nx = 1\n```\nmore\n````\n\n"
           ":::{solution} a\nagain\n:::\n\nText after.\n\n```{exercise} B\n:label: b\n```"),
        code("def f():\n    # your code here\n    return None"),
        md("```{solution-start} b\n```"),
        code("def f():\n    return 1"),
        md("Why it works.\n\n```{solution-end}\n```"),
        code("check(f)", [ok]),
        code("plot()", [ok]),
        md("Next section."),
        code("other()", [ok]),
    ]}
    out, touched = student_edition.strip(nb)
    assert touched == 4
    assert [_src(c) for c in out["cells"]] == [
        "## Exercises\n\n```{exercise} A\n:label: a\n\nDo A.\n```\n\nText after.\n\n```{exercise} B\n:label: b\n```",
        "def f():\n    # your code here\n    return None", "check(f)", "plot()", "Next section.", "other()"]
    assert [c.get("outputs") for c in out["cells"][2:4]] == [[], []]  # the checker and what follows it
    assert out["cells"][5]["outputs"] == [ok]                         # past the next prose: kept
    kept = [(k, t) for k, t, sol, _ in blocks(nb) if not sol]
    assert [(k, t) for k, t, _, _ in blocks(out)] == kept
