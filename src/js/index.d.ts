/**
 * attention-wasm — transformer attention in WebAssembly SIMD128, with a step-by-step trace.
 *
 * Conventions:
 * - Tensors are row-major float32 (`Float32Array`) with a `shape`; boolean masks are `Uint8Array`
 *   (or `boolean[]`) tensors with `dtype === 'bool'`; integer tensors (token ids, indices) are
 *   `Int32Array` tensors with `dtype === 'int32'`. A function never casts between them: a tensor of
 *   another dtype than it expects is an `INVALID_ARGUMENT` (`INVALID_MASK` for masks) naming the argument.
 * - **Boolean masks: `true` (1) = may attend**, everywhere (as `F.scaled_dot_product_attention`).
 *   `torch.nn.MultiheadAttention` uses the OPPOSITE for its bool `attn_mask` and
 *   `key_padding_mask` (`True` = ignore): invert those when porting.
 * - Masked positions are −∞; a fully masked row gives zero weights and a zero attention output
 *   row (PyTorch gives NaN there).
 * - Inputs are copied into the wasm heap and results copied out: results stay valid forever.
 * - Failures throw {@link AttentionError}; the module stays usable afterwards.
 * - Option and config objects are checked: an unknown key (a typo, or a PyTorch spelling such as
 *   `attn_mask`) throws `INVALID_ARGUMENT` naming it and the key to use, instead of being ignored.
 *   `null` or `undefined` options mean none.
 *
 * The declarations live in ./types/, one file per area; this file re-exports all of them.
 * @packageDocumentation
 */

export * from './types/tensor.js';
export * from './types/runtime.js';
export * from './types/ops.js';
export * from './types/mha.js';
export * from './types/model.js';
export * from './types/interp.js';
export * from './types/hooks.js';
export * from './types/gradients.js';
export * from './types/train.js';
export * from './types/pretrained.js';
export * from './types/hub.js';
