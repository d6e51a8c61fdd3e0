// The test-side converter's Qwen3.5 part (gguf-from-fixture.js): a Qwen3_5ForCausalLM checkpoint
// as llama.cpp's convert_hf_to_gguf writes a `qwen35` file (its Qwen3_5TextModel, through
// _LinearAttentionVReorderBase and Qwen3NextModel): llama.cpp's names, the value heads reordered
// from grouped (by key head) to tiled in in_proj_qkv's v rows, in_proj_z, in_proj_a / _b, A_log,
// dt_bias, the conv's v channels and out_proj's columns; A_log stored as −exp(A_log); the conv
// kernel squeezed to (C, K); every norm.weight but linear_attn.norm's stored as 1 + w; the ssm.*
// keys, full_attention_interval, attention.recurrent_layers (from layer_types), the partial RoPE's
// rope.dimension_count and the mRoPE sections padded to 4. Of a Qwen3_5ForConditionalGeneration
// checkpoint, the text model (model.language_model.*), without the vision tower.

const NAMES = {
  'input_layernorm.weight': 'attn_norm.weight',
  'post_attention_layernorm.weight': 'post_attention_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight',
  'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.o_proj.weight': 'attn_output.weight',
  'self_attn.q_norm.weight': 'attn_q_norm.weight',
  'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight',
  'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.down_proj.weight': 'ffn_down.weight',
  'linear_attn.in_proj_qkv.weight': 'attn_qkv.weight',
  'linear_attn.in_proj_z.weight': 'attn_gate.weight',
  'linear_attn.in_proj_b.weight': 'ssm_beta.weight',
  'linear_attn.in_proj_a.weight': 'ssm_alpha.weight',
  'linear_attn.conv1d.weight': 'ssm_conv1d.weight',
  'linear_attn.A_log': 'ssm_a',
  'linear_attn.dt_bias': 'ssm_dt.bias',
  'linear_attn.norm.weight': 'ssm_norm.weight',
  'linear_attn.out_proj.weight': 'ssm_out.weight',
};
const GLOBAL = {
  'model.embed_tokens.weight': 'token_embd.weight',
  'model.norm.weight': 'output_norm.weight',
  'lm_head.weight': 'output.weight',
};

/** llama.cpp's name of a Qwen3.5 checkpoint tensor. */
function qwen35Name(name) {
  if (GLOBAL[name]) return GLOBAL[name];
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(name);
  if (!m || !NAMES[m[2]]) throw new Error(`converter: no qwen35 name for ${name}`);
  return `blk.${m[1]}.${NAMES[m[2]]}`;
}

/**
 * _reorder_v_heads on the rows [from, from + kHeads·perK·size) of a row-major (rows, cols) matrix:
 * the row blocks (g, j) of `size` rows (key head g, its j-th value head) moved to (j, g).
 */
export function tileRows(data, cols, from, kHeads, perK, size) {
  const out = Float32Array.from(data);
  for (let g = 0; g < kHeads; g++)
    for (let j = 0; j < perK; j++) {
      const src = (from + (g * perK + j) * size) * cols,
        dst = (from + (j * kHeads + g) * size) * cols;
      out.set(data.subarray(src, src + size * cols), dst);
    }
  return out;
}

// The same along the columns of a (rows, cols) matrix (out_proj's input dimension).
function tileCols(data, rows, cols, kHeads, perK, size) {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++)
    out.set(tileRows(data.subarray(r * cols, (r + 1) * cols), 1, 0, kHeads, perK, size), r * cols);
  return out;
}

// One tensor's data after _LinearAttentionVReorderBase.modify_tensors (num_v_heads > num_k_heads).
function reorder(part, data, shape, c) {
  const kHeads = c.linear_num_key_heads,
    perK = c.linear_num_value_heads / kHeads;
  if (perK === 1) return data;
  const dv = c.linear_value_head_dim,
    qk = 2 * kHeads * c.linear_key_head_dim;
  const cols = shape.length > 1 ? shape.slice(1).reduce((a, n) => a * n, 1) : 1;
  if (part === 'linear_attn.in_proj_qkv.weight' || part === 'linear_attn.conv1d.weight')
    return tileRows(data, cols, qk, kHeads, perK, dv);
  if (part === 'linear_attn.in_proj_z.weight') return tileRows(data, cols, 0, kHeads, perK, dv);
  if (/in_proj_[ab]\.weight$|A_log$|dt_bias$/.test(part)) return tileRows(data, cols, 0, kHeads, perK, 1);
  if (part === 'linear_attn.out_proj.weight') return tileCols(data, shape[0], shape[1], kHeads, perK, dv);
  return data;
}

/** The tensors of a Qwen3.5 checkpoint as the converter writes them: [{ name, shape, data }]. */
export function qwen35Tensors(tensors, c) {
  const out = [];
  for (const [given, { shape, data: raw }] of tensors) {
    if (/^(model\.visual|mtp)\./.test(given)) continue; // the vision tower, the MTP head: not written
    const hfName = given.replace(/^model\.language_model\./, 'model.');
    const part = hfName.replace(/^model\.layers\.\d+\./, '');
    let data = reorder(part, raw, shape, c),
      s = shape;
    if (part === 'linear_attn.A_log') data = data.map((a) => -Math.exp(a));
    if (part === 'linear_attn.conv1d.weight') s = [s[0], s[2]]; // squeeze: (C, 1, K) → (C, K)
    if (hfName.endsWith('norm.weight') && part !== 'linear_attn.norm.weight') data = data.map((w) => w + 1);
    out.push({ name: qwen35Name(hfName), shape: s, data });
  }
  return out;
}

/** The metadata of a Qwen3.5 checkpoint: the base keys (`md`) with Qwen3NextModel's additions. */
export function qwen35Metadata(md, c, k) {
  const rope = c.rope_parameters ?? {};
  const headDim = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const partial = rope.partial_rotary_factor ?? c.partial_rotary_factor ?? 0.25;
  const sections = [...(rope.mrope_section ?? [11, 11, 10]), 0, 0, 0, 0].slice(0, 4);
  const out = md.map(([key, type, value]) =>
    key === k('rope.dimension_count') ? [key, type, Math.floor(headDim * partial)] : [key, type, value],
  );
  out.push(
    [k('rope.dimension_sections'), 'array<int32>', sections],
    [k('ssm.conv_kernel'), 'uint32', c.linear_conv_kernel_dim],
    [k('ssm.state_size'), 'uint32', c.linear_key_head_dim],
    [k('ssm.group_count'), 'uint32', c.linear_num_key_heads],
    [k('ssm.time_step_rank'), 'uint32', c.linear_num_value_heads],
    [k('ssm.inner_size'), 'uint32', c.linear_value_head_dim * c.linear_num_value_heads],
  );
  if (c.layer_types)
    out.push([
      k('attention.recurrent_layers'),
      'array<bool>',
      c.layer_types.map((t) => t === 'linear_attention'),
    ]);
  out.push([k('full_attention_interval'), 'uint32', c.full_attention_interval ?? 4]);
  return out;
}
