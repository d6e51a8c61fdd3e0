// Runs a share of the browser test files in one process, so they share one Chromium (helpers.mjs
// launch()): `npm test` runs tests/browser/groups/*.mjs at once (one lane each) instead of starting a
// process and a browser per file. Each file runs as a suite of its own (its top-level hooks and tests
// stay its own). The files are dealt to the lanes by how many tests each holds (its `it(` and `test(`
// calls): most tests first, each to the lane with the fewest so far — a property of the files, not of a
// machine, so nothing is measured or refreshed by hand.
import { readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIR = dirname(fileURLToPath(import.meta.url));

/** The number of tests a file declares (its `it(` and `test(` calls), at least 1. */
function testCount(file) {
  return Math.max(1, (readFileSync(join(DIR, file), 'utf8').match(/\b(?:it|test)\(/g) ?? []).length);
}

/** The test files of lane k (1-based) of n, in the order they run (most tests first). */
export function groupFiles(k, n) {
  const all = readdirSync(DIR)
    .filter((f) => f.endsWith('.test.mjs'))
    .sort();
  const cost = new Map(all.map((f) => [f, testCount(f)]));
  const byCost = [...all].sort((a, b) => cost.get(b) - cost.get(a) || (a < b ? -1 : 1));
  const lanes = Array.from({ length: n }, () => ({ tests: 0, files: [] }));
  for (const f of byCost) {
    const lane = lanes.reduce((best, l) => (l.tests < best.tests ? l : best));
    lane.tests += cost.get(f);
    lane.files.push(f);
  }
  return lanes[k - 1].files;
}

/** Runs the lane a file named `<k>-of-<n>.mjs` stands for. */
export function runGroupOf(groupFileUrl) {
  const m = /^(\d+)-of-(\d+)\.mjs$/.exec(basename(fileURLToPath(groupFileUrl)));
  if (!m) throw new Error(`a group file is named <k>-of-<n>.mjs, got ${groupFileUrl}`);
  for (const f of groupFiles(Number(m[1]), Number(m[2]))) {
    describe(f, async () => {
      await import(pathToFileURL(join(DIR, f)).href);
    });
  }
}
