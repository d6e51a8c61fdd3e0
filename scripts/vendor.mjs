#!/usr/bin/env node
// Copies the third-party browser assets the widgets need from node_modules into web/vendor/, so the
// pages work offline with no CDN. Idempotent; run by scripts/build.sh (and safe to run by hand).
//
// KaTeX (formulas in <attention-steps>):
//   web/vendor/katex/katex.mjs        katex.min.js wrapped as an ES module (default export = katex)
//   web/vendor/katex/katex.min.css    KaTeX's stylesheet, font URLs reduced to .woff2 (what Chromium,
//                                     Firefox and Safari load; the .woff/.ttf fallbacks are not copied)
//   web/vendor/katex/katex-fonts.css  only the @font-face rules: fonts declared inside a Shadow DOM
//                                     are ignored by browsers, so the widgets add these to the document
//   web/vendor/katex/fonts/*.woff2, LICENSE
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'node_modules', 'katex');
const out = join(root, 'web', 'vendor', 'katex');

/** Writes `text` to `file` only when it differs, so repeated builds leave mtimes alone. */
async function writeIfChanged(file, text) {
  const old = await readFile(file, 'utf8').catch(() => null);
  if (old !== text) await writeFile(file, text);
}

/** Keeps only the woff2 source of every @font-face `src:` list. */
function woff2Only(css) {
  return css.replace(/src:([^;}]*)/g, (whole, list) => {
    const woff2 = list.split(',').find((s) => s.includes('.woff2'));
    return woff2 ? `src:${woff2.trim()}` : whole;
  });
}

async function main() {
  const version = JSON.parse(await readFile(join(src, 'package.json'), 'utf8')).version;
  await mkdir(join(out, 'fonts'), { recursive: true });

  // 1. The library as an ES module: the UMD header assigns module.exports when both exist.
  const js = await readFile(join(src, 'dist', 'katex.min.js'), 'utf8');
  await writeIfChanged(join(out, 'katex.mjs'),
    `// KaTeX ${version} (MIT, see LICENSE), katex.min.js wrapped as an ES module by scripts/vendor.mjs\n` +
    'const module = { exports: {} }; const exports = module.exports;\n' +
    `${js}\nexport default module.exports.default || module.exports;\n`);

  // 2. Stylesheets: full (for inside shadow roots) and fonts only (for the document).
  const css = woff2Only(await readFile(join(src, 'dist', 'katex.min.css'), 'utf8'));
  await writeIfChanged(join(out, 'katex.min.css'), css);
  const faces = css.match(/@font-face\{[^}]*\}/g) || [];
  await writeIfChanged(join(out, 'katex-fonts.css'), faces.join('\n') + '\n');

  // 3. Fonts (woff2 only) and the licence.
  const fonts = (await readdir(join(src, 'dist', 'fonts'))).filter((f) => f.endsWith('.woff2'));
  for (const f of fonts) await copyFile(join(src, 'dist', 'fonts', f), join(out, 'fonts', f));
  await copyFile(join(src, 'LICENSE'), join(out, 'LICENSE'));
  console.log(`vendor: KaTeX ${version} -> web/vendor/katex (${fonts.length} fonts)`);
}

main().catch((e) => { console.error(`vendor: ${e.message}`); process.exit(1); });
