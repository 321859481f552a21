"""Section numbers come from ``_toc.yml``, not from file names.

The k-th numbered part of the table of contents is Part k (I, II, III, ...), and the n-th file of
its chapters is its section n: ``§I.8`` is the eighth file listed under Part I, whatever the file
is called. Adding a section means adding its file to ``_toc.yml`` (CONTRIBUTING.md, "Adding a
section"); the sections after it renumber themselves in the sidebar, the prose's links
(``scripts/link_sections.py``) and the exercise index (``scripts/exercises.py``). File names (and
the glue keys and assignment names made from them) are identifiers only.

Used by the Sphinx extension ``reader_site`` and by the scripts; standard library and PyYAML only.
"""
from pathlib import Path

import yaml

ROMAN = ["I", "II", "III", "IV", "V", "VI"]
TOC = Path(__file__).resolve().parents[2] / "_toc.yml"


def section_numbers(toc=TOC):
    """{docname: (part, number)} of every chapter of a numbered part, e.g.
    {'notebooks/part1/s08_baselines': (1, 8), ...}, in the order of the table of contents."""
    parts = [p for p in yaml.safe_load(Path(toc).read_text())["parts"] if p.get("numbered")]
    return {ch["file"]: (k, n) for k, part in enumerate(parts, 1)
            for n, ch in enumerate(part["chapters"], 1)}


def labels(toc=TOC):
    """{docname: 'I.8'} of every numbered section."""
    return {doc: f"{ROMAN[k - 1]}.{n}" for doc, (k, n) in section_numbers(toc).items()}
