// A test-side converter: a tiny checkpoint of tests/golden/pretrained/ written as a GGUF file the way
// llama.cpp's convert_hf_to_gguf.py writes it — general.architecture and its keys, llama.cpp's
// tensor names, the q/k rows of the rope-type-NORM archs permuted (LlamaModel.permute), Gemma's
// norms stored as 1 + w, GPT-2's Conv1D weights transposed and its head written as a copy of the
// embeddings, Llama 3's scaled RoPE as a rope_freqs tensor, Granite's four scalars as keys, LFM2's
// per-layer head_count_kv (0 for a conv layer), adjusted FF width, shortconv.l_cache and its
// (E, 1, K) kernels squeezed to (E, K) (LFM2Model) — with matrices in F32, F16, or quantized
// by `quantize(name, values, rowLength)` (return { type, data } or null to keep the type).
import { readFileSync } from 'node:fs';
import { writeGGUF } from './gguf-writer.js';
import { PRETRAINED_DIR } from './fixture.js';
import { qwen35Metadata, qwen35Tensors } from './gguf-qwen35.js';

export const GGML = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8, IQ2_XS: 17 };

const ARCH = {
  LlamaForCausalLM: 'llama',
  MistralForCausalLM: 'llama',
  Qwen2ForCausalLM: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
  Gemma2ForCausalLM: 'gemma2',
  Gemma3ForCausalLM: 'gemma3',
  Phi3ForCausalLM: 'phi3',
  GPT2LMHeadModel: 'gpt2',
  Olmo2ForCausalLM: 'olmo2',
  SmolLM3ForCausalLM: 'smollm3',
  GraniteForCausalLM: 'granite',
  Ministral3ForCausalLM: 'mistral3',
  Gemma4ForCausalLM: 'gemma4',
  Lfm2ForCausalLM: 'lfm2',
  Qwen3_5ForCausalLM: 'qwen35',
  Qwen3_5ForConditionalGeneration: 'qwen35', // the text model (gguf-qwen35.js)
};
const PERMUTED = ['llama', 'smollm3', 'granite', 'mistral3']; // llama.cpp's rope type NORM among them

/** float32 → float16 bits, rounding to nearest even. */
export function toHalf(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1),
      half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | h;
}

/** float16 bits → number. */
export function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 0x1f,
    m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// A safetensors file's tensors as float32 ({ shape, data }), F32 or F16.
function readSafetensors(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = new Map();
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, end] = e.data_offsets.map((o) => o + 8 + n);
    const raw = Uint8Array.prototype.slice.call(bytes, b, end); // a copy (Buffer.slice is a view)
    const data =
      e.dtype === 'F32'
        ? new Float32Array(raw.buffer)
        : Float32Array.from(new Uint16Array(raw.buffer), (h) => fromHalf(h));
    out.set(name, { shape: e.shape, data });
  }
  return out;
}

// LlamaModel.permute: rows (head, t, j) of (n_head, 2, d/2) written as (head, j, t).
function permute(data, rows, cols, heads) {
  const d = rows / heads,
    out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++)
    for (let j = 0; j < d / 2; j++)
      for (let t = 0; t < 2; t++) {
        const from = (h * d + t * (d / 2) + j) * cols,
          to = (h * d + 2 * j + t) * cols;
        out.set(data.subarray(from, from + cols), to);
      }
  return out;
}

function transpose(data, rows, cols) {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

// Hugging Face name → llama.cpp's (TensorNameMap), per family.
function ggufName(hfName, arch) {
  const name = hfName.replace(/^transformer\./, ''); // GPT-2's files name them with or without it
  const global = {
    'model.embed_tokens.weight': 'token_embd.weight',
    'model.norm.weight': 'output_norm.weight',
    'lm_head.weight': 'output.weight',
    'wte.weight': 'token_embd.weight',
    'wpe.weight': 'position_embd.weight',
    'ln_f.weight': 'output_norm.weight',
    'ln_f.bias': 'output_norm.bias',
    'model.embed_tokens_per_layer.weight': 'per_layer_token_embd.weight',
    'model.per_layer_model_projection.weight': 'per_layer_model_proj.weight',
    'model.per_layer_projection_norm.weight': 'per_layer_proj_norm.weight',
    'model.embedding_norm.weight': 'token_embd_norm.weight', // LFM2's final norm
  };
  if (global[name]) return global[name];
  const m = /^(?:model\.layers|h)\.(\d+)\.(.+)$/.exec(name);
  if (!m) throw new Error(`converter: no GGUF name for ${name}`);
  const post = arch.startsWith('gemma') || arch === 'olmo2';
  const per = {
    'input_layernorm.weight': 'attn_norm.weight',
    'post_attention_layernorm.weight': post ? 'post_attention_norm.weight' : 'ffn_norm.weight',
    'pre_feedforward_layernorm.weight': 'ffn_norm.weight',
    'post_feedforward_layernorm.weight': 'post_ffw_norm.weight',
    'self_attn.q_proj.weight': 'attn_q.weight',
    'self_attn.k_proj.weight': 'attn_k.weight',
    'self_attn.v_proj.weight': 'attn_v.weight',
    'self_attn.q_proj.bias': 'attn_q.bias',
    'self_attn.k_proj.bias': 'attn_k.bias',
    'self_attn.v_proj.bias': 'attn_v.bias',
    'self_attn.o_proj.weight': 'attn_output.weight',
    'self_attn.q_norm.weight': 'attn_q_norm.weight',
    'self_attn.k_norm.weight': 'attn_k_norm.weight',
    'self_attn.qkv_proj.weight': 'attn_qkv.weight',
    'mlp.gate_up_proj.weight': 'ffn_up.weight',
    'mlp.gate_proj.weight': 'ffn_gate.weight',
    'mlp.up_proj.weight': 'ffn_up.weight',
    'mlp.down_proj.weight': 'ffn_down.weight',
    'ln_1.weight': 'attn_norm.weight',
    'ln_1.bias': 'attn_norm.bias',
    'ln_2.weight': 'ffn_norm.weight',
    'ln_2.bias': 'ffn_norm.bias',
    'attn.c_attn.weight': 'attn_qkv.weight',
    'attn.c_attn.bias': 'attn_qkv.bias',
    'attn.c_proj.weight': 'attn_output.weight',
    'attn.c_proj.bias': 'attn_output.bias',
    'mlp.c_fc.weight': 'ffn_up.weight',
    'mlp.c_fc.bias': 'ffn_up.bias',
    'mlp.c_proj.weight': 'ffn_down.weight',
    'mlp.c_proj.bias': 'ffn_down.bias',
    'per_layer_input_gate.weight': 'inp_gate.weight',
    'per_layer_projection.weight': 'proj.weight',
    'post_per_layer_input_norm.weight': 'post_norm.weight',
    layer_scalar: 'layer_output_scale.weight',
    'operator_norm.weight': 'attn_norm.weight',
    'ffn_norm.weight': 'ffn_norm.weight',
    'self_attn.out_proj.weight': 'attn_output.weight',
    'self_attn.q_layernorm.weight': 'attn_q_norm.weight',
    'self_attn.k_layernorm.weight': 'attn_k_norm.weight',
    'feed_forward.w1.weight': 'ffn_gate.weight',
    'feed_forward.w3.weight': 'ffn_up.weight',
    'feed_forward.w2.weight': 'ffn_down.weight',
    'conv.in_proj.weight': 'shortconv.in_proj.weight',
    'conv.conv.weight': 'shortconv.conv.weight',
    'conv.out_proj.weight': 'shortconv.out_proj.weight',
  }[m[2]];
  if (!per) throw new Error(`converter: no GGUF name for ${name}`);
  return `blk.${m[1]}.${per}`;
}

// The tensors as the converter modifies them: [{ name, shape, data }] in llama.cpp's names.
function convertTensors(tensors, c, arch) {
  if (arch === 'qwen35') return qwen35Tensors(tensors, c); // gguf-qwen35.js
  const out = [];
  for (const [hfName, { shape, data: raw }] of tensors) {
    if (/\.attn\.(masked_)?bias$/.test(hfName)) continue; // GPT-2's causal-mask buffers
    let data = raw,
      s = shape;
    const name = ggufName(hfName, arch);
    const heads = c.num_attention_heads,
      kv = c.num_key_value_heads ?? heads;
    if (PERMUTED.includes(arch) && /attn_q\.weight$/.test(name)) data = permute(data, s[0], s[1], heads);
    if (PERMUTED.includes(arch) && /attn_k\.weight$/.test(name)) data = permute(data, s[0], s[1], kv);
    const plusOne = arch === 'gemma2' || arch === 'gemma3'; // Gemma 4's RMSNorm scales by w
    if (plusOne && name.endsWith('norm.weight')) data = data.map((w) => w + 1);
    if (arch === 'gpt2' && /(attn_qkv|attn_output|ffn_up|ffn_down)\.weight$/.test(name)) {
      data = transpose(data, s[0], s[1]);
      s = [s[1], s[0]];
    }
    if (name.endsWith('shortconv.conv.weight')) s = [s[0], s[2]]; // squeeze(1): ggml's conv is 2-D
    out.push({ name, shape: s, data });
    if (arch === 'gpt2' && name === 'token_embd.weight') out.push({ name: 'output.weight', shape: s, data });
  }
  return out;
}

// Llama 3's rope_freqs: the divisor of each frequency (LlamaModel.generate_extra_tensors).
function ropeFreqs(c, headDim) {
  const r = c.rope_scaling;
  const base = c.rope_theta;
  const low = r.original_max_position_embeddings / r.low_freq_factor;
  const high = r.original_max_position_embeddings / r.high_freq_factor;
  return Float32Array.from({ length: headDim / 2 }, (_, i) => {
    const wavelen = (2 * Math.PI) / (1 / base ** ((2 * i) / headDim));
    if (wavelen < high) return 1;
    if (wavelen > low) return r.factor;
    const smooth =
      (r.original_max_position_embeddings / wavelen - r.low_freq_factor) /
      (r.high_freq_factor - r.low_freq_factor);
    return 1 / ((1 - smooth) / r.factor + smooth);
  });
}

// Phi-3's LongRoPE (convert_hf_to_gguf's Phi3MiniModel): the original context length, the attention
// factor as a float32 key, and the short / long factors as F32 tensors.
const longRope = (c) => (c.rope_scaling?.rope_type ?? c.rope_scaling?.type) === 'longrope';
function longRopeMetadata(c, k) {
  const orig = c.original_max_position_embeddings,
    scale = c.max_position_embeddings / orig;
  const attn = scale > 1 ? Math.sqrt(1 + Math.log(scale) / Math.log(orig)) : 1;
  return [
    [k('rope.scaling.original_context_length'), 'uint32', orig],
    [k('rope.scaling.attn_factor'), 'float32', attn],
  ];
}

// YaRN as convert_hf_to_gguf writes it (TextModel.set_gguf_parameters), and Ministral 3's
// mscale_all_dim and query temperature (Mistral3Model.Ministral3Model).
function yarnMetadata(r, k) {
  return [
    [k('rope.scaling.type'), 'string', 'yarn'],
    [k('rope.scaling.factor'), 'float32', r.factor],
    [k('rope.scaling.original_context_length'), 'uint32', r.original_max_position_embeddings],
    [k('rope.scaling.yarn_beta_fast'), 'float32', r.beta_fast],
    [k('rope.scaling.yarn_beta_slow'), 'float32', r.beta_slow],
    [k('rope.scaling.yarn_log_multiplier'), 'float32', r.mscale_all_dim],
    [k('attention.temperature_scale'), 'float32', r.llama_4_scaling_beta],
  ];
}

// Gemma 4's keys (Gemma4Model.set_gguf_parameters): per-layer arrays, the two head sizes.
function gemma4Metadata(c, k) {
  const layers = c.num_hidden_layers,
    first = layers - c.num_kv_shared_layers;
  const ff = c.layer_types.map((_, i) => (c.use_double_wide_mlp && i >= first ? 2 : 1) * c.intermediate_size);
  const md = [
    [k('context_length'), 'uint32', c.max_position_embeddings],
    [k('embedding_length'), 'uint32', c.hidden_size],
    [k('feed_forward_length'), 'array<uint32>', ff],
    [k('block_count'), 'uint32', layers],
    [k('attention.head_count'), 'uint32', c.num_attention_heads],
    [k('attention.head_count_kv'), 'uint32', c.num_key_value_heads],
    [k('attention.layer_norm_rms_epsilon'), 'float32', c.rms_norm_eps],
    [k('rope.freq_base'), 'float32', c.rope_parameters.full_attention.rope_theta],
    [k('rope.freq_base_swa'), 'float32', c.rope_parameters.sliding_attention.rope_theta],
    [k('attention.sliding_window'), 'uint32', c.sliding_window],
    [k('attention.shared_kv_layers'), 'uint32', c.num_kv_shared_layers],
    [k('embedding_length_per_layer_input'), 'uint32', c.hidden_size_per_layer_input],
    [
      k('attention.sliding_window_pattern'),
      'array<bool>',
      c.layer_types.map((t) => t === 'sliding_attention'),
    ],
    [k('attention.key_length'), 'uint32', c.global_head_dim],
    [k('attention.value_length'), 'uint32', c.global_head_dim],
    [k('attention.key_length_swa'), 'uint32', c.head_dim],
    [k('attention.value_length_swa'), 'uint32', c.head_dim],
    [k('rope.dimension_count'), 'uint32', c.global_head_dim],
    [k('rope.dimension_count_swa'), 'uint32', c.head_dim],
  ];
  if (c.final_logit_softcapping)
    md.push([k('final_logit_softcapping'), 'float32', c.final_logit_softcapping]);
  return md;
}

// Gemma 4's rope_freqs (Gemma4Model.generate_extra_tensors): the full layers' proportional RoPE as
// divisors, 1 on the rotated pairs, 1e30 on the others.
function gemma4RopeFreqs(c) {
  const half = c.global_head_dim / 2,
    rotated = Math.floor((c.global_head_dim * c.rope_parameters.full_attention.partial_rotary_factor) / 2);
  return Float32Array.from({ length: half }, (_, i) => (i < rotated ? 1 : 1e30));
}

// LFM2Model._add_feed_forward_length: the SwiGLU width the block_* keys make of intermediate_size.
function lfm2FeedForward(c) {
  let ff = c.block_ff_dim ?? c.intermediate_size;
  if (!c.block_auto_adjust_ff_dim) return ff;
  ff = Math.trunc((2 * ff) / 3);
  if (c.block_ffn_dim_multiplier != null) ff = Math.trunc(c.block_ffn_dim_multiplier * ff);
  return c.block_multiple_of * Math.ceil(ff / c.block_multiple_of);
}

// LFM2Model.set_gguf_parameters: the KV head count per layer (0 for a conv layer; gguf-py writes a
// list of ints as int32), the adjusted FF width, the vocab size and the conv kernel length.
function lfm2Metadata(md, c, k) {
  const kv = c.layer_types.map((t) => (t === 'conv' ? 0 : c.num_key_value_heads));
  const edited = md.map(([key, type, value]) => {
    if (key === k('attention.head_count_kv')) return [key, 'array<int32>', kv];
    if (key === k('feed_forward_length')) return [key, type, lfm2FeedForward(c)];
    if (key === k('attention.layer_norm_rms_epsilon')) return [key, type, c.norm_eps];
    return [key, type, value];
  });
  return [
    ...edited,
    [k('vocab_size'), 'uint32', c.vocab_size],
    [k('shortconv.l_cache'), 'uint32', c.conv_L_cache],
  ];
}

// The metadata the converter writes for config c.
function metadataOf(c, arch, name) {
  const md = baseMetadata(c, arch, name);
  if (arch === 'qwen35') return qwen35Metadata(md, c, (key) => `${arch}.${key}`);
  return arch === 'lfm2' ? lfm2Metadata(md, c, (key) => `${arch}.${key}`) : md;
}

function baseMetadata(c, arch, name) {
  const k = (key) => `${arch}.${key}`;
  if (arch === 'gemma4')
    return [
      ['general.architecture', 'string', arch],
      ['general.name', 'string', name],
      ...gemma4Metadata(c, k),
      ['tokenizer.ggml.bos_token_id', 'uint32', c.bos_token_id],
      ['tokenizer.ggml.eos_token_id', 'uint32', c.eos_token_id],
    ];
  const gpt2 = arch === 'gpt2';
  const hidden = gpt2 ? c.n_embd : c.hidden_size,
    heads = gpt2 ? c.n_head : c.num_attention_heads;
  const md = [
    ['general.architecture', 'string', arch],
    ['general.name', 'string', name],
    [k('context_length'), 'uint32', gpt2 ? c.n_positions : c.max_position_embeddings],
    [k('embedding_length'), 'uint32', hidden],
    [k('feed_forward_length'), 'uint32', gpt2 ? (c.n_inner ?? 4 * hidden) : c.intermediate_size],
    [k('block_count'), 'uint32', gpt2 ? c.n_layer : c.num_hidden_layers],
    [k('attention.head_count'), 'uint32', heads],
  ];
  if (gpt2) md.push([k('attention.layer_norm_epsilon'), 'float32', c.layer_norm_epsilon]);
  else {
    const headDim = c.head_dim ?? hidden / heads;
    md.push(
      [k('attention.head_count_kv'), 'uint32', c.num_key_value_heads ?? heads],
      [k('attention.layer_norm_rms_epsilon'), 'float32', c.rms_norm_eps],
      [k('rope.freq_base'), 'float32', c.rope_theta ?? c.rope_parameters.rope_theta],
      [k('rope.dimension_count'), 'uint32', Math.floor(headDim * (c.partial_rotary_factor ?? 1))],
    );
    if (c.head_dim)
      md.push(
        [k('attention.key_length'), 'uint32', headDim],
        [k('attention.value_length'), 'uint32', headDim],
      );
    if (c.rope_scaling?.rope_type === 'linear')
      md.push(
        [k('rope.scaling.type'), 'string', 'linear'],
        [k('rope.scaling.factor'), 'float32', c.rope_scaling.factor],
      );
    if (c.sliding_window) md.push([k('attention.sliding_window'), 'uint32', c.sliding_window]);
    if (longRope(c)) md.push(...longRopeMetadata(c, k));
    if (c.rope_parameters?.rope_type === 'yarn') md.push(...yarnMetadata(c.rope_parameters, k));
  }
  if (arch === 'gemma2')
    md.push(
      [k('attn_logit_softcapping'), 'float32', c.attn_logit_softcapping],
      [k('final_logit_softcapping'), 'float32', c.final_logit_softcapping],
    );
  if (arch === 'granite')
    md.push(
      [k('embedding_scale'), 'float32', c.embedding_multiplier],
      [k('residual_scale'), 'float32', c.residual_multiplier],
      [k('attention.scale'), 'float32', c.attention_multiplier],
      [k('logit_scale'), 'float32', c.logits_scaling],
    );
  if (Number.isInteger(c.bos_token_id)) md.push(['tokenizer.ggml.bos_token_id', 'uint32', c.bos_token_id]);
  if (Number.isInteger(c.eos_token_id)) md.push(['tokenizer.ggml.eos_token_id', 'uint32', c.eos_token_id]);
  return md;
}

// The converter keeps these F32 whatever the file type (ModelBase.prepare_tensors).
const ALWAYS_F32 = /^rope_freqs\.weight$|shortconv\.conv\.weight$|ssm_conv1d\.weight$/;

// A tensor's bytes in `type` (F32 or F16), or as `quantize` returns them.
function encode(t, type, quantize) {
  const f32 = ALWAYS_F32.test(t.name);
  const q = t.shape.length === 2 && quantize && !f32 ? quantize(t.name, t.data, t.shape[1]) : null;
  if (q) return q;
  if (t.shape.length === 1 || type === 'F32' || f32)
    return { type: GGML.F32, data: new Uint8Array(Float32Array.from(t.data).buffer) };
  return { type: GGML.F16, data: new Uint8Array(Uint16Array.from(t.data, toHalf).buffer) };
}

/** The fixtures this converter writes as GGUF: those of an architecture llama.cpp's converter maps here. */
export function ggufFixtures(names) {
  return names.filter((model) => {
    const c = JSON.parse(readFileSync(new URL(`${model}/config.json`, PRETRAINED_DIR), 'utf8'));
    return Object.hasOwn(ARCH, c.architectures[0]);
  });
}

/**
 * The GGUF bytes of fixture `model` (its model.safetensors, or `weightsFile`), matrices in `type`
 * ('F32' or 'F16') unless `quantize` gives them; `metadata` / `tensors` edit the result for hostile
 * cases: metadata(list) and tensors(list) return the lists to write. `checkpoint` ({ config, tensors:
 * Map name → { shape, data } }) stands for a checkpoint not on disk (a generated one).
 */
export function fixtureGGUF(
  model,
  { type = 'F32', weightsFile, quantize, metadata, tensors, checkpoint } = {},
) {
  const dir = new URL(`${model}/`, PRETRAINED_DIR);
  const given = checkpoint?.config ?? JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));
  const arch = ARCH[given.architectures[0]];
  const c = given.text_config ?? given; // a vision-language checkpoint: its text model's (Qwen3.5)
  const file = weightsFile ?? (type === 'F16' ? 'model.f16.safetensors' : 'model.safetensors');
  const weights = checkpoint?.tensors ?? readSafetensors(readFileSync(new URL(file, dir)));
  const list = convertTensors(weights, c, arch);
  if (c.rope_scaling?.rope_type === 'llama3') {
    const data = ropeFreqs(c, c.head_dim ?? c.hidden_size / c.num_attention_heads);
    list.push({ name: 'rope_freqs.weight', shape: [data.length], data });
  }
  if (arch === 'gemma4') {
    const data = gemma4RopeFreqs(c);
    list.push({ name: 'rope_freqs.weight', shape: [data.length], data });
  }
  if (longRope(c))
    for (const which of ['long', 'short']) {
      const data = Float32Array.from(c.rope_scaling[`${which}_factor`]);
      list.push({ name: `rope_factors_${which}.weight`, shape: [data.length], data });
    }
  let written = list.map((t) => ({
    name: t.name,
    dims: [...t.shape].reverse(),
    ...encode(t, type, quantize),
  }));
  let md = metadataOf(c, arch, model);
  if (metadata) md = metadata(md);
  if (tensors) written = tensors(written);
  return writeGGUF({ metadata: md, tensors: written });
}
