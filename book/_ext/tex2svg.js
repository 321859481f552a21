// TeX -> SVG at build time (book/_ext/reader_site.py runs this under node; MathJax 3.2.2 from
// mathjax-full, the version the pages used to load in the browser). One JSON request per line
// on stdin, one JSON answer per line on stdout:
//   {"page": true}                  a new page: the glyph cache starts empty
//   {"tex": "...", "display": bool} -> {"svg": "<mjx-container ...>", "error": null | "message"}
//   {"cache": true}                 -> {"svg": "<svg id=MJX-SVG-global-cache>...</svg>"} (the
//                                      glyphs the page's formulas use, defined once per page)
//   {"css": true}                   -> {"css": "..."} MathJax's stylesheet for its SVG output
// Each formula carries its MathML for screen readers (MathJax's assistive MathML, hidden).
"use strict";
const readline = require("readline");
const {mathjax} = require("mathjax-full/js/mathjax.js");
const {TeX} = require("mathjax-full/js/input/tex.js");
const {SVG} = require("mathjax-full/js/output/svg.js");
const {liteAdaptor} = require("mathjax-full/js/adaptors/liteAdaptor.js");
const {RegisterHTMLHandler} = require("mathjax-full/js/handlers/html.js");
const {AssistiveMmlHandler} = require("mathjax-full/js/a11y/assistive-mml.js");
const {AllPackages} = require("mathjax-full/js/input/tex/AllPackages.js");

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
let lastError = null;
const tex = new TeX({
  // every package the browser's MathJax could autoload; without noundefined, an undefined macro is
  // an error (else it is drawn in red and passes)
  packages: AllPackages.filter((p) => p !== "bussproofs" && p !== "noundefined"),
  formatError: (jax, err) => { lastError = err.message; return jax.formatError(err); },
});
const svg = new SVG({fontCache: "global"});
const html = mathjax.document("", {InputJax: tex, OutputJax: svg});

function answer(req) {
  if (req.page) { svg.clearFontCache(); return {ok: true}; }
  if (req.cache) {
    const cache = svg.svg("svg", {id: "MJX-SVG-global-cache", style: {display: "none"}}, [svg.fontCache.getCache()]);
    return {svg: adaptor.outerHTML(cache)};
  }
  if (req.css) return {css: adaptor.textContent(svg.styleSheet(html))};
  lastError = null;
  const node = html.convert(req.tex, {display: !!req.display, em: 16, ex: 8, containerWidth: 80 * 16});
  // no merror node may pass (an undefined macro is drawn in red, not raised)
  const out = adaptor.outerHTML(node);
  if (!lastError && /data-mml-node="merror"/.test(out)) lastError = "merror in the output";
  return {svg: out, error: lastError};
}

const rl = readline.createInterface({input: process.stdin, terminal: false});
rl.on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (e) {
    reply = {svg: "", error: String(e && e.message || e)};
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
