"""Every "§" reference in the book's prose is a link to a section that exists, and its number is
the one the sidebar shows (part in the toc, section number of the file)."""
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import link_sections  # noqa: E402
import reader_site  # noqa: E402

ROMAN = ["I", "II", "III", "IV"]
CODE = re.compile(r"^(`{3,}|~{3,})(?!\s*\{).*?^\1[ \t]*$|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$", re.S | re.M)
LINK = re.compile(r"\[§([IV]+)\.(\d+)\]\(([^)\s]+)\)")


def toc_sections():
    """{docname: 'I.8'} from _toc.yml, read here independently of book/_ext/toc_sections.py:
    numbered part k (roman), the file's place n among the part's chapters."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [p for p in toc["parts"] if p.get("numbered")]
    return {ch["file"]: f"{ROMAN[k]}.{n}" for k, part in enumerate(numbered)
            for n, ch in enumerate(part["chapters"], 1)}


def prose():
    """(docname, markdown text) of every markdown cell and book page."""
    for path in sorted((ROOT / "notebooks").rglob("s*.ipynb")):
        doc = path.relative_to(ROOT).with_suffix("").as_posix()
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "markdown":
                yield doc, "".join(cell["source"])
    for path in sorted((ROOT / "book").glob("*.md")):
        yield path.relative_to(ROOT).with_suffix("").as_posix(), path.read_text()


def test_sidebar_numbers_follow_the_toc():
    secs = toc_sections()
    assert secs["notebooks/part1/s08_baselines"] == "I.8"
    assert secs["notebooks/part3/s05_thinking_model"] == "III.5"
    for doc, label in secs.items():
        assert reader_site.section_label(doc) == label


def test_every_reference_is_a_link_to_that_section():
    secs = toc_sections()
    n_links = 0
    for doc, text in prose():
        text = CODE.sub("", text)
        for m in LINK.finditer(text):
            target = (ROOT / doc).parent / m.group(3)
            assert target.exists(), (doc, m.group(0))
            target_doc = target.resolve().relative_to(ROOT).with_suffix("").as_posix()
            assert secs.get(target_doc) == f"{m.group(1)}.{m.group(2)}", (doc, m.group(0))
            n_links += 1
        bare = LINK.sub("", text)
        assert "§" not in bare, (doc, bare[max(0, bare.find("§") - 40):bare.find("§") + 20])
    assert n_links > 100


def test_the_sweep_is_done():
    assert link_sections.main(["--check"]) == 0


def test_a_section_added_before_the_ledger_renumbers_the_ledger(tmp_path):
    """Numbers come from the place in _toc.yml, not the file name: a new file listed before
    Part I's ledger makes the ledger §I.13, with no file renamed."""
    import sys
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import toc_sections
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    part1 = next(p for p in toc["parts"] if p.get("numbered"))
    ledger = part1["chapters"][-1]["file"]
    part1["chapters"].insert(len(part1["chapters"]) - 1, {"file": "notebooks/part1/new_section"})
    new = tmp_path / "_toc.yml"
    new.write_text(yaml.safe_dump(toc))
    labels = toc_sections.labels(new)
    assert labels["notebooks/part1/new_section"] == "I.12"
    assert labels[ledger] == "I.13"
    assert toc_sections.labels()[ledger] == "I.12"
    import importlib.util
    spec = importlib.util.spec_from_file_location("link_sections", ROOT / "scripts" / "link_sections.py")
    link = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(link)
    assert link.sections(new)["I.13"] == ledger
