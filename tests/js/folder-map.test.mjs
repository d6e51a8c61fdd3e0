// docs/architecture.md's folder map ("## The folders") is true to the tree: every folder it lists
// exists, and every tracked folder under src, web, tests, bench, scripts and tools is named there —
// as an entry of its own, or as "name/" in its parent's entry (fixture and corpus data aside). And
// every source file of src, web, scripts, bench and tools is on the map: the entry of its nearest
// mapped folder names it, or a pattern there matches it (`demo-*.js`, `*_scalar.cpp`: a `*` with
// more than the extension beside it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAPPED_ROOTS = ['src', 'web', 'tests', 'bench', 'scripts', 'tools'];
// Data folders: one per fixture or corpus, listed by the tests that read them, not by the map.
const DATA = /^tests\/golden\/.+|^tests\/fuzz\/.+/;

/** { folder: the text of its entry } from the map's code block. */
function mapEntries() {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The folders'));
  const block = section.slice(section.indexOf('```') + 3, section.indexOf('```', section.indexOf('```') + 3));
  const entries = {};
  let current = null;
  for (const line of block.split('\n')) {
    const head = /^([\w.-]+(?:\/[\w.-]+)*)\/\s/.exec(line);
    if (head) current = head[1];
    if (current) entries[current] = `${entries[current] ?? ''}${line}\n`;
  }
  return entries;
}

const SOURCE_ROOTS = ['src', 'web', 'scripts', 'bench', 'tools'];
// Files that are data, not source: the trained presets and their claims, committed benchmark tables.
const NOT_SOURCE = /^web\/presets\/.+\.(safetensors|json)$|\.(svg|css|csv|txt|png|ico)$/;

/** Whether an entry's text names a file by its name or by a pattern (a glob with a fixed part). */
export function entryCovers(text, name) {
  const words = text.match(/[\w.*+-]+\.\w+|[\w*+-]*\*[\w*+-]*/g) ?? [];
  const stem = name.replace(/\.\w+$/, '');
  // C++ files by their stem: "attention (SDPA)" names attention.h and attention.cpp
  if (/\.(h|cpp)$/.test(name) && new RegExp(`(^|[^\\w/.-])${stem}([^\\w-]|$)`).test(text)) return true;
  return words.some((word) => {
    if (word === name) return true;
    if (!word.includes('*')) return false;
    const fixed = word.replace(/\*/g, '').replace(/\.\w+$/, '');
    if (fixed.replace(/[-_.]/g, '').length === 0) return false; // "*.js" says nothing of the file
    const pattern = new RegExp(`^${word.replace(/[.+]/g, '\\$&').replace(/\*/g, '[\\w.-]*')}$`);
    return pattern.test(name) || pattern.test(name.replace(/\.\w+$/, ''));
  });
}

function trackedFiles(roots) {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...roots], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && existsSync(join(ROOT, f)));
}

/** A folder and the folders above it. */
function ancestors(folder) {
  const out = [];
  for (let f = folder; f !== '.'; f = dirname(f)) out.push(f);
  return out;
}

function trackedFolders() {
  const files = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', ...MAPPED_ROOTS],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((f) => f && existsSync(join(ROOT, f)));
  const folders = new Set();
  for (const f of files) {
    for (let d = dirname(f); d !== '.' && !folders.has(d); d = dirname(d)) folders.add(d);
  }
  return [...folders].filter((d) => !DATA.test(d)).sort();
}

describe('docs/architecture.md folder map', () => {
  const entries = mapEntries();
  it('lists only folders that exist', () => {
    assert.ok(Object.keys(entries).length >= 10, 'the map has its entries');
    for (const folder of Object.keys(entries)) {
      if (folder === 'dist') continue; // the build's output, not tracked
      assert.ok(existsSync(join(ROOT, folder)), `the map lists ${folder}/, which does not exist`);
    }
  });
  it('names every tracked folder, in its own entry or in its parent', () => {
    for (const folder of trackedFolders()) {
      if (entries[folder] || MAPPED_ROOTS.includes(folder)) continue; // src/ and tests/: by their subfolders
      const parent = dirname(folder);
      const name = folder.slice(parent.length + 1);
      const inParent = entries[parent]?.includes(`${name}/`);
      assert.ok(
        inParent,
        `${folder}/ is not in the folder map (its own entry, or "${name}/" in ${parent}/'s)`,
      );
    }
  });
  it('names every source file, or matches it by a pattern, in its nearest mapped folder', () => {
    const missing = [];
    for (const file of trackedFiles(SOURCE_ROOTS)) {
      if (NOT_SOURCE.test(file)) continue;
      let folder = dirname(file);
      while (folder !== '.' && !entries[folder]) folder = dirname(folder);
      if (folder === '.') continue; // a root's own files: by the roots' entries (checked above)
      const name = file.split('/').pop();
      // A folder's README.md is covered where an enclosing entry says its folders have one.
      const readme = name === 'README.md' && ancestors(folder).some((f) => entries[f]?.includes('README.md'));
      if (!readme && !entryCovers(entries[folder], name)) missing.push(`${file} (in ${folder}/)`);
    }
    assert.deepEqual(missing, [], 'source files the map does not name');
  });

  it('a pattern covers a file only with a fixed part beside the wildcard', () => {
    assert.ok(entryCovers('demo-*.js the demo', 'demo-store.js'));
    assert.ok(entryCovers('kernels: *_scalar.cpp twins', 'quant_scalar.cpp'));
    assert.ok(entryCovers('rope-explorer* (the RoPE plane)', 'rope-explorer-plane.js'));
    assert.ok(entryCovers('uses gguf.js + gguf-header.js', 'gguf-header.js'));
    assert.ok(!entryCovers('every *.js file', 'demo-store.js'));
    assert.ok(!entryCovers('demo-*.js', 'tutorial.js'));
    assert.ok(!entryCovers('gguf-header.js', 'gguf.js'));
  });
});
