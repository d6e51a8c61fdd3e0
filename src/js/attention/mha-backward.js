// MultiHeadAttention.backward: the gradients of sum(output ⊙ gradOutput) for the module's latest
// forward, when that forward had `requiresGrad: true`. The C++ handle (MhaHandle in
// src/wasm/bindings.cpp) keeps what the backward needs from that forward (one MhaSaved); this file
// keeps, per module, what the JS side needs to know about it: whether there is one, and which inputs
// the caller passed. Internal: index.js's MultiHeadAttention calls these.
import { AttentionError, check } from '../errors.js';
import { Tensor, asFloatTensor, fromCore } from '../tensor.js';

/**
 * What backward needs to remember of a successful requiresGrad forward, besides the C++ state:
 * which of key and value the caller passed (their gradients are returned only then), and the
 * value's shape when it was passed without a key (the forward ignores it then; its gradient is zero).
 */
export function gradRecord(key, value) {
  return {
    key: key != null,
    value: value != null,
    ignoredValueShape: key == null && value != null ? [...value.shape] : null,
  };
}

// The core's INVALID_ARGUMENT from backward means its saved state is stale (a parameter was set after
// the forward): the JS side has already refused the other cases (no forward with requiresGrad).
function staleError() {
  return new AttentionError(
    'INVALID_ARGUMENT',
    'backward: a parameter was set (loadStateDict) after the forward with requiresGrad: true; ' +
      'run forward with requiresGrad: true again first',
  );
}

/**
 * Runs the backward on `handle` for the forward described by `record` (gradRecord, or null when the
 * latest forward did not keep anything) and returns { inputs, params } of Tensors.
 */
export function mhaBackward({ checkInputBytes }, handle, record, gradOutput) {
  if (!record) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      'backward needs a forward with requiresGrad: true first (there was none since the module was created, ' +
        'or the latest forward had no requiresGrad or failed)',
    );
  }
  const g = asFloatTensor(gradOutput, 'gradOutput');
  checkInputBytes('multi-head attention backward', [g]);
  const r = handle.backward(g);
  if (r.code === 1) throw staleError(); // 1 = INVALID_ARGUMENT (errors.js CORE_CODES)
  check(r);
  const inputs = { query: fromCore(r.query) };
  if (record.key) inputs.key = fromCore(r.key);
  if (r.value) inputs.value = fromCore(r.value);
  else if (record.ignoredValueShape) {
    const shape = record.ignoredValueShape;
    inputs.value = new Tensor(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
  }
  const params = {};
  for (const [name, t] of Object.entries(r.params)) params[name] = fromCore(t);
  return { inputs, params };
}
