// GPT-2 (transformers' GPT2LMHeadModel): learned positions, LayerNorm, Conv1D weights stored
// (in, out), tanh GELU, tied head.
import { describe } from '../options.js';
import { PRETRAINED_ARCH } from '../constants.js';
import { invalid } from './shared.js';
import { GGUF_TENSORS } from './gguf-layout.js';

export default {
  architecture: 'GPT2LMHeadModel',
  name: 'GPT-2',
  keys: {
    modelType: 'gpt2',
    implemented: {
      vocab_size: 50257,
      n_positions: 1024,
      n_embd: 768,
      n_layer: 12,
      n_head: 12,
      n_inner: null,
      activation_function: 'gelu_new',
      layer_norm_epsilon: 1e-5,
    },
    inert: [
      'resid_pdrop',
      'embd_pdrop',
      'attn_pdrop',
      'summary_type',
      'summary_use_proj',
      'summary_activation',
      'summary_proj_to_labels',
      'summary_first_dropout',
      'n_ctx',
      'reorder_and_upcast_attn',
    ],
    defaultOnly: {
      scale_attn_weights: true,
      scale_attn_by_inverse_layer_idx: false,
      tie_word_embeddings: true,
    },
  },
  core: gpt2Core,
  // GGUF: llama.cpp's converter writes the Conv1D weights transposed to (out, in) and the head as
  // its own copy of the embeddings (output.weight).
  gguf: {
    names: ['gpt2'],
    keys: {
      context_length: 'n_positions',
      embedding_length: 'n_embd',
      block_count: 'n_layer',
      feed_forward_length: 'n_inner',
      'attention.head_count': 'n_head',
      'attention.layer_norm_epsilon': 'layer_norm_epsilon',
      vocab_size: 'vocab_size',
    },
    inert: [],
    tensors: GGUF_TENSORS,
    permutedQK: false,
    normsPlusOne: false,
    ropeFreqs: false,
    config: () => ({}),
  },
  // Checkpoints name the tensors with or without "transformer."; Conv1D weights are (in, out).
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes: 'learned positions, LayerNorm, Conv1D weights (transposed on load), tanh GELU, tied head',
    fixtures: '`gpt2-tiny`',
  },
  tensors: {
    prefixes: ['', 'transformer.'],
    layer: 'h.',
    global: {
      embed: 'wte.weight',
      positions: 'wpe.weight',
      final_norm: 'ln_f.weight',
      final_norm_bias: 'ln_f.bias',
      unembed: 'lm_head.weight',
    },
    perLayer: {
      attn_norm: 'ln_1.weight',
      attn_norm_bias: 'ln_1.bias',
      mlp_norm: 'ln_2.weight',
      mlp_norm_bias: 'ln_2.bias',
      qkv: 'attn.c_attn.weight',
      qkv_bias: 'attn.c_attn.bias',
      o: 'attn.c_proj.weight',
      o_bias: 'attn.c_proj.bias',
      up: 'mlp.c_fc.weight',
      up_bias: 'mlp.c_fc.bias',
      down: 'mlp.c_proj.weight',
      down_bias: 'mlp.c_proj.bias',
    },
    transposed: ['qkv', 'o', 'up', 'down'],
  },
};

function gpt2Core(config, r) {
  const act = r.get('activation_function');
  if (act !== 'gelu_new')
    throw invalid(
      `config.json: GPT-2 activation_function ${describe(act)} is not supported (only "gelu_new", the tanh GELU)`,
    );
  const hidden = r.int('n_embd'),
    heads = r.int('n_head');
  return {
    arch: PRETRAINED_ARCH.GPT2,
    vocabSize: r.int('vocab_size'),
    hidden,
    layers: r.int('n_layer'),
    heads,
    kvHeads: heads,
    headDim: Math.floor(hidden / heads),
    intermediate: r.int('n_inner', r.get('n_inner') ?? 4 * hidden),
    maxPositions: r.int('n_positions'),
    normEps: r.num('layer_norm_epsilon'),
    ropeTheta: 10000,
    qkvBias: false,
    tieEmbeddings: true,
  };
}
