// The book's small fixes to its theme (loaded on every page; no network, no dependencies).
document.addEventListener("DOMContentLoaded", () => {
  // 1. Sidebar toggles. pydata-sphinx-theme 0.17 wires only the first `.primary-toggle` (and
  //    `.secondary-toggle`) of a page, the navbar's, while sphinx-book-theme shows its own in the
  //    article header (upstream pydata-sphinx-theme #2451). Make the article header's buttons work:
  //    below the theme's 960 px breakpoint they open the same dialog as the wired button; at
  //    desktop widths the primary one collapses and restores the chapter list.
  const wide = window.matchMedia("(min-width: 960px)");
  ["primary", "secondary"].forEach((side) => {
    const [wired, ...unwired] = document.querySelectorAll(`.${side}-toggle`);
    unwired.forEach((button) => {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        if (side === "primary" && wide.matches) {
          const hidden = document.body.classList.toggle("toy-primary-hidden");
          button.setAttribute("aria-expanded", String(!hidden));
        } else if (wired) {
          wired.click();
        }
      });
    });
  });

  // 2. A solution's title is mostly a link to its exercise: clicking it should open the
  //    solution, not jump away (sphinx-togglebutton only reacts to the title itself).
  document.querySelectorAll(".solution > .admonition-title a").forEach((link) => {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      const button = link.closest(".admonition-title").querySelector(".toggle-button");
      if (button) button.click();
    });
  });

  // 3. Some exercises have two solutions (the code, then the discussion) with the same title:
  //    number them, "(1 of 2)", "(2 of 2)", so a reader can tell them apart.
  const byExercise = {};
  document.querySelectorAll(".solution > .admonition-title a").forEach((link) => {
    const key = link.getAttribute("href");
    (byExercise[key] = byExercise[key] || []).push(link);
  });
  Object.values(byExercise).filter((links) => links.length > 1).forEach((links) => {
    links.forEach((link, i) => link.append(` (${i + 1} of ${links.length})`));
  });
});

// 4. Inline formulas wider than their line scroll sideways inside the text instead of widening
//    the page or being cut off: mark them (the maths is typeset when the book is built), again on
//    resize.
const toyReader = (window.toyReader = window.toyReader || {});
toyReader.fitMath = () => {
  document.querySelectorAll(".bd-article mjx-container:not([display='true'])").forEach((m) => {
    m.classList.remove("toy-wide-math");
    const block = m.parentElement.closest("p, li, dd, dt, td, div");
    const room = block ? block.clientWidth : window.innerWidth;
    if (m.getBoundingClientRect().width > room) m.classList.add("toy-wide-math");
  });
};

// 4b. Whatever scrolls sideways says so: a figure kept readable on a phone, a wide table, a wide
//     formula. Its hidden side fades out (a mask on the box: the edge that has more to show), and a
//     figure or table gets a line "scroll sideways" under it.
toyReader.SCROLLERS = ".bd-article .toy-figure, .bd-article table, .bd-article .pst-scrollable-table-container, " +
  ".bd-article div.math, .bd-article mjx-container, " +
  ".bd-article .output_html, .bd-article .cell_output .output.text_html";
toyReader.edges = (box) => {
  box.classList.toggle("toy-at-start", box.scrollLeft <= 1);
  box.classList.toggle("toy-at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
};
toyReader.markScrollers = () => {
  document.querySelectorAll(toyReader.SCROLLERS).forEach((box) => {
    const scrolls = /(auto|scroll)/.test(getComputedStyle(box).overflowX) && box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("toy-scrolls", scrolls);
    let hint = box.nextElementSibling && box.nextElementSibling.classList.contains("toy-scroll-hint")
      ? box.nextElementSibling : null;
    if (scrolls) {
      toyReader.edges(box);
      if (!box.dataset.toyScrollWatch) {
        box.dataset.toyScrollWatch = "1";
        box.addEventListener("scroll", () => toyReader.edges(box), {passive: true});
      }
      if (!hint && !box.matches("mjx-container, div.math") && !box.querySelector(".toy-scrolls")) {
        hint = document.createElement("div");
        hint.className = "toy-scroll-hint";
        hint.setAttribute("aria-hidden", "true");
        hint.textContent = box.matches(".toy-figure") ? "⇠ the figure scrolls sideways ⇢" : "⇠ scroll sideways for more ⇢";
        box.after(hint);
      }
    } else if (hint) {
      hint.remove();
    }
  });
};
toyReader.layout = () => { toyReader.fitMath(); toyReader.markScrollers(); };
document.addEventListener("DOMContentLoaded", () => {
  toyReader.layout();
  window.addEventListener("load", toyReader.layout);
  window.addEventListener("resize", toyReader.layout);
});

// 5. Every figure enlarges in place on a click or tap, in a layer over the page that scrolls (at
//    least its design size, or the screen's width); a tap, Escape, the close button or the browser's
//    back button closes it. Never a link to the bare image: the click is the layer's.
toyReader.designWidth = (img) => parseFloat(img.style.width) || parseFloat(img.style.getPropertyValue("--toy-w")) || img.naturalWidth;
toyReader.FIGURES = ".bd-article .cell_output img, .bd-article .toy-scrubber img, .bd-article .toy-figure img";
toyReader.markZoomable = () => {
  document.querySelectorAll(toyReader.FIGURES).forEach((img) => {
    img.classList.add("toy-zoomable");
    if (!img.hasAttribute("tabindex")) img.setAttribute("tabindex", "0");
    img.setAttribute("role", "button");
    img.setAttribute("aria-label", `${img.alt || "figure"} (enlarge)`);
  });
};
toyReader.zoom = (img) => {
  if (document.querySelector(".toy-zoom")) return;
  const layer = document.createElement("div");
  layer.className = "toy-zoom";
  layer.setAttribute("role", "dialog");
  layer.setAttribute("aria-modal", "true");
  layer.setAttribute("aria-label", "enlarged figure: tap, Escape or back to close");
  const big = document.createElement("img");
  big.src = img.currentSrc || img.src;
  big.alt = img.alt;
  big.style.width = `${Math.max(toyReader.designWidth(img), Math.min(window.innerWidth, 1200) - 16)}px`;
  const close = document.createElement("button");
  close.className = "toy-zoom-close";
  close.setAttribute("aria-label", "close");
  close.textContent = "×";
  layer.append(close, big);
  let open = true;
  const done = (fromHistory) => {
    if (!open) return;
    open = false;
    layer.remove();
    document.removeEventListener("keydown", onKey);
    window.removeEventListener("popstate", onPop);
    if (!fromHistory && history.state && history.state.toyZoom) history.back();
    img.focus?.({preventScroll: true});
  };
  const onKey = (e) => { if (e.key === "Escape") done(false); };
  const onPop = () => done(true);
  layer.addEventListener("click", (e) => { e.preventDefault(); done(false); });
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", onPop);
  try { history.pushState({toyZoom: true}, ""); } catch (e) { /* file:// may refuse: Escape and taps still close */ }
  document.body.append(layer);
  close.focus({preventScroll: true});
};
document.addEventListener("DOMContentLoaded", () => {
  toyReader.markZoomable();
  document.addEventListener("click", (event) => {
    const img = event.target.closest && event.target.closest("img.toy-zoomable");
    if (!img || !img.closest(".bd-article")) return;
    event.preventDefault();          // an image inside a link must not open the bare file
    event.stopPropagation();
    toyReader.zoom(img);
  }, true);
  document.addEventListener("keydown", (event) => {
    const img = event.target.closest && event.target.closest("img.toy-zoomable");
    if (img && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); toyReader.zoom(img); }
  });
});

// 5b. A glued number (its span made by book/_ext/glue_trace.py) shows, on a tap, a click, Enter or
//     a hover, its ± s.e. (when the notebook glued one) and the cell that computed it, with the
//     first lines of that cell's code and a link to the whole of it at the end of the page.
toyReader.glueOpen = null;
toyReader.glueShow = (el, pinned) => {
  if (toyReader.glueOpen && toyReader.glueOpen.el === el) {
    if (pinned) toyReader.glueOpen.pinned = true;
    return;
  }
  toyReader.glueHide();
  const cell = el.dataset.cell, se = el.dataset.se;
  const pop = document.createElement("div");
  pop.className = "toy-glue-pop";
  pop.setAttribute("role", "dialog");
  pop.setAttribute("aria-label", "where this number comes from");
  const value = document.createElement("div");
  value.className = "toy-glue-value";
  value.textContent = se ? `${el.textContent.trim()} ± ${se} (standard error)` : `${el.textContent.trim()} (no standard error glued with it)`;
  const link = document.createElement("a");
  link.className = "toy-glue-link";
  link.href = `#toy-cell-${cell}`;
  link.textContent = `computed by cell ${cell}: see its code ↓`;
  link.addEventListener("click", () => {
    const target = document.getElementById(`toy-cell-${cell}`);
    const details = target && target.closest("details");
    if (details) details.open = true;
    toyReader.glueHide();
  });
  pop.append(value, link);
  const source = document.querySelector(`#toy-cell-${cell} pre`);
  if (source) {
    const pre = document.createElement("pre");
    const lines = source.textContent.split("\n");
    pre.textContent = lines.slice(0, 8).join("\n") + (lines.length > 8 ? "\n…" : "");
    pop.append(pre);
  }
  document.body.append(pop);
  const r = el.getBoundingClientRect();
  const width = Math.min(420, document.documentElement.clientWidth - 16);
  pop.style.width = `${width}px`;
  pop.style.left = `${Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8))}px`;
  pop.style.top = `${r.bottom + window.scrollY + 6}px`;
  el.setAttribute("aria-expanded", "true");
  toyReader.glueOpen = {el, pop, pinned};
};
toyReader.glueHide = () => {
  if (!toyReader.glueOpen) return;
  toyReader.glueOpen.pop.remove();
  toyReader.glueOpen.el.setAttribute("aria-expanded", "false");
  toyReader.glueOpen = null;
};
document.addEventListener("DOMContentLoaded", () => {
  document.addEventListener("click", (event) => {
    const el = event.target.closest && event.target.closest(".toy-glue");
    if (el) {
      const open = toyReader.glueOpen && toyReader.glueOpen.el === el && toyReader.glueOpen.pinned;
      if (open) toyReader.glueHide(); else toyReader.glueShow(el, true);
    } else if (toyReader.glueOpen && !event.target.closest(".toy-glue-pop")) {
      toyReader.glueHide();
    }
  });
  document.addEventListener("keydown", (event) => {
    const el = event.target.closest && event.target.closest(".toy-glue");
    if (el && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); toyReader.glueShow(el, true); }
    if (event.key === "Escape") toyReader.glueHide();
  });
  document.querySelectorAll(".toy-glue").forEach((el) => {
    el.addEventListener("mouseenter", () => toyReader.glueShow(el, false));
    el.addEventListener("mouseleave", () => {
      if (toyReader.glueOpen && toyReader.glueOpen.el === el && !toyReader.glueOpen.pinned) toyReader.glueHide();
    });
  });
});

// 6. A scrubber's figure says which frame it shows: its alt text follows the slider.
document.addEventListener("input", (event) => {
  const scrubber = event.target.closest && event.target.closest(".toy-scrubber");
  if (!scrubber || event.target.type !== "range") return;
  const img = scrubber.querySelector("img");
  const label = scrubber.querySelector("b");
  if (img && label) img.alt = img.alt.replace(/=\s.*$/, `= ${label.textContent}`);
});

// 7. Search results a reader can use. _static/search-text.js (loaded on the search page only,
//    written by book/_ext/reader_site.py) holds each page's title, section number and prose as
//    sentences under their section titles. (a) Sphinx's search page fetches each result's page for
//    a line of its text (which browsers refuse from file://): answer from search-text.js, over
//    file:// and http alike. (b) The line shown is the sentence that holds the query, under its
//    section's title (no page furniture, TeX as text). (c) A page whose title holds the query
//    comes first, then sections whose title does, then the rest in Sphinx's order.
toyReader.queryTerms = () => (new URLSearchParams(location.search).get("q") || "").toLowerCase()
  .split(/\s+/).filter((t) => t.length > 1).map((t) => t.replace(/(es|s)$/, ""));
if (window.fetch) {
  const realFetch = window.fetch.bind(window);
  window.fetch = (resource, init) => {
    const texts = window.TOY_SEARCH_TEXT;
    const root = document.documentElement.dataset.content_root;
    const url = typeof resource === "string" ? resource : resource.url;
    if (texts && root !== undefined && url.startsWith(root) && url.endsWith(".html")) {
      const doc = url.slice(root.length, -".html".length);
      if (doc in texts) {
        const main = document.createElement("div");
        main.setAttribute("role", "main");
        main.dataset.toyDoc = doc;
        return Promise.resolve(new Response(main.outerHTML, {headers: {"Content-Type": "text/html"}}));
      }
    }
    return realFetch(resource, init);
  };
}
toyReader.summary = (htmlText, keywords, anchor) => {
  const doc = (/data-toy-doc="([^"]*)"/.exec(htmlText) || [])[1];
  const entry = doc && window.TOY_SEARCH_TEXT && window.TOY_SEARCH_TEXT[doc];
  if (!entry) return document.createElement("p");
  const words = [...keywords, ...toyReader.queryTerms()].map((k) => k.toLowerCase()).filter(Boolean);
  const id = (anchor || "").replace(/^#/, "");
  const sections = entry.sections.filter((s) => !id || s[0] === id).concat(id ? entry.sections : []);
  let found = null;
  for (const [, title, sentences] of sections) {
    const hit = sentences.find((s) => words.some((w) => s.toLowerCase().includes(w)));
    if (hit) { found = [title, hit]; break; }
  }
  if (!found) {
    const first = sections.find((s) => s[2].length) || entry.sections[0];
    found = first ? [first[1], first[2][0] || ""] : [entry.title, ""];
  }
  let [title, sentence] = found;
  if (sentence.length > 260) {
    const at = Math.max(0, Math.min(...words.map((w) => sentence.toLowerCase().indexOf(w)).filter((i) => i >= 0), 0) - 80);
    sentence = (at ? "… " : "") + sentence.slice(at, at + 240).trim() + "…";
  }
  const p = document.createElement("p");
  p.className = "context";
  const head = document.createElement("span");
  head.className = "toy-search-section";
  head.textContent = title || (entry.label ? `${entry.label}. ${entry.title}` : entry.title);
  p.append(head, document.createTextNode(" — " + sentence));
  return p;
};
toyReader.score = (item) => {
  const [doc, title, anchor, , score] = item;
  const entry = window.TOY_SEARCH_TEXT && window.TOY_SEARCH_TEXT[doc];
  const terms = toyReader.queryTerms();
  const has = (text) => text && terms.length && terms.every((t) => text.toLowerCase().includes(t));
  if (entry && has(entry.title)) return score + (anchor ? 50 : 100);
  if (has(String(title).split(" > ").pop())) return score + 25;
  return score;
};
toyReader.hookSearch = () => {
  // (searchtools.js declares `const Search`: a global binding, not a property of window)
  if (typeof Search !== "undefined" && !Search.toyHooked) {
    Search.makeSearchSummary = toyReader.summary;
    Search.toyHooked = true;
  }
  if (typeof Scorer !== "undefined") Scorer.score = toyReader.score;
};
toyReader.hookSearch();
document.addEventListener("DOMContentLoaded", toyReader.hookSearch);
