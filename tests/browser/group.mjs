// Runs a share of the browser test files in one process, so they share one Chromium (helpers.mjs
// launch()): `npm test` runs tests/browser/groups/*.mjs two at a time instead of starting a process
// and a browser per file. Each file runs as a suite of its own (its top-level hooks and tests stay
// its own, in file order). A file belongs to group k of n by its place in the sorted list of
// tests/browser/*.test.mjs, so a new test file joins a group without being listed anywhere.
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIR = dirname(fileURLToPath(import.meta.url));

/** The test files of group k (1-based) of n: every n-th file of the sorted list from the k-th. */
export function groupFiles(k, n) {
  const all = readdirSync(DIR)
    .filter((f) => f.endsWith('.test.mjs'))
    .sort();
  return all.filter((_, i) => i % n === k - 1);
}

/** Runs the group a file named `<k>-of-<n>.mjs` stands for. */
export function runGroupOf(groupFileUrl) {
  const m = /^(\d+)-of-(\d+)\.mjs$/.exec(basename(fileURLToPath(groupFileUrl)));
  if (!m) throw new Error(`a group file is named <k>-of-<n>.mjs, got ${groupFileUrl}`);
  for (const f of groupFiles(Number(m[1]), Number(m[2]))) {
    describe(f, async () => {
      await import(pathToFileURL(join(DIR, f)).href);
    });
  }
}
