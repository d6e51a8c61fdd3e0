// metricGradients' `hooks` option: ∂M/∂ an activation at a named hook point (interp/hooks.js), read
// from what the core's backward already returns (src/model/metric_gradients.h), never recomputed in
// JS. Each hook maps to one of its gradients only where the two are the same quantity exactly:
//   blocks.{l}.hook_resid_pre         gradHidden[l] (the stream entering block l)
//   blocks.{l}.hook_resid_post        the stream leaving block l: gradHidden[l + 1] below the last
//                                     block; for the last, gradHidden[L] without a final norm, else
//                                     the MLP branch's gradient where that branch is added to the stream
//                                     as it leaves (no norm after the sum)
//   blocks.{l}.hook_mlp_out           gradMlp[l] (the MLP branch as it is added to the stream)
//   blocks.{l}.hook_attn_out          only in a block without an MLP whose attention branch is added to
//                                     the stream as it leaves: the stream leaving it (above)
//   blocks.{l}.attn.hook_z            gradZ[l] (T, H·d) = the hook's (1, T, H, d)
//   blocks.{l}.attn.hook_pattern      gradAttention[l] (1, H, T, T), the backward asked for it
// Any other hook (hook_resid_mid, q/k/v, scores, the MLP's inner hooks, the embeddings, the final
// norm) has no gradient there: refused by name, as is a name the model does not have.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';
import { Tensor } from '../tensor.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);

const LAYER_HOOK = /^blocks\.(\d+|\*)\.(.+)$/;

/** The hook suffixes `hooks` can name (after `blocks.{l}.`), in the order the docs list them. */
export const GRADIENT_HOOKS = Object.freeze([
  'hook_resid_pre',
  'hook_resid_post',
  'hook_mlp_out',
  'hook_attn_out',
  'attn.hook_z',
  'attn.hook_pattern',
]);

// The names asked for, `blocks.*.…` expanded over the layers that have the hook (the model's own
// list, hookNames), in the order given; an unknown name refused.
function expand(list, known, L) {
  const out = [];
  for (const name of list) {
    const m = LAYER_HOOK.exec(name);
    if (m && m[1] === '*') {
      const each = Array.from({ length: L }, (_, l) => `blocks.${l}.${m[2]}`).filter((n) => known.has(n));
      if (each.length === 0) throw invalid(`metricGradients: unknown hook "${name}" (see hookNames())`);
      out.push(...each);
    } else {
      if (!known.has(name)) throw invalid(`metricGradients: unknown hook "${name}" (see hookNames())`);
      out.push(name);
    }
  }
  return [...new Set(out)];
}

// Whether sublayer `which` ('attn' | 'mlp') of block l adds its branch straight to the stream (no
// norm of the sum after it: pre-norm, sandwich post-norms on the branch), so ∂M/∂branch = ∂M/∂ the
// stream after the add.
const addsToStream = (a, l, which) => a.normAfter(l, which)?.branch !== false;

// The source of ∂M/∂ the stream leaving block l, or a reason it is not returned.
function streamAfter(a, known, l) {
  if (l < a.L - 1) return { from: 'hidden', layer: l + 1 };
  if (!known.has('ln_final.hook_normalized')) return { from: 'hidden', layer: a.L };
  if (known.has(`blocks.${l}.hook_mlp_out`) && addsToStream(a, l, 'mlp')) return { from: 'mlp', layer: l };
  return {
    reason: 'the last block leaves the stream through the final norm, whose input gradient is not returned',
  };
}

// One hook's source in the core's result: { from: 'hidden' | 'mlp' | 'z' | 'pattern', layer } or
// { reason } when its gradient is not among them.
function sourceOf(a, known, name) {
  const m = LAYER_HOOK.exec(name);
  if (!m) return { reason: 'the backward returns no gradient outside the blocks' };
  const l = Number(m[1]),
    hook = m[2];
  if (hook === 'hook_resid_pre') return { from: 'hidden', layer: l };
  if (hook === 'hook_resid_post') return streamAfter(a, known, l);
  if (hook === 'hook_mlp_out') return { from: 'mlp', layer: l };
  if (hook === 'attn.hook_z') return { from: 'z', layer: l };
  if (hook === 'attn.hook_pattern') return { from: 'pattern', layer: l };
  if (hook === 'hook_attn_out') {
    if (known.has(`blocks.${l}.hook_mlp_out`))
      return { reason: 'its gradient is the stream between the attention and the MLP, not returned' };
    if (!addsToStream(a, l, 'attn')) return { reason: 'a norm follows the sum it is added to' };
    return streamAfter(a, known, l);
  }
  return { reason: 'the backward returns no gradient there' };
}

const supported = (L) =>
  GRADIENT_HOOKS.map((h) => `blocks.{0…${L - 1}}.${h}`).join(', ') +
  ' (hook_resid_post and hook_attn_out where exact: see docs/interpretability.md)';

/**
 * The `hooks` option checked against the model (before anything runs) → { hooks: [{ name, from,
 * layer, shape }], attention: whether a pattern hook needs the attention's gradient }.
 */
export function gradientHooks(model, a, hooks) {
  if (hooks == null) return { hooks: [], attention: false };
  if (!Array.isArray(hooks) || !hooks.every((n) => typeof n === 'string'))
    throw invalid(`metricGradients: hooks must be an array of hook names, got ${describe(hooks)}`);
  const infos = new Map(model.hookNames().map((h) => [h.name, h.shape]));
  const known = new Set(infos.keys());
  const out = [];
  for (const name of expand(hooks, known, a.L)) {
    const s = sourceOf(a, known, name);
    if (s.reason)
      throw invalid(
        `metricGradients: no gradient at hook "${name}" (${s.reason}); the hooks supported: ${supported(a.L)}`,
      );
    out.push({ name, from: s.from, layer: s.layer, shape: infos.get(name) });
  }
  return { hooks: out, attention: out.some((h) => h.from === 'pattern') };
}

/** { [name]: Tensor in the hook's own shape, batch 1 } from the core's result r of one sequence of T. */
export function gradHookTensors(plan, r, T) {
  const out = {};
  for (const h of plan.hooks) {
    const list = { hidden: r.gradHidden, mlp: r.gradMlp, z: r.gradZ, pattern: r.gradAttention }[h.from];
    const shape = h.shape.map((n) => (n === 'B' ? 1 : n === 'T' ? T : n));
    const data = list[h.layer].data.slice();
    if (data.length !== shape.reduce((x, y) => x * y, 1))
      throw new AttentionError(
        'SHAPE_MISMATCH',
        `metricGradients: the gradient at "${h.name}" has the wrong size`,
      );
    out[h.name] = new Tensor(data, shape);
  }
  return out;
}
