// Runs a share of the browser test files in one process, so they share one Chromium (helpers.mjs
// launch()): `npm test` runs tests/browser/groups/*.mjs at once (one lane each) instead of starting a
// process and a browser per file. Each file runs as a suite of its own (its top-level hooks and tests
// stay its own). The files are dealt to the lanes by their measured run time (durations.json, seconds
// on the 2-core machine: longest first, each to the lane with the least so far), so the lanes end
// together; a file not in durations.json counts as the median and joins a lane without being listed.
// Refresh durations.json from a spec-reporter run when the files change much (docs/testing.md).
import { readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIR = dirname(fileURLToPath(import.meta.url));

/** The measured seconds of every file, the median for a file with no measurement. */
function fileCosts(files) {
  const measured = JSON.parse(readFileSync(join(DIR, 'durations.json'), 'utf8'));
  const known = Object.values(measured).sort((a, b) => a - b);
  const median = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  return new Map(files.map((f) => [f, measured[f] ?? median]));
}

/**
 * The shared page modules (`./<name>-page.mjs`) a test file imports: a module is evaluated once per
 * process, so its before/after hooks serve only the first file of a lane that imports it; two files
 * sharing one go to different lanes.
 */
function pageModules(file) {
  const text = readFileSync(join(DIR, file), 'utf8');
  return [...text.matchAll(/from '\.\/([a-z0-9-]+-page\.mjs)'/g)].map((m) => m[1]);
}

/** The test files of lane k (1-based) of n, in the order they run (longest first). */
export function groupFiles(k, n) {
  const all = readdirSync(DIR)
    .filter((f) => f.endsWith('.test.mjs'))
    .sort();
  const cost = fileCosts(all);
  const byCost = [...all].sort((a, b) => cost.get(b) - cost.get(a) || (a < b ? -1 : 1));
  const lanes = Array.from({ length: n }, () => ({ seconds: 0, files: [], pages: new Set() }));
  for (const f of byCost) {
    const pages = pageModules(f);
    const free = lanes.filter((l) => !pages.some((p) => l.pages.has(p)));
    const lane = (free.length > 0 ? free : lanes).reduce((best, l) => (l.seconds < best.seconds ? l : best));
    lane.seconds += cost.get(f);
    lane.files.push(f);
    for (const p of pages) lane.pages.add(p);
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
