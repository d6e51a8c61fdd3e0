// The closeness checks of the JS tests, in one place. Each test file names its tolerances (what
// they bound, and why that much) and compares through these.
//
// A tolerance is a number (absolute) or { abs, rel }: |actual − expected| ≤ abs + rel·|expected|.
// Equal values pass (also equal infinities); NaN is never close to anything.
//
//   import { assertClose, isClose, maxAbsDiff, FIXTURE_TOL } from './close.js';
//   assertClose(y.data, expected, 1e-5, 'softmax');            // absolute
//   assertClose(g.data, want, { abs: 5e-5, rel: 1e-4 }, 'dW');  // absolute + relative
import assert from 'node:assert/strict';

/** The PyTorch fixtures' bound (tests/cpp/test_golden_grad.cpp): 1e-5 absolute + 1e-4 relative. */
export const FIXTURE_TOL = Object.freeze({ abs: 1e-5, rel: 1e-4 });

const parts = (tol) =>
  typeof tol === 'number' ? { abs: tol, rel: 0 } : { abs: tol.abs ?? 0, rel: tol.rel ?? 0 };

/** The largest |actual − expected| `tol` allows at `expected`. */
export function allowed(expected, tol) {
  const { abs, rel } = parts(tol);
  return abs + rel * Math.abs(expected);
}

/** Whether one number is within `tol` of another (NaN never is). */
export function isClose(actual, expected, tol) {
  if (actual === expected) return true;
  return Math.abs(actual - expected) <= allowed(expected, tol);
}

const describeTol = (tol) => {
  const { abs, rel } = parts(tol);
  return rel === 0 ? `tolerance ${abs}` : `tolerance ${abs} + ${rel}·|want|`;
};

/**
 * Fails on a length mismatch or on the first element of `actual` not within `tol` of the same
 * element of `expected` (arrays or typed arrays), naming `what`, the index and both values.
 */
export function assertClose(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    if (!isClose(actual[i], expected[i], tol)) {
      assert.fail(`${what}: element ${i} is ${actual[i]}, want ${expected[i]} (${describeTol(tol)})`);
    }
  }
}

/** max |a[i] − b[i]| over the elements (NaN if any difference is NaN; 0 for empty arrays). */
export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, 'maxAbsDiff: length');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
