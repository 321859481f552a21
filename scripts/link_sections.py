"""Rewrite the prose's section references as links that say what the sidebar says.

The book numbers sections per part, from their place in _toc.yml (book/_ext/toc_sections.py, which
the sidebar uses too): the eighth file listed under Part I is "I.8", whatever its file name. This script turns every "§8",
"§I.8", "Part II §6" or "Part II, §6" in the markdown cells of the notebooks and in book/*.md into
a link such as ``[§I.8](../part1/s08_baselines.ipynb)``. A bare "§N" inside a Part-k notebook
means Part k's section N. References that are already links are rewritten to the same form, so
running the script twice changes nothing.

References to a section not written yet point to the section
that holds the material (REDIRECT), and a range such as "§2–§5" shrinks to the sections that exist
("§III.3–§III.5"). A reference to a section that exists nowhere stops the script.

    python scripts/link_sections.py            # rewrite in place, list the files changed
    python scripts/link_sections.py --check    # exit 1 if anything would change
"""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import toc_sections  # noqa: E402  (section numbers from _toc.yml)

ROOT = Path(__file__).resolve().parents[1]
ROMAN = ["I", "II", "III", "IV", "V"]
ARABIC = {r: i + 1 for i, r in enumerate(ROMAN)}

# sections not written yet: (missing section, part of the citing page) -> where the material is
# (used only while the section is missing from _toc.yml)
REDIRECT = {
    ("III.1", "III"): "III.3",   # the lecture's overview: "Why GRPO" opens Part III
    ("III.2", "III"): "II.4",    # PPO, its value model and the KL penalty: built in Part II §4
    ("III.4", "III"): "I.10",    # GRPO's length normalisation and Dr. GRPO: Part I §10
    ("III.4", "I"): "III.5",     # "a toy in which length is free to change": the thinking model
}

# a reference: an existing link [§I.8](...), or "Part II §6" / "Part II, §6" / "§I.8" / "§8"
REF = re.compile(
    r"\[§\s?(?P<lpart>[IVX]+)\.(?P<lnum>\d+)\]\((?P<lpath>[^)\s]*)\)"
    r"|(?:Part\s+(?P<ppart>[IVX]+),?\s+)?§\s?(?:(?P<part>[IVX]+)\.)?(?P<num>\d+)"
)
# a range "§2–§5" (or "§III.2–§III.5"), whose ends may be missing sections
RANGE = re.compile(r"§\s?(?:(?P<pa>[IVX]+)\.)?(?P<a>\d+)\s*[–-]\s*§\s?(?:(?P<pb>[IVX]+)\.)?(?P<b>\d+)")
# spans left alone: fenced code (not directives), inline code and roles, math
PROTECT = re.compile(
    r"^(?P<fence>`{3,}|~{3,})(?!\s*\{)[^\n]*\n.*?^(?P=fence)[ \t]*$"
    r"|`+[^`\n]*`+"
    r"|\$\$.*?\$\$|\$[^$\n]+\$",
    re.S | re.M,
)


def sections(toc=ROOT / "_toc.yml"):
    """{'I.8': 'notebooks/part1/s08_baselines', ...} for every section file in the toc."""
    return {label: doc for doc, label in toc_sections.labels(toc).items()}


def label_of(docname):
    return toc_sections.labels().get(docname)


def part_of(docname):
    """The part (roman) whose chapters list ``docname``, or the part its folder holds (a page of
    notebooks/partK/ not in the toc yet), None elsewhere."""
    num = toc_sections.section_numbers().get(docname)
    if num:
        return ROMAN[num[0] - 1]
    m = re.match(r"notebooks/part(\d+)/", docname)
    return ROMAN[int(m.group(1)) - 1] if m else None


def _relpath(target, here):
    """Path of docname ``target`` from the folder of docname ``here`` (both without suffix)."""
    t, h = Path(target).parts, Path(here).parts[:-1]
    common = 0
    while common < min(len(t), len(h)) and t[common] == h[common]:
        common += 1
    return "/".join([".."] * (len(h) - common) + list(t[common:])) + ".ipynb"


def link_text(text, here, secs):
    """``text`` (markdown of page ``here``) with every section reference as a canonical link."""
    home = part_of(here)

    def one(m):
        if m.group("lpart"):
            label = f"{m.group('lpart')}.{int(m.group('lnum'))}"
        else:
            part = m.group("part") or m.group("ppart") or home
            if part is None:
                raise ValueError(f"{here}: {m.group(0)!r} names no part and the page is in none")
            label = f"{part}.{int(m.group('num'))}"
        if label not in secs:                        # a section not written yet: where its material is
            label = REDIRECT.get((label, home), label)
        if label not in secs:
            raise ValueError(f"{here}: {m.group(0)!r} refers to §{label}, which is not in _toc.yml")
        return f"[§{label}]({_relpath(secs[label], here)})"

    def span(m):
        part = m.group("pa") or home
        if part is None:
            return m.group(0)  # one() reports it
        a, b = int(m.group("a")), int(m.group("b"))
        if f"{part}.{a}" in secs and f"{part}.{b}" in secs:
            return m.group(0)
        inside = [n for n in range(a, b + 1) if f"{part}.{n}" in secs]
        if not inside:
            raise ValueError(f"{here}: {m.group(0)!r}: no section of Part {part} in that range")
        lo, hi = inside[0], inside[-1]
        return f"§{part}.{lo}" if lo == hi else f"§{part}.{lo}–§{part}.{hi}"

    def prose(t):
        return REF.sub(one, RANGE.sub(span, t))

    out, pos = [], 0
    for p in PROTECT.finditer(text):
        out.append(prose(text[pos:p.start()]))
        out.append(p.group(0))
        pos = p.end()
    out.append(prose(text[pos:]))
    return "".join(out)


def _rewrite_notebook(path, secs):
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    here = path.relative_to(ROOT).with_suffix("").as_posix()
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = "".join(cell["source"])
        new = link_text(src, here, secs)
        if new != src:
            cell["source"] = new.splitlines(keepends=True)
    return raw, json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _rewrite_page(path, secs):
    raw = path.read_text(encoding="utf-8")
    return raw, link_text(raw, path.relative_to(ROOT).with_suffix("").as_posix(), secs)


def main(argv):
    check = "--check" in argv
    secs = sections()
    changed = []
    pages = [(p, _rewrite_notebook) for p in sorted((ROOT / "notebooks").rglob("*.ipynb"))
             if ".ipynb_checkpoints" not in p.parts]
    pages += [(p, _rewrite_page) for p in sorted((ROOT / "book").glob("*.md"))
              if p.name != "exercises.md"]                 # generated, with its links already made
    for path, rewrite in pages:
        old, new = rewrite(path, secs)
        if new != old:
            changed.append(path.relative_to(ROOT))
            if not check:
                path.write_text(new, encoding="utf-8")
    for p in changed:
        print(("would change " if check else "linked ") + str(p))
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
