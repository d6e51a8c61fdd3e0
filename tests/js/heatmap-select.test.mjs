// The numbers behind <attention-heatmap>'s attention sinks and selections
// (web/widgets/attention/attention-heatmap-select.js), in Node: hidden columns renormalise each
// softmax row against a double reference, a row with nothing left is masked and named, a signed map
// is hidden but not renormalised, selected rows sum and average, and the list attribute parses only
// whole numbers. The same functions draw the page; the browser suite (demo-chat-watch) checks the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  barsRow,
  combineRows,
  hideColumns,
  hideShown,
  parseIndexList,
  toggleIndex,
} from '../../web/widgets/attention/attention-heatmap-select.js';

/** float32 results against double references of the same float32 inputs. */
const TOL = 1e-6;

/** A causal (T, T) softmax of seeded scores, as float32 (what a heatmap is given). */
function causalSoftmax(T, seed) {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2;
  const out = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    const e = Array.from({ length: i + 1 }, () => Math.exp(rand()));
    const z = e.reduce((a, b) => a + b, 0);
    e.forEach((v, j) => (out[i * T + j] = v / z));
  }
  return out;
}

test('hidden columns: each row renormalised without them (double reference); a row with nothing left is masked', () => {
  const T = 7,
    A = causalSoftmax(T, 3);
  const { data, empty } = hideColumns(A, T, T, [0, 2]);
  assert.deepEqual(empty, [0], 'row 0 sees only key 0');
  for (let i = 0; i < T; i++) {
    const row = Array.from(A.subarray(i * T, (i + 1) * T), Number);
    const left = row.reduce((s, v, j) => (j === 0 || j === 2 ? s : s + v), 0);
    for (let j = 0; j < T; j++) {
      const got = data[i * T + j];
      if (j === 0 || j === 2 || i === 0) assert.equal(got, -Infinity, `(${i}, ${j}) hidden`);
      else assert.ok(Math.abs(got - row[j] / left) <= TOL, `(${i}, ${j}): ${got} vs ${row[j] / left}`);
    }
    if (i > 0) {
      const sum = Array.from(data.subarray(i * T, (i + 1) * T)).reduce(
        (s, v) => (v > -Infinity ? s + v : s),
        0,
      );
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
    }
  }
  assert.equal(A[0], 1, 'the input is left as it was');
});

test('a signed map: hidden, not renormalised, and the summary says so', () => {
  const m = { rows: 2, cols: 3, data: Float32Array.from([0.5, -0.25, 0.75, -1, 2, 0.5]) };
  const note = hideShown([m], [1], false);
  assert.deepEqual(Array.from(m.data), [0.5, -Infinity, 0.75, -1, -Infinity, 0.5]);
  assert.match(note, /key 1 hidden \(signed weights: rows not renormalised\)/);
  assert.equal(hideShown([m], [], false), '', 'nothing hidden: nothing said');
});

test('selected rows: summed and averaged (masked cells count 0); one row is the plain row', () => {
  const T = 6,
    A = causalSoftmax(T, 11);
  const { data } = hideColumns(A, T, T, [0]);
  const rows = [1, 3, 5];
  const want = Array.from({ length: T }, (_, j) =>
    rows.reduce((s, r) => s + (Number.isFinite(data[r * T + j]) ? data[r * T + j] : 0), 0),
  );
  const sum = combineRows(data, T, rows, 'sum');
  const mean = combineRows(data, T, rows, 'mean');
  want.forEach((w, j) => {
    assert.ok(Math.abs(sum[j] - w) <= TOL);
    assert.ok(Math.abs(mean[j] - w / 3) <= TOL);
  });
  assert.ok(Math.abs(sum.reduce((s, v) => s + v, 0) - 3) < 1e-5, 'three rows of 1');
  const m = { rows: T, cols: T, data };
  const tokens = Array.from({ length: T }, (_, i) => `t${i}`);
  assert.match(barsRow(m, 2, rows, 'sum', tokens).what, /^Sum of 3 query rows \(1, 3, 5\)/);
  const one = barsRow(m, 2, [2], 'mean', tokens);
  assert.equal(one.n, 1);
  assert.deepEqual(
    Array.from(one.row),
    Array.from(data.subarray(2 * T, 3 * T), (v) => (v > -Infinity ? v : 0)),
  );
});

test('the list attribute: whole numbers, sorted, once; toggling adds and removes', () => {
  assert.deepEqual(parseIndexList('3, 0,3,x,-1,2.5, 7'), [0, 3, 7]);
  assert.deepEqual(parseIndexList(null), []);
  assert.deepEqual(toggleIndex([1, 4], 2), [1, 2, 4]);
  assert.deepEqual(toggleIndex([1, 2, 4], 2), [1, 4]);
});
