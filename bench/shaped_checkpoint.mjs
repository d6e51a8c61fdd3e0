// Checkpoints of a real model's shape with seeded random BF16 weights, written at run time (no model
// hub is reachable; never committed; cached under bench/.cache/): the SmolLM2-360M check of
// `npm test` and `npm run bench:shapes` load them to prove a family fits its stated memoryLimit.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

/**
 * Hugging Face tensor names and shapes of a Llama-family config, sorted by name as safetensors
 * writers do: Llama/SmolLM2, Qwen3 (per-head q/k norms), OLMo 2 (post-norms, q/k norms over all heads)
 * and Gemma 3 (four norms per block, per-head q/k norms).
 */
export function llamaFamilyTensors(c) {
  const E = c.hidden_size,
    I = c.intermediate_size,
    H = c.num_attention_heads,
    d = c.head_dim ?? E / H;
  const qk = H * d,
    kv = c.num_key_value_heads * d,
    type = c.model_type;
  const list = [
    ['model.embed_tokens.weight', [c.vocab_size, E]],
    ['model.norm.weight', [E]],
  ];
  if (!c.tie_word_embeddings) list.push(['lm_head.weight', [c.vocab_size, E]]);
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    const norms =
      type === 'olmo2'
        ? ['post_attention_layernorm', 'post_feedforward_layernorm']
        : type === 'gemma3_text'
          ? [
              'input_layernorm',
              'post_attention_layernorm',
              'pre_feedforward_layernorm',
              'post_feedforward_layernorm',
            ]
          : ['input_layernorm', 'post_attention_layernorm'];
    for (const n of norms) list.push([`${p}${n}.weight`, [E]]);
    list.push(
      [`${p}self_attn.q_proj.weight`, [qk, E]],
      [`${p}self_attn.k_proj.weight`, [kv, E]],
      [`${p}self_attn.v_proj.weight`, [kv, E]],
      [`${p}self_attn.o_proj.weight`, [E, qk]],
      [`${p}mlp.gate_proj.weight`, [I, E]],
      [`${p}mlp.up_proj.weight`, [I, E]],
      [`${p}mlp.down_proj.weight`, [E, I]],
    );
    if (type === 'qwen3' || type === 'gemma3_text')
      list.push([`${p}self_attn.q_norm.weight`, [d]], [`${p}self_attn.k_norm.weight`, [d]]);
    if (type === 'olmo2')
      list.push([`${p}self_attn.q_norm.weight`, [qk]], [`${p}self_attn.k_norm.weight`, [kv]]);
  }
  return list.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

// The header bytes (8-byte length + JSON padded with spaces to 8) and the data size.
function header(tensors) {
  const h = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, shape] of tensors) {
    const bytes = 2 * shape.reduce((a, b) => a * b, 1);
    h[name] = { dtype: 'BF16', shape, data_offsets: [at, at + bytes] };
    at += bytes;
  }
  let json = Buffer.from(JSON.stringify(h));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  return { head: Buffer.concat([prefix, json]), dataBytes: at };
}

/**
 * Writes dir/config.json and dir/model.safetensors (BF16, streamed 16 MiB at a time: norms 1.0 (Gemma 0),
 * matrices uniform with std ≈ 0.02 from a seeded LCG) unless a file with the same header is there.
 */
export function writeShapedCheckpoint(dir, config, tensors = llamaFamilyTensors(config), seed0 = 20261124) {
  const { head, dataBytes } = header(tensors);
  const file = path.join(dir, 'model.safetensors');
  const size = head.length + dataBytes;
  if (existsSync(file) && statSync(file).size === size) {
    const fd = openSync(file, 'r');
    const got = Buffer.alloc(head.length);
    readSync(fd, got, 0, head.length, 0);
    closeSync(fd);
    if (got.equals(head)) return { file, size, written: false };
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const fd = openSync(file, 'w');
  writeSync(fd, head);
  let seed = seed0;
  const normValue = config.model_type === 'gemma3_text' ? 0 : 1; // Gemma's RMSNorm scales by (1 + w)
  const count = 8 << 20; // values per chunk (16 MiB of BF16)
  const values = new Float32Array(count),
    bits = new Uint32Array(values.buffer),
    out = new Uint16Array(count);
  for (const [name, shape] of tensors) {
    let left = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith('norm.weight');
    while (left > 0) {
      const n = Math.min(left, count);
      for (let i = 0; i < n; i++) {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        values[i] = norm ? normValue : ((seed >>> 8) / 16777216 - 0.5) * 0.0693;
      }
      for (let i = 0; i < n; i++) out[i] = bits[i] >>> 16; // BF16: the top half (little-endian host)
      writeSync(fd, out, 0, 2 * n);
      left -= n;
    }
  }
  closeSync(fd);
  return { file, size, written: true };
}
