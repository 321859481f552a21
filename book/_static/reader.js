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
//    the page or being cut off: mark them (after MathJax has typeset, and again on resize).
const toyReader = (window.toyReader = window.toyReader || {});
toyReader.fitMath = () => {
  document.querySelectorAll(".bd-article mjx-container:not([display='true'])").forEach((m) => {
    m.classList.remove("toy-wide-math");
    const block = m.parentElement.closest("p, li, dd, dt, td, div");
    const room = block ? block.clientWidth : window.innerWidth;
    if (m.getBoundingClientRect().width > room) m.classList.add("toy-wide-math");
  });
};
document.addEventListener("DOMContentLoaded", () => {
  const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
  (typeset || Promise.resolve()).then(toyReader.fitMath);
  window.addEventListener("resize", toyReader.fitMath);
});

// 5. A figure shrunk to fit the column (a phone) opens at its own size on a click or tap, in a
//    layer that scrolls; a click, Escape or the close button closes it.
toyReader.designWidth = (img) => parseFloat(img.style.width) || img.naturalWidth;
toyReader.markZoomable = () => {
  document.querySelectorAll(".bd-article .cell_output img, .bd-article .toy-scrubber img").forEach((img) => {
    const shrunk = img.getBoundingClientRect().width < 0.95 * toyReader.designWidth(img);
    img.classList.toggle("toy-zoomable", shrunk);
  });
};
toyReader.zoom = (img) => {
  const layer = document.createElement("div");
  layer.className = "toy-zoom";
  layer.setAttribute("role", "dialog");
  layer.setAttribute("aria-label", "enlarged figure");
  const big = document.createElement("img");
  big.src = img.currentSrc || img.src;
  big.alt = img.alt;
  big.style.width = `${Math.max(toyReader.designWidth(img), Math.min(window.innerWidth, 1200) - 16)}px`;
  const close = document.createElement("button");
  close.className = "toy-zoom-close";
  close.setAttribute("aria-label", "close");
  close.textContent = "×";
  layer.append(close, big);
  const done = () => { layer.remove(); document.removeEventListener("keydown", onKey); img.focus?.(); };
  const onKey = (e) => { if (e.key === "Escape") done(); };
  layer.addEventListener("click", done);
  document.addEventListener("keydown", onKey);
  document.body.append(layer);
  close.focus();
};
document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("load", toyReader.markZoomable);
  window.addEventListener("resize", toyReader.markZoomable);
  toyReader.markZoomable();
  document.addEventListener("click", (event) => {
    const img = event.target.closest && event.target.closest("img.toy-zoomable");
    if (img && img.closest(".bd-article")) toyReader.zoom(img);
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

// 7. Search from file://: Sphinx's search page fetches each result's page for a line of its text,
//    which browsers refuse from file:// ("Failed to fetch"). _static/search-text.js (loaded on the
//    search page only) holds each page's text: answer those requests from it.
if (location.protocol === "file:" && window.fetch) {
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
        main.textContent = texts[doc];
        return Promise.resolve(new Response(main.outerHTML, {headers: {"Content-Type": "text/html"}}));
      }
    }
    return realFetch(resource, init);
  };
}
