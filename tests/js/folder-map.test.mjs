// docs/architecture.md's folder map ("## The folders") is true to the tree: every folder it lists
// exists, and every tracked folder under src, web, tests, bench, scripts and tools is named there —
// as an entry of its own, or as "name/" in its parent's entry (fixture and corpus data aside).
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
});
