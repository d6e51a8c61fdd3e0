// The tokenizer from a GGUF file (src/js/tokenizers/gguf-tokenizer.js). Each fixture's tokenizer.json (all
// byte-level BPE) is turned into GGUF metadata as llama.cpp's converter writes it, written and read
// back by the GGUF reader, and the tokenizer built from it must encode and decode as the original
// does (SentencePiece vocabs: gguf-spm.test.mjs). Plus the add-BOS/EOS flags, the end-of-generation
// ids and the refusals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { tokenizerFromGGUF } from '../../src/js/tokenizers/gguf-tokenizer.js';
import { makeTokenizer } from '../../src/js/pretrained/files.js';
import { writeGGUF } from './gguf-writer.js';
import { PRETRAINED_DIR, listPretrained } from './fixture.js';

const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, BYTE: 6 };

// Metadata entries [key, type, value] through the GGUF writer and reader (typed arrays as parsed).
async function roundTrip(entries) {
  const { metadata } = await parseGGUF(writeGGUF({ metadata: entries }));
  return metadata;
}

const readJson = (dir, name) => JSON.parse(readFileSync(new URL(`${dir}/${name}`, PRETRAINED_DIR), 'utf8'));

// A byte-level tokenizer.json as llama.cpp's _set_vocab_gpt2 writes it: every id's token (added
// tokens control when special, user-defined otherwise), the merges, a pre-tokenizer name (these
// fixtures split with GPT-2's regex: "gpt-2"), the special ids and the add-BOS flag the
// post-processor implies (gguf-py's SpecialVocab reads it from the TemplateProcessing).
function gpt2Metadata(json, config) {
  const added = new Map(json.added_tokens.map((t) => [t.id, t]));
  const byId = new Map(Object.entries(json.model.vocab).map(([t, id]) => [id, t]));
  for (const t of added.values()) byId.set(t.id, t.content);
  const n = Math.max(...byId.keys()) + 1;
  const tokens = [];
  const types = [];
  for (let id = 0; id < n; id++) {
    tokens.push(byId.get(id) ?? `[PAD${id}]`);
    const a = added.get(id);
    types.push(a ? (a.special ? TYPE.CONTROL : TYPE.USER_DEFINED) : TYPE.NORMAL);
  }
  const merges = json.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
  const idOf = (text) => tokens.indexOf(typeof text === 'object' ? text?.content : text);
  const md = [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', 'gpt-2'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    ['tokenizer.ggml.merges', 'array<string>', merges],
  ];
  if (idOf(config.bos_token) >= 0) md.push(['tokenizer.ggml.bos_token_id', 'uint32', idOf(config.bos_token)]);
  if (idOf(config.eos_token) >= 0) md.push(['tokenizer.ggml.eos_token_id', 'uint32', idOf(config.eos_token)]);
  const post = json.post_processor?.processors?.find((p) => p.type === 'TemplateProcessing');
  md.push(['tokenizer.ggml.add_bos_token', 'bool', Boolean(post?.single?.[0]?.SpecialToken)]);
  return md;
}

const TEXTS = [
  'Hello world',
  'hello there, the sea!',
  '  leading and   inner  spaces  ',
  'lines\n\nand\ttabs \n',
  "it's we're they'll I'd",
  'digits 12345 and 3.14',
  'héllo wörld 世界 🙂 ąčę',
  '',
];

describe('gguf tokenizer: the fixtures (byte-level BPE)', () => {
  for (const dir of listPretrained('tokenizer.json')) {
    it(`${dir}: encode and decode as its tokenizer.json`, async () => {
      const json = readJson(dir, 'tokenizer.json');
      const config = readJson(dir, 'tokenizer_config.json');
      const original = await makeTokenizer(json, config);
      const { tokenizer, tokenizerConfig, eosIds } = tokenizerFromGGUF(
        await roundTrip(gpt2Metadata(json, config)),
      );
      const ours = await makeTokenizer(tokenizer, tokenizerConfig);
      const specials = json.added_tokens.map((t) => t.content);
      const texts = [...TEXTS, `${specials.join(' x ')} tail`, `a${specials[0]}b${specials.at(-1)}`];
      for (const text of texts) {
        for (const add_special_tokens of [true, false]) {
          const want = original.encode(text, { add_special_tokens }).ids;
          assert.deepEqual(
            ours.encode(text, { add_special_tokens }).ids,
            want,
            `${dir} ${JSON.stringify(text)}`,
          );
        }
        const ids = original.encode(text).ids;
        if (ids.length === 0) continue; // the library decodes no empty list
        for (const skip_special_tokens of [true, false]) {
          const opts = { skip_special_tokens, clean_up_tokenization_spaces: false };
          assert.equal(ours.decode(ids, opts), original.decode(ids, opts));
        }
      }
      assert.equal(tokenizerConfig.eos_token, typeof config.eos_token === 'string' ? config.eos_token : null);
      const eosId = tokenizer.model.vocab[config.eos_token] ?? specials.indexOf(config.eos_token) + 94;
      assert.ok(eosIds.includes(eosId), `${dir}: eos ${eosId} in ${eosIds}`);
    });
  }
});

describe('gguf tokenizer: flags, end-of-generation ids, refusals', () => {
  const base = (extra, tokens = ['a', 'b', 'ab']) => [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.merges', 'array<string>', ['a b']],
    ...extra,
  ];

  it('pre-tokenizers: llama-bpe adds BOS and ignores merges; qwen2 and smollm do not add BOS', async () => {
    const tokens = ['a', 'b', 'ab', '<|begin_of_text|>', '<|eot_id|>', '<|end_of_text|>'];
    const md = (pre, extra = []) =>
      base(
        [['tokenizer.ggml.pre', 'string', pre], ['tokenizer.ggml.bos_token_id', 'uint32', 3], ...extra],
        tokens,
      );
    const llama3 = tokenizerFromGGUF(
      await roundTrip(md('llama-bpe', [['tokenizer.ggml.eos_token_id', 'uint32', 5]])),
    );
    assert.equal(llama3.tokenizerConfig.add_bos_token, true);
    assert.equal(llama3.tokenizer.model.ignore_merges, true);
    assert.deepEqual(llama3.eosIds, [4, 5]);
    const tok = await makeTokenizer(llama3.tokenizer, llama3.tokenizerConfig);
    assert.deepEqual(tok.encode('ab').ids, [3, 2]);
    for (const pre of ['qwen2', 'smollm', 'olmo', 'default', 'phi-2', 'stablelm2']) {
      const { tokenizerConfig, tokenizer } = tokenizerFromGGUF(await roundTrip(md(pre)));
      assert.equal(tokenizerConfig.add_bos_token, false, pre);
      assert.equal(tokenizer.post_processor, null, pre);
    }
    const set = tokenizerFromGGUF(
      await roundTrip(md('qwen2', [['tokenizer.ggml.add_bos_token', 'bool', true]])),
    );
    assert.equal(set.tokenizerConfig.add_bos_token, true);
  });

  it("end-of-generation: llama.cpp's texts, eos/eot/eom ids, FIM tokens, and its workarounds", async () => {
    const tokens = ['<|im_end|>', 'x', '<|endoftext|>', '<|fim_pad|>', '<end_of_turn>', 'y', '<|end|>'];
    const md = base(
      [
        ['tokenizer.ggml.pre', 'string', 'qwen2'],
        ['tokenizer.ggml.eos_token_id', 'uint32', 1],
        ['tokenizer.ggml.eot_token_id', 'uint32', 5],
        ['tokenizer.ggml.eom_token_id', 'uint32', 99], // out of range: ignored, as llama.cpp does
      ],
      tokens,
    );
    assert.deepEqual(tokenizerFromGGUF(await roundTrip(md)).eosIds, [0, 1, 2, 3, 4, 5, 6]);
    const harmony = base(
      [['tokenizer.ggml.pre', 'string', 'gpt-2']],
      ['<|end|>', '<|return|>', '<|call|>', 'z'],
    );
    assert.deepEqual(tokenizerFromGGUF(await roundTrip(harmony)).eosIds, [1, 2]); // gpt2's default eos 11 is out of range
  });

  it("llama.cpp's control tokens by text, and Phi-3's stripped spaces after special tokens", async () => {
    const tokens = ['a', 'b', 'ab', '<|im_end|>', '<|user|>', '\u010a']; // Ċ: "\n" byte-level
    const types = [1, 1, 1, 1, 4, 1]; // <|im_end|> typed normal: still a control token
    const md = (name) =>
      base(
        [
          ['general.name', 'string', name],
          ['tokenizer.ggml.pre', 'string', 'gpt-2'],
          ['tokenizer.ggml.token_type', 'array<int32>', types],
        ],
        tokens,
      );
    const plain = tokenizerFromGGUF(await roundTrip(md('Tiny')));
    assert.deepEqual(
      plain.tokenizer.added_tokens.map((t) => [t.content, t.special, t.rstrip]),
      [
        ['<|im_end|>', true, false],
        ['<|user|>', false, false],
      ],
    );
    const tok = await makeTokenizer(plain.tokenizer, plain.tokenizerConfig);
    assert.deepEqual(tok.encode('ab<|im_end|>').ids, [2, 3]);
    assert.deepEqual(tok.encode('<|user|>\nab').ids, [4, 5, 2]);
    const phi3 = tokenizerFromGGUF(await roundTrip(md('Phi-3 Mini 4k Instruct')));
    const phiTok = await makeTokenizer(phi3.tokenizer, phi3.tokenizerConfig);
    assert.deepEqual(phiTok.encode('<|user|>\nab').ids, [4, 2]);
  });

  it('refuses an unknown model or pre-tokenizer by name, and a broken vocab', async () => {
    const refused = async (md, pattern) => {
      const metadata = await roundTrip(md);
      assert.throws(
        () => tokenizerFromGGUF(metadata),
        (e) => e.name === 'AttentionError' && e.code === 'INVALID_ARGUMENT' && pattern.test(e.message),
      );
    };
    await refused(
      base([]).map((e) => (e[0] === 'tokenizer.ggml.model' ? [e[0], e[1], 'bert'] : e)),
      /model "bert"/,
    );
    await refused(
      base([['tokenizer.ggml.pre', 'string', 'deepseek-coder']]),
      /pre "deepseek-coder" is not supported/,
    );
    await refused(base([['tokenizer.ggml.pre', 'string', 'gpt-2']], ['a', 'b', 'a']), /duplicate token/);
    await refused(
      base([], []).filter((e) => e[0] !== 'tokenizer.ggml.tokens'),
      /tokens/,
    );
    await refused(
      [
        ['tokenizer.ggml.model', 'string', 'gpt2'],
        ['tokenizer.ggml.tokens', 'array<string>', ['a']],
      ],
      /merges/,
    );
    const noBos = [
      ['tokenizer.ggml.model', 'string', 'llama'],
      ['tokenizer.ggml.tokens', 'array<string>', ['<unk>']], // the default BOS id 1 is out of range
    ];
    await refused(noBos, /add_bos_token is true, but tokenizer.ggml.bos_token_id is not set/);
    await refused(
      [...base([]), ['tokenizer.ggml.scores', 'array<float32>', [0]]],
      /scores must be an array of at least 3/,
    );
    await refused(
      [...base([]), ['tokenizer.ggml.add_bos_token', 'string', 'yes']],
      /add_bos_token must be a bool/,
    );
    assert.throws(() => tokenizerFromGGUF(null), /metadata must be an object/);
  });
});
