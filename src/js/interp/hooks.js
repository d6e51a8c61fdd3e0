// The hook points of both model classes (src/model/hooks.h: names, shapes and meanings): run() with
// captures and edits, the edits of generate (steering), steeringVector. The core checks every name,
// shape, position and head against the model before anything runs; here the options' JS types.
import { AttentionError, check } from '../errors.js';
import { checkOptions, describe } from '../options.js';
import { idBatch } from '../ids.js';
import { Tensor, fromCore } from '../tensor.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const EDIT_KEYS = ['hook', 'op', 'value', 'positions', 'heads'];

function intList(value, what) {
  if (value == null) return undefined;
  const list = ArrayBuffer.isView(value) ? Array.from(value) : value;
  if (!Array.isArray(list) || !list.every(Number.isInteger))
    throw invalid(`${what} must be an array of integers, got ${describe(value)}`);
  return list;
}

// A value as { data: Float32Array, shape }: a Tensor keeps its shape; a Float32Array or a number[]
// is one axis (a vector over the hook's last axis: a steering vector).
function editValue(value, what) {
  if (value instanceof Tensor) {
    if (value.dtype !== 'float32') throw invalid(`${what} must be a float32 Tensor, got ${value.dtype}`);
    return { data: value.data, shape: [...value.shape] };
  }
  if (value instanceof Float32Array) return { data: value, shape: [value.length] };
  if (Array.isArray(value) && value.every((v) => typeof v === 'number'))
    return { data: Float32Array.from(value), shape: [value.length] };
  throw invalid(`${what} must be a Tensor, a Float32Array or an array of numbers, got ${describe(value)}`);
}

/** The edits option checked and in the core's form: [{ hook, op, value, shape, positions?, heads? }]. */
export function hookEdits(edits, what = 'edits') {
  if (edits == null) return [];
  if (!Array.isArray(edits)) throw invalid(`${what} must be an array of edits, got ${describe(edits)}`);
  return edits.map((edit, i) => {
    const name = `${what}[${i}]`;
    if (edit == null || typeof edit !== 'object')
      throw invalid(`${name} must be an edit object, got ${describe(edit)}`);
    const e = checkOptions(edit, EDIT_KEYS, `${name} option`);
    if (typeof e.hook !== 'string')
      throw invalid(`${name}.hook must be a hook name, got ${describe(e.hook)}`);
    if (e.op !== 'set' && e.op !== 'add')
      throw invalid(`${name}.op must be 'set' or 'add', got ${describe(e.op)}`);
    const { data, shape } = editValue(e.value, `${name}.value`);
    const out = { hook: e.hook, op: e.op, value: data, shape };
    const positions = intList(e.positions, `${name}.positions`);
    const heads = intList(e.heads, `${name}.heads`);
    if (positions) out.positions = positions;
    if (heads) out.heads = heads;
    return out;
  });
}

function captureList(capture) {
  if (capture == null) return [];
  const list = typeof capture === 'string' ? [capture] : capture;
  if (!Array.isArray(list) || !list.every((n) => typeof n === 'string'))
    throw invalid(`capture must be a hook name or an array of them, got ${describe(capture)}`);
  return list;
}

/** [{ name, shape }] of a model's hooks ("B" and "T" for the batch and sequence axes). */
export function hookNamesOf(handle) {
  return handle.hookNames().map(({ name, shape }) => ({ name, shape: [...shape] }));
}

/**
 * One forward with captures and edits: { logits (B, T, V), activations: { [hook]: Tensor } }.
 * `startAt: 'blocks.{l}.hook_resid_pre'` with a set of that hook runs from block l.
 */
export function runHooks(model, ids, options = {}) {
  const handle = model._live();
  const o = checkOptions(options, ['capture', 'edits', 'startAt'], 'run option');
  if (o.startAt != null && typeof o.startAt !== 'string')
    throw invalid(`startAt must be a hook name, got ${describe(o.startAt)}`);
  const batch = idBatch(ids, 'ids');
  const request = { capture: captureList(o.capture), edits: hookEdits(o.edits) };
  if (o.startAt != null) request.startAt = o.startAt;
  const r = check(handle.forward(batch.data, batch.b, batch.t, request));
  const activations = {};
  for (const [name, t] of Object.entries(r.activations)) activations[name] = fromCore(t);
  return { logits: fromCore(r.logits), activations };
}

// The hook's value at `position` of each prompt (negative: from the end), summed into `sum`.
function addPrompts(model, prompts, hook, position, sum, what) {
  const list =
    Array.isArray(prompts) && prompts.length && typeof prompts[0] !== 'number' ? prompts : [prompts];
  for (const [i, prompt] of list.entries()) {
    const ids = typeof prompt === 'string' ? model.encode(prompt) : prompt;
    const batch = idBatch(ids, `${what}[${i}]`);
    if (batch.b !== 1) throw invalid(`steeringVector: ${what}[${i}] must be one sequence`);
    const p = position < 0 ? batch.t + position : position;
    if (p < 0 || p >= batch.t)
      throw invalid(`steeringVector: position ${position} is outside ${what}[${i}]'s ${batch.t} tokens`);
    // The scores and the pattern, (1, H, T, T), and a DeltaNet layer's final state (1, H_v, d_k, d_v)
    // have no value per position to steer with.
    if (/\.hook_(attn_scores|pattern|state)$/.test(hook))
      throw invalid(`steeringVector: "${hook}" has no value per position (capture it with run() instead)`);
    const value = runHooks(model, batch.tensor, { capture: [hook] }).activations[hook];
    const per = value.data.length / batch.t;
    const row = value.data.subarray(p * per, (p + 1) * per);
    if (!sum.data) sum.data = new Float64Array(per);
    if (sum.data.length !== per) throw invalid('steeringVector: the prompts gave the hook different sizes');
    row.forEach((v, k) => (sum.data[k] += v));
    sum.shape = value.shape.slice(2);
  }
  return list.length;
}

/**
 * Activation addition's vector: the mean of `hook` at `position` over the positive prompts minus
 * the mean over the negative ones, shaped like the hook at one position. Prompts are strings (with
 * a tokenizer) or token ids; one or a list each.
 */
export function steeringVector(model, options = {}) {
  const o = checkOptions(options, ['positive', 'negative', 'hook', 'position'], 'steeringVector option');
  const { positive, negative, hook, position = -1 } = o;
  if (typeof hook !== 'string') throw invalid(`steeringVector needs a hook name, got ${describe(hook)}`);
  if (!Number.isInteger(position)) throw invalid(`position must be an integer, got ${describe(position)}`);
  if (positive == null || negative == null)
    throw invalid('steeringVector needs positive and negative prompts');
  const plus = {},
    minus = {};
  const np = addPrompts(model, positive, hook, position, plus, 'positive');
  const nn = addPrompts(model, negative, hook, position, minus, 'negative');
  if (plus.data.length !== minus.data.length)
    throw invalid('steeringVector: the prompts gave the hook different sizes');
  const out = Float32Array.from(plus.data, (v, k) => v / np - minus.data[k] / nn);
  return new Tensor(out, plus.shape);
}
