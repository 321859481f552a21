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
