// Token id batches and layer lists, as every model's methods take them (TinyTransformer, PretrainedModel,
// the interpretability tools): checked here once, with no model behind them.
import { AttentionError } from './errors.js';
import { checkOptions, describe } from './options.js';
import { asIntTensor } from './tensor.js';

/**
 * Token ids (or targets) as { data: Int32Array, b, t, shape }: an int32 Tensor, nested integer
 * arrays or { data: Int32Array, shape }, of shape (B, T) or (T) (a batch of one). Float data is an
 * INVALID_ARGUMENT, not a cast.
 */
export function idBatch(value, what) {
  if (value instanceof Int32Array) value = { data: value, shape: [value.length] }; // a bare Int32Array is (T)
  const tensor = asIntTensor(value, what);
  const { shape } = tensor;
  if (shape.length !== 1 && shape.length !== 2) {
    throw new AttentionError(
      'SHAPE_MISMATCH',
      `${what} must have shape (B, T) or (T), got (${shape.join(', ')})`,
    );
  }
  const [b, t] = shape.length === 1 ? [1, shape[0]] : shape;
  return { tensor, data: tensor.data, b, t, shape };
}

// Layer indices from `attention: true | false | number[]` or `trace: { layers }`.
export function layerList(value, numLayers, what) {
  if (value === true) return Array.from({ length: numLayers }, (_, i) => i);
  if (value === false || value == null) return [];
  if (!Array.isArray(value)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `${what} must be true, false or an array of layer indices, got ${describe(value)}`,
    );
  }
  for (const l of value) {
    if (!Number.isInteger(l) || l < 0 || l >= numLayers) {
      throw new AttentionError(
        'INVALID_ARGUMENT',
        `${what}: layer ${describe(l)} is not in [0, numLayers = ${numLayers})`,
      );
    }
  }
  return value;
}

export function traceLayers(trace, numLayers) {
  if (trace === true || trace === false || trace == null) return layerList(trace, numLayers, 'trace');
  if (typeof trace !== 'object' || Array.isArray(trace)) {
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `trace must be true, false or { layers: [...] }, got ${describe(trace)}`,
    );
  }
  const { layers } = checkOptions(trace, ['layers'], 'trace option');
  return layerList(layers ?? [], numLayers, 'trace.layers');
}
