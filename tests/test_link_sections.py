"""scripts/link_sections.py on hand-made prose (the sweep of the book's prose: test_section_refs.py)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import link_sections as ls  # noqa: E402

SECS = {"I.2": "notebooks/part1/s02_x", "I.8": "notebooks/part1/s08_y", "I.10": "notebooks/part1/s10_z",
        "II.4": "notebooks/part2/s04_w", "III.3": "notebooks/part3/s03_a", "III.5": "notebooks/part3/s05_b"}
HERE = "notebooks/part1/s05_here"


@pytest.mark.parametrize("text, expected", [
    ("as in §8.", "as in [§I.8](s08_y.ipynb)."),
    ("§8's bias", "[§I.8](s08_y.ipynb)'s bias"),
    ("(Part II §4 builds it)", "([§II.4](../part2/s04_w.ipynb) builds it)"),
    ("Part II, §4", "[§II.4](../part2/s04_w.ipynb)"),
    ("see §III.5", "see [§III.5](../part3/s05_b.ipynb)"),
    ("[§I.8](old/path.ipynb)", "[§I.8](s08_y.ipynb)"),                       # existing link: canonical
    ("§2–§8", "[§I.2](s02_x.ipynb)–[§I.8](s08_y.ipynb)"),
    ("Part III §4 has a toy", "[§III.5](../part3/s05_b.ipynb) has a toy"),   # redirected (REDIRECT)
    ("`§8` and $x§8$ and {glue:text}`p:§8`", "`§8` and $x§8$ and {glue:text}`p:§8`"),   # code, math
    ("```python\n# §8\n```\n§8", "```python\n# §8\n```\n[§I.8](s08_y.ipynb)"),          # code fence
    ("```{note}\n§8\n```", "```{note}\n[§I.8](s08_y.ipynb)\n```"),                     # directive: prose
])
def test_references_become_canonical_links(text, expected):
    assert ls.link_text(text, HERE, SECS) == expected
    assert ls.link_text(expected, HERE, SECS) == expected   # idempotent


def test_part_three_gaps_and_ranges():
    here = "notebooks/part3/s06_c"
    assert ls.link_text("§2–§5 are the core", here, SECS) == \
        "[§III.3](s03_a.ipynb)–[§III.5](s05_b.ipynb) are the core"
    assert ls.link_text("(Dr. GRPO, §4)", here, SECS) == "(Dr. GRPO, [§I.10](../part1/s10_z.ipynb))"
    assert ls.link_text("§1–§3", here, SECS) == "[§III.3](s03_a.ipynb)"


def test_missing_or_partless_references_stop_the_script():
    with pytest.raises(ValueError, match="§I.13"):
        ls.link_text("see §13", HERE, SECS)
    with pytest.raises(ValueError, match="§III.7"):
        ls.link_text("Part III §7", HERE, SECS)
    with pytest.raises(ValueError, match="names no part"):
        ls.link_text("see §8", "book/glossary", SECS)
    assert ls.link_text("see Part I §8", "book/glossary", SECS) == "see [§I.8](../notebooks/part1/s08_y.ipynb)"


def test_sections_of_the_toc():
    secs = ls.sections()
    assert secs["I.8"] == "notebooks/part1/s08_baselines"
    assert sorted(k for k in secs if k.startswith("III.")) == ["III.1", "III.2", "III.3", "III.4", "III.5", "III.6", "III.7", "III.8"]
