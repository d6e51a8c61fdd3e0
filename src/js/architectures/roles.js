// The tensors a core config needs, by role, in the core's layout ((out, in) as nn.Linear): the
// order and shapes of src/model/pretrained_roles.cpp's list (pretrained_tensor_specs; the test
// pretrained-registry.test.mjs compares the two for every fixture). The roles themselves are the
// core's: TENSOR_ROLE (constants.js, generated from pretrained_roles.cpp's names), and a name that
// is not one of them is an error here rather than a tensor the loader would look for in vain.
import { PRETRAINED_ARCH, TENSOR_ROLE } from '../constants.js';
import { QK_NORM } from './shared.js';

// GPT-2's block: LayerNorms with biases, fused [q; k; v] with bias, an MLP up → GELU → down.
function gpt2Layer(c) {
  const e = c.hidden,
    i = c.intermediate;
  return [
    ['attn_norm', [e]],
    ['attn_norm_bias', [e]],
    ['mlp_norm', [e]],
    ['mlp_norm_bias', [e]],
    ['qkv', [3 * e, e]],
    ['qkv_bias', [3 * e]],
    ['o', [e, e]],
    ['o_bias', [e]],
    ['up', [i, e]],
    ['up_bias', [i]],
    ['down', [e, i]],
    ['down_bias', [e]],
  ];
}

// The Llama layout's block with the core's variants (pre/post norms, fused projections, biases,
// q/k norms per head or over all heads).
function llamaLayer(c) {
  const e = c.hidden,
    i = c.intermediate,
    qk = c.heads * c.headDim,
    kv = c.kvHeads * c.headDim;
  const list = [];
  if (c.preNorms) list.push(['attn_norm', [e]]);
  if (c.postNorms) list.push(['post_attn_norm', [e]]);
  if (c.preNorms) list.push(['mlp_norm', [e]]);
  if (c.postNorms) list.push(['post_mlp_norm', [e]]);
  if (c.fusedProjections) list.push(['qkv', [qk + 2 * kv, e]]);
  else
    for (const [role, rows] of [
      ['q', qk],
      ['k', kv],
      ['v', kv],
    ]) {
      list.push([role, [rows, e]]);
      if (c.qkvBias) list.push([`${role}_bias`, [rows]]);
    }
  if (c.qkNorm) {
    const perHead = c.qkNorm === QK_NORM.perHead;
    list.push(['q_norm', [perHead ? c.headDim : qk]], ['k_norm', [perHead ? c.headDim : kv]]);
  }
  list.push(['o', [e, qk]]);
  if (c.fusedProjections) list.push(['gate_up', [2 * i, e]]);
  else list.push(['gate', [i, e]], ['up', [i, e]]);
  list.push(['down', [e, i]]);
  return list;
}

// The core's role of that name.
function coreRole(name) {
  if (!Object.hasOwn(TENSOR_ROLE, name)) throw new Error(`"${name}" is not one of the core's tensor roles`);
  return name;
}

/** [{ role, layer (-1: not per layer), shape }] of every tensor core config `c` needs, in load order. */
export function tensorRoles(c) {
  const gpt2 = c.arch === PRETRAINED_ARCH.GPT2;
  const out = [{ role: 'embed', layer: -1, shape: [c.vocabSize, c.hidden] }];
  if (gpt2) out.push({ role: 'positions', layer: -1, shape: [c.maxPositions, c.hidden] });
  const block = gpt2 ? gpt2Layer(c) : llamaLayer(c);
  for (let layer = 0; layer < c.layers; layer++)
    for (const [role, shape] of block) out.push({ role, layer, shape });
  out.push({ role: 'final_norm', layer: -1, shape: [c.hidden] });
  if (gpt2) out.push({ role: 'final_norm_bias', layer: -1, shape: [c.hidden] });
  if (!c.tieEmbeddings) out.push({ role: 'unembed', layer: -1, shape: [c.vocabSize, c.hidden] });
  for (const t of out) coreRole(t.role);
  return out;
}
