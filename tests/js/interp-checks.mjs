// Shared by the interpretability tests (head-scores-rollout, induction-attribution, pretrained-attribution-patch
// and patch-options .test.mjs): checks of headScores, attentionRollout, logitAttribution and patch results
// against the float64 references of tests/golden/make_interp_fixtures.py, and the refusals' assertion.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadPretrained, AttentionError } from '../../src/js/index.js';
import { isClose, FIXTURE_TOL } from './close.js';

// The bounds: scores and rollout 1e-5 + 1e-4 (FIXTURE_TOL); attribution 1e-4 + 1e-3.
export const ATTR_TOL = { abs: 1e-4, rel: 1e-3 };
export const KINDS = ['previous-token', 'duplicate-token', 'induction'];

export const PRETRAINED = new URL('../golden/pretrained/', import.meta.url);
export const json = (url) => JSON.parse(readFileSync(url, 'utf8'));

// close.js's check, but `want` may hold null = NaN (a score with no qualifying row).
export function assertClose(got, want, what, tol = FIXTURE_TOL) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (want[i] === null) {
      if (!Number.isNaN(got[i])) assert.fail(`${what}[${i}] = ${got[i]}, want NaN`);
    } else if (!isClose(got[i], want[i], tol)) {
      assert.fail(`${what}[${i}] = ${got[i]}, want ${want[i]}`);
    }
  }
}

export function checkAttribution(model, ids, want, what) {
  const options = { position: want.position, token: want.token };
  if (want.against !== null) options.against = want.against;
  const got = model.logitAttribution(ids, options);
  assert.deepEqual(got.heads.shape, want.heads.shape, `${what}: heads shape`);
  assertClose(got.heads.data, want.heads.data, `${what} heads`, ATTR_TOL);
  assertClose(got.mlp.data, want.mlp.data, `${what} mlp`, ATTR_TOL);
  // a headless mixer's output (LFM2's conv layers); NaN for attention layers
  assertClose(
    got.mixers.data,
    want.mixers?.data ?? want.mlp.data.map(() => null),
    `${what} mixers`,
    ATTR_TOL,
  );
  for (const k of ['embed', 'bias', 'total', 'logitDiff'])
    assertClose([got[k]], [want[k]], `${what} ${k}`, ATTR_TOL);
  // total = logitDiff (the sum of the parts against the real forward's logits)
  assert.ok(
    Math.abs(got.total - got.logitDiff) <= 1e-5 * Math.max(1, Math.abs(got.logitDiff)),
    `${what}: total ${got.total} vs logitDiff ${got.logitDiff}`,
  );
}

export const code = (c) => (e) => e instanceof AttentionError && e.code === c;
export const refuses = (fn, pattern, c = 'INVALID_ARGUMENT') =>
  assert.throws(fn, (e) => code(c)(e) && (pattern === undefined || pattern.test(e.message)));

export const loadCheckpoint = (name) => {
  const dir = new URL(`${name}/`, PRETRAINED);
  return loadPretrained({
    config: json(new URL('config.json', dir)),
    weights: readFileSync(new URL('model.safetensors', dir)),
  });
};
