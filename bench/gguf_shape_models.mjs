// The four 3–4B models people run as Q4_K_M GGUF files, as llama.cpp's convert_hf_to_gguf.py writes
// their metadata (hyperparameters from each released config.json) and the tensors a real Q4_K_M
// file of each has: bench/gguf_shapes.mjs writes a file of that shape with seeded random blocks.
// No Node imports here: the Chromium page (bench/gguf_shape_browser.mjs) reads IDS and the specs.

/** Eight ids in every model's vocabulary (the last one near the top of the regular tokens). */
export const IDS = [1, 504, 2342, 314, 260, 3436, 30, 31000];

// Llama 3's scaled RoPE as the converter writes it (LlamaModel.generate_extra_tensors): one divisor
// per rotated pair, the rope_freqs tensor (F32).
export function llama3RopeFactors({ theta, headDim, factor, low, high, original }) {
  const out = new Float32Array(headDim / 2);
  const lowWavelen = original / low,
    highWavelen = original / high;
  for (let i = 0; i < headDim / 2; i++) {
    const freq = 1 / theta ** ((2 * i) / headDim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = factor;
    else {
      const smooth = (original / wavelen - low) / (high - low);
      out[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}

// The short chat templates written into the files: stand-ins in each model's format (the released
// templates are longer); what matters here is that tokenizer.chat_template is read and applied.
const TEMPLATES = {
  llama3:
    "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
  chatml:
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
  phi3: "{% for m in messages %}{{ '<|' + m['role'] + '|>\\n' + m['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}",
};

// Llama 3's special tokens (128000…128255; the rest are <|reserved_special_token_N|>).
const LLAMA3_SPECIALS = {
  128000: '<|begin_of_text|>',
  128001: '<|end_of_text|>',
  128006: '<|start_header_id|>',
  128007: '<|end_header_id|>',
  128008: '<|eom_id|>',
  128009: '<|eot_id|>',
  128010: '<|python_tag|>',
};
// SmolLM3 keeps Llama 3's vocabulary and names some reserved ids for its ChatML format.
const SMOLLM3_SPECIALS = { ...LLAMA3_SPECIALS, 128011: '<|im_start|>', 128012: '<|im_end|>' };
// Qwen3's added tokens (151643…151668); ids up to 151935 are the converter's [PAD<i>] (unused).
const QWEN3_NAMES = [
  '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>',
  '<|box_start|>', '<|box_end|>', '<|quad_start|>', '<|quad_end|>', '<|vision_start|>',
  '<|vision_end|>', '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>', '<tool_call>',
  '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>',
  '<|repo_name|>', '<|file_sep|>', '<tool_response>', '</tool_response>', '<think>', '</think>',
]; // prettier-ignore
const QWEN3_SPECIALS = Object.fromEntries(QWEN3_NAMES.map((t, i) => [151643 + i, t]));
// Phi-3's added tokens (32000…32010); 32011…32063 are the converter's [PAD<i>] (unused).
const PHI3_NAMES = [
  '<|endoftext|>', '<|assistant|>', '<|placeholder1|>', '<|placeholder2|>', '<|placeholder3|>',
  '<|placeholder4|>', '<|system|>', '<|end|>', '<|placeholder5|>', '<|placeholder6|>', '<|user|>',
]; // prettier-ignore
const PHI3_SPECIALS = Object.fromEntries(PHI3_NAMES.map((t, i) => [32000 + i, t]));

/**
 * Each model: arch (general.architecture), the hyperparameters (hp), the memoryLimit it is loaded
 * under, and its tokenizer: model gpt2 (byte-level BPE; `regular` tokens before the specials, which
 * are `special` up to `top`, then unused pads up to the vocab) or llama (SentencePiece).
 */
export const GGUF_SHAPES = {
  // meta-llama/Llama-3.2-3B-Instruct
  'llama-3.2-3b': {
    name: 'Llama 3.2 3B Instruct',
    arch: 'llama',
    hp: { ctx: 131072, hidden: 3072, layers: 28, ff: 8192, heads: 24, kvHeads: 8, headDim: 128 },
    keys: { 'rope.freq_base': 500000, 'attention.layer_norm_rms_epsilon': 1e-5 },
    llamaKeys: true, // LlamaModel writes vocab_size and rope.dimension_count
    headDimKey: true, // config.json has head_dim: attention.key_length / value_length
    tied: true,
    ropeFreqs: { theta: 500000, headDim: 128, factor: 32, low: 1, high: 4, original: 8192 },
    memoryLimit: 2.6e9,
    tokenizer: {
      model: 'gpt2',
      pre: 'llama-bpe',
      vocab: 128256,
      regular: 128000,
      specials: LLAMA3_SPECIALS,
      reserved: (id) => `<|reserved_special_token_${id - 128000}|>`,
      ids: { bos: 128000, eos: 128009 },
      addBos: true,
      template: TEMPLATES.llama3,
    },
  },
  // Qwen/Qwen3-4B
  'qwen3-4b': {
    name: 'Qwen3 4B',
    arch: 'qwen3',
    hp: { ctx: 40960, hidden: 2560, layers: 36, ff: 9728, heads: 32, kvHeads: 8, headDim: 128 },
    keys: { 'rope.freq_base': 1000000, 'attention.layer_norm_rms_epsilon': 1e-6 },
    qkNorm: true,
    headDimKey: true,
    tied: true,
    memoryLimit: 3.1e9,
    tokenizer: {
      model: 'gpt2',
      pre: 'qwen2',
      vocab: 151936,
      regular: 151643,
      specials: QWEN3_SPECIALS,
      top: 151669,
      ids: { bos: 151643, eos: 151645, padding: 151643 },
      addBos: false,
      template: TEMPLATES.chatml,
    },
  },
  // microsoft/Phi-3-mini-4k-instruct
  'phi-3-mini-4k': {
    name: 'Phi 3 Mini 4k Instruct',
    arch: 'phi3',
    hp: { ctx: 4096, hidden: 3072, layers: 32, ff: 8192, heads: 32, kvHeads: 32, headDim: 96 },
    keys: {
      'rope.freq_base': 10000,
      'attention.layer_norm_rms_epsilon': 1e-5,
      'rope.dimension_count': 96,
      'rope.scaling.original_context_length': 4096,
      'attention.sliding_window': 2047,
    },
    fused: true, // attn_qkv and [gate; up] in ffn_up
    tied: false,
    memoryLimit: 2.9e9,
    tokenizer: {
      model: 'llama',
      vocab: 32064,
      specials: PHI3_SPECIALS,
      top: 32011,
      ids: { bos: 1, eos: 32000, unknown: 0, padding: 32000 },
      addBos: false,
      template: TEMPLATES.phi3,
    },
  },
  // Qwen/Qwen3-0.6B (bench/quant_speed.mjs: 1024 wide, real K-quant blocks)
  'qwen3-0.6b': {
    name: 'Qwen3 0.6B',
    arch: 'qwen3',
    hp: { ctx: 40960, hidden: 1024, layers: 28, ff: 3072, heads: 16, kvHeads: 8, headDim: 128 },
    keys: { 'rope.freq_base': 1000000, 'attention.layer_norm_rms_epsilon': 1e-6 },
    qkNorm: true,
    headDimKey: true,
    tied: true,
    memoryLimit: 1.6e9,
    tokenizer: {
      model: 'gpt2',
      pre: 'qwen2',
      vocab: 151936,
      regular: 151643,
      specials: QWEN3_SPECIALS,
      top: 151669,
      ids: { bos: 151643, eos: 151645, padding: 151643 },
      addBos: false,
      template: TEMPLATES.chatml,
    },
  },
  // HuggingFaceTB/SmolLM2-360M-Instruct (bench/quant_speed.mjs: 960 wide, so llama.cpp's Q4_K_M
  // falls back to Q5_0 and Q8_0 for the rows that are not whole 256-blocks). Its 17 special tokens
  // are at ids 0–16 in the real vocabulary; here they follow the regular ones (only speed is measured).
  'smollm2-360m': {
    name: 'SmolLM2 360M Instruct',
    arch: 'llama',
    hp: { ctx: 8192, hidden: 960, layers: 32, ff: 2560, heads: 15, kvHeads: 5, headDim: 64 },
    keys: { 'rope.freq_base': 100000, 'attention.layer_norm_rms_epsilon': 1e-5 },
    llamaKeys: true,
    tied: true,
    memoryLimit: 1.2e9,
    tokenizer: {
      model: 'gpt2',
      pre: 'smollm',
      vocab: 49152,
      regular: 49135,
      specials: { 49135: '<|endoftext|>', 49136: '<|im_start|>', 49137: '<|im_end|>' },
      ids: { bos: 49136, eos: 49137, padding: 49135 },
      addBos: false,
      template: TEMPLATES.chatml,
    },
  },
  // HuggingFaceTB/SmolLM3-3B
  'smollm3-3b': {
    name: 'SmolLM3 3B',
    arch: 'smollm3',
    hp: { ctx: 65536, hidden: 2048, layers: 36, ff: 11008, heads: 16, kvHeads: 4, headDim: 128 },
    keys: { 'rope.freq_base': 5000000, 'attention.layer_norm_rms_epsilon': 1e-6 },
    llamaKeys: true,
    tied: true,
    memoryLimit: 2.5e9,
    tokenizer: {
      model: 'gpt2',
      pre: 'llama-bpe',
      vocab: 128256,
      regular: 128000,
      specials: SMOLLM3_SPECIALS,
      reserved: (id) => `<|reserved_special_token_${id - 128000}|>`,
      ids: { bos: 128000, eos: 128012, padding: 128004 },
      addBos: false,
      template: TEMPLATES.chatml,
    },
  },
};
