// OLMo 2: Llama with post-norms instead of pre-norms and q/k RMSNorms over all heads.
import { POST_NORM_NAMES, llamaCore, llamaKeys } from './llama-layout.js';
import { QK_NORM } from './shared.js';
import { llamaGGUF } from './gguf-layout.js';

export default {
  architecture: 'Olmo2ForCausalLM',
  name: 'OLMo 2',
  keys: {
    modelType: 'olmo2',
    implemented: llamaKeys({ vocab_size: 50304, rms_norm_eps: 1e-5 }),
    inert: ['attention_dropout'],
    defaultOnly: { attention_bias: false },
  },
  core: llamaCore,
  variant: { qkNorm: QK_NORM.allHeads, preNorms: false, postNorms: true },
  // Its row of the architectures table of docs/checkpoints.md (scripts/config-keys-doc.mjs).
  docs: {
    computes:
      'no pre-norms: `x += post_attention_layernorm(attn(x))`, `x += post_feedforward_layernorm(mlp(x))`; RMSNorm of q and k over all heads (weights (H·d), (H_kv·d)) before RoPE',
    fixtures: '`olmo2-tiny`',
  },
  gguf: llamaGGUF(['olmo2']),
  tensors: POST_NORM_NAMES,
};
