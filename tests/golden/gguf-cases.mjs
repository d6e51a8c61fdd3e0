// The GGUF fixtures checked against llama.cpp: their files (written by make_gguf_fixtures.mjs), the
// strings tokenized, the prompt run at every position, the chat rendered. Shared by
// check_with_llamacpp.mjs (which runs llama.cpp) and tests/js/gguf-llamacpp.test.mjs (which holds
// the library to llama.cpp's committed numbers).
export const GGUF_DIR = new URL('./gguf/', import.meta.url);
export const EXPECTED_FILE = new URL('llamacpp-expected.json', GGUF_DIR);

// The byte-level fixtures' vocab has ASCII letters, digits, `!',-.?`, space and newline only (a
// byte missing from a byte-level vocab is dropped by llama.cpp): the strings keep to those.
const ASCII_TEXTS = [
  'Hello world',
  'hello there, the sea!',
  '  leading and   inner  spaces  ',
  'lines\n\nand more \n',
  "it's we're they'll I'd",
  'digits 12345 and 3.14159',
  'He said: hello, hello world.',
];

// The SentencePiece fixture has the 256 byte tokens: anything goes (byte fallback), characters
// that are no piece (é, 世, \t, Z, B, Q, U) included.
const SPM_TEXTS = [
  ...ASCII_TEXTS,
  'héllo wörld 世界 🙂',
  'the world<|end|> and <|user|>hi',
  'Hello\n\tworld  ',
  'Zoe: I quit, Bob? QUIZ xyz',
];

const CHAT = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello there' },
  { role: 'assistant', content: 'hello world' },
  { role: 'user', content: 'the sea?' },
];

// ChatML (Qwen's), Llama 3's header form, and a Llama 2-like one that writes bos_token.
export const TEMPLATES = {
  chatml:
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>' + '\\n' }}" +
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
  llama3:
    "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m.role + '<|end_header_id|>\\n\\n' + " +
    "m.content | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}" +
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
  spm:
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}{{ '<|user|>' + m.content + '<|end|>' }}" +
    "{% elif m.role == 'assistant' %}{{ ' ' + m.content + eos_token }}{% else %}{{ '[' + m.content + ']' }}" +
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ ' ' }}{% endif %}",
};

/**
 * Each fixture: its file; `source` (make_gguf_fixtures.mjs: a tests/golden/pretrained/ checkpoint
 * with a quantization and a tokenizer.ggml.pre, or 'tiny256' for the K-quant model); the strings
 * tokenized; the prompt (tokenized by llama.cpp, run at every position); greedy steps; the chat.
 * `tolerance`: the largest |Δp| allowed against llama.cpp's probabilities in npm test (docs/gguf.md,
 * "Agreement with llama.cpp": set from the measured agreement with headroom).
 */
export const CASES = [
  {
    file: 'llama-tiny.f32.gguf',
    source: { model: 'llama-tiny', type: 'F32', pre: 'llama-bpe', template: 'llama3' },
    texts: ASCII_TEXTS,
    prompt: 'Hello world, the sea. hello there',
    tolerance: 2e-3, // measured 8.5e-4 (F16 KV cache; 1.6e-6 with an F32 one)
  },
  {
    file: 'llama-tiny.q8_0.gguf',
    source: { model: 'llama-tiny', type: 'F32', quant: 'Q8_0', pre: 'llama-bpe', template: 'llama3' },
    texts: ASCII_TEXTS,
    prompt: 'Hello world, the sea. hello there',
    tolerance: 5e-2, // measured 2.7e-2 (8-bit activations)
  },
  {
    file: 'qwen2-tiny.f32.gguf',
    source: { model: 'qwen2-tiny', type: 'F32', pre: 'qwen2', template: 'chatml' },
    texts: ASCII_TEXTS,
    prompt: 'the sea, the world. Hello there!',
    tolerance: 1e-3, // measured 3.4e-4 (F16 KV cache; 3.2e-7 with an F32 one)
  },
  {
    file: 'qwen2-tiny.q4_0.gguf',
    source: { model: 'qwen2-tiny', type: 'F32', quant: 'Q4_0', pre: 'qwen2', template: 'chatml' },
    texts: ASCII_TEXTS,
    prompt: 'the sea, the world. Hello there!',
    tolerance: 5e-2, // measured 3.1e-2 (8-bit activations)
  },
  {
    file: 'tiny256-kquants.gguf',
    source: { model: 'tiny256', template: 'spm' },
    texts: SPM_TEXTS,
    prompt: 'Hello world, the sea and the world',
    tolerance: 8e-2, // measured 4.2e-2 (8-bit activations on Q2_K…Q6_K random blocks)
  },
].map((c) => ({ greedySteps: 6, chat: CHAT, ...c }));

/**
 * Greedy ids against llama.cpp's, step by step, while llama.cpp's choice is clear: a step whose ids
 * differ passes only if llama.cpp's top two were within 2 × tolerance of each other (either could
 * win under the rounding allowed), and the steps after it are not compared (their inputs differ).
 * Returns { ok, equal (steps equal), text }.
 */
export function greedyAgreement(llama, top2, ours, tolerance) {
  for (let s = 0; s < llama.length; s++) {
    if (llama[s] === ours[s]) continue;
    const margin = top2[s][0][1] - top2[s][1][1];
    const ok = margin < 2 * tolerance;
    const text = `equal for ${s} of ${llama.length}, then ${ours[s]} for ${llama[s]} (margin ${margin.toFixed(3)})`;
    return { ok, equal: s, text };
  }
  return { ok: true, equal: llama.length, text: 'equal' };
}
