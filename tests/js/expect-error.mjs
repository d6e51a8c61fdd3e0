// Shared by the error tests (errors-*.test.mjs): expectError asserts an AttentionError with a documented
// `.code` and a message naming the problem, then that the module keeps working (a witness module's output,
// softmax and the memory limit are unchanged after every single error).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  init,
  Tensor,
  AttentionError,
  softmax,
  MultiHeadAttention,
  seededNormal,
  memoryLimit,
} from '../../src/js/index.js';

await init();

export const kDefaultLimit = 2 ** 30; // 1 GiB, the documented default of setMemoryLimit

/** AttentionErrorCode in the .d.ts, read from it: every thrown code must be one of these. */
const DOCUMENTED_CODES = [
  ...readFileSync(new URL('../../src/js/types/tensor.d.ts', import.meta.url), 'utf8')
    .match(/type AttentionErrorCode =([^;]*);/)[1]
    .matchAll(/'([A-Z_]+)'/g),
].map((m) => m[1]);
assert.ok(DOCUMENTED_CODES.includes('INVALID_ARGUMENT'), 'the code list was read from the .d.ts');

// A module that lives through every error; its output before and after each error must agree.
export const witness = new MultiHeadAttention({ embedDim: 8, numHeads: 2, seed: 1 });
export const witnessInput = seededNormal([2, 3, 8], 2);
export const witnessOutput = Array.from(witness.forward(witnessInput).output.data);
export const softmaxOutput = Array.from(softmax([1, 1, 1, 5]).data);

export function assertStillWorks(context) {
  assert.deepEqual(Array.from(softmax([1, 1, 1, 5]).data), softmaxOutput, `softmax after ${context}`);
  assert.deepEqual(
    Array.from(witness.forward(witnessInput).output.data),
    witnessOutput,
    `forward after ${context}`,
  );
  assert.equal(memoryLimit(), kDefaultLimit, `memory limit after ${context}`);
}

/** Asserts `thrown` is an AttentionError(code) with a documented code and a message matching `message`. */
function assertAttentionError(thrown, code, message) {
  assert.ok(thrown !== undefined, `expected ${code}, nothing was thrown`);
  assert.ok(
    thrown instanceof AttentionError,
    `expected an AttentionError, got ${typeof thrown}: ${String(thrown)}`,
  );
  assert.ok(thrown instanceof Error);
  assert.equal(thrown.name, 'AttentionError');
  assert.equal(thrown.code, code, `code (message: ${thrown.message})`);
  assert.ok(DOCUMENTED_CODES.includes(thrown.code));
  assert.match(thrown.message, message);
}

/** Asserts fn throws AttentionError(code) whose message matches `message`, then that all still works. */
export function expectError(fn, code, message) {
  let thrown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  assertAttentionError(thrown, code, message);
  assertStillWorks(`${code} ${message}`);
}

/** As expectError for a promise (a load, a download) that must reject. */
export async function expectRejection(promise, code, message) {
  let thrown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  assertAttentionError(thrown, code, message);
  assertStillWorks(`${code} ${message}`);
}

export const x = seededNormal([2, 3, 8], 3);
export const bool = (shape) => new Tensor(new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(1), shape);
export const filled = (shape, value) =>
  new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(value), shape);
