// The theme's stylesheets reduced to the rules the built pages can use (PurgeCSS 8; run by
// book/_ext/slim_css.py under node after the pages are written). Usage:
//   node purge.js OUTDIR file.css ...   (each file rewritten in place; prints bytes before -> after)
// The content PurgeCSS reads is every page and every script of the site, so a class a script adds
// (bootstrap's "show", the theme's "dropdown-menu", reader.js's "toy-*") is kept.
"use strict";
const fs = require("fs");
const path = require("path");
const {PurgeCSS} = require("purgecss");

async function main() {
  const [outdir, ...files] = process.argv.slice(2);
  const result = await new PurgeCSS().purge({
    content: [path.join(outdir, "**/*.html"), path.join(outdir, "_static/**/*.js")],
    css: files,
    // the theme switches light and dark by attributes on <html>; keep every rule that depends on them
    safelist: {greedy: [/data-theme/, /data-mode/, /^toy-/, /^mjx-/]},
    keyframes: false, fontFace: false, variables: false,
  });
  for (const r of result) {
    const before = fs.statSync(r.file).size;
    fs.writeFileSync(r.file, r.css);
    console.log(`${path.relative(outdir, r.file)}: ${before} -> ${Buffer.byteLength(r.css)}`);
  }
}
main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
