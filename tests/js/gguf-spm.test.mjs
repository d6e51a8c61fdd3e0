// llama.cpp's SentencePiece tokenizer for a GGUF "llama" vocab (src/js/tokenizers/gguf-spm.js, built by
// tokenizerFromGGUF). A hand-made vocab (scores chosen so the order of merges matters, characters
// that are no piece, equal scores) written and read back by the GGUF reader, checked against a
// direct score-based merge written here (llama.cpp's llm_tokenizer_spm), and decoded back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGGUF } from '../../src/js/formats/gguf.js';
import { tokenizerFromGGUF } from '../../src/js/tokenizers/gguf-tokenizer.js';
import { writeGGUF } from './gguf-writer.js';

const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, BYTE: 6 };

// The tokenizer of metadata entries [key, type, value] written and read back (llama.cpp's
// SentencePiece tokenizer itself: no tokenizer.json), and its config.
async function spm(entries) {
  const { tokenizer, tokenizerConfig, eosIds } = tokenizerFromGGUF(
    (await parseGGUF(writeGGUF({ metadata: entries }))).metadata,
  );
  assert.equal(typeof tokenizer.encode, 'function');
  return { tok: tokenizer, tokenizerConfig, eosIds };
}

// A SentencePiece vocab: <unk>, <s>, </s>, the 256 byte tokens, pieces with scores, a user-defined
// and a control token. The scores make greedy-by-score differ from left-to-right or longest match;
// `▁I` and `▁Iz` are pieces while `I` and `z` are not (llama.cpp joins the characters into the
// piece); `ea` and `ar` score the same (llama.cpp merges the leftmost pair first).
const PIECES = [
  ['\u2581', -1],
  ['h', -2],
  ['e', -3],
  ['l', -4],
  ['o', -5],
  ['w', -6],
  ['r', -7],
  ['d', -8],
  ['a', -9],
  ['世', -10],
  ['el', -11],
  ['\u2581h', -30],
  ['he', -12],
  ['ll', -13],
  ['lo', -14],
  ['hel', -40],
  ['ell', -15],
  ['ello', -16],
  ['hello', -17],
  ['\u2581hello', -18],
  ['\u2581w', -19],
  ['or', -20],
  ['wor', -21],
  ['ld', -22],
  ['orld', -23],
  ['world', -24],
  ['\u2581world', -25],
  ['\u2581\u2581', -26],
  ['\u2581\u2581\u2581\u2581', -27],
  ['ad', -28],
  ['dd', -29],
  ['add', -31],
  ['\u2581a', -32],
  ['\u2581I', -33],
  ['\u2581Iz', -34],
  ['ea', -41],
  ['ar', -41],
];
const SPECIALS = [
  ['<|user|>', TYPE.USER_DEFINED],
  ['<|im_end|>', TYPE.CONTROL],
];

function spmVocab() {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [TYPE.UNKNOWN, TYPE.CONTROL, TYPE.CONTROL];
  const scores = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TYPE.BYTE);
    scores.push(0);
  }
  for (const [piece, score] of PIECES) (tokens.push(piece), types.push(TYPE.NORMAL), scores.push(score));
  for (const [piece, type] of SPECIALS) (tokens.push(piece), types.push(type), scores.push(0));
  return { tokens, types, scores };
}

function spmMetadata(extra = []) {
  const { tokens, types, scores } = spmVocab();
  return [
    ['tokenizer.ggml.model', 'string', 'llama'],
    ['tokenizer.ggml.tokens', 'array<string>', tokens],
    ['tokenizer.ggml.scores', 'array<float32>', scores],
    ['tokenizer.ggml.token_type', 'array<int32>', types],
    ['tokenizer.ggml.bos_token_id', 'uint32', 1],
    ['tokenizer.ggml.eos_token_id', 'uint32', 2],
    ['tokenizer.ggml.unknown_token_id', 'uint32', 0],
    ...extra,
  ];
}

// llama.cpp's SPM tokenize, written directly: special tokens split out first (longest first), a
// space before each text fragment that follows a special token or starts the text, spaces → ▁,
// then repeatedly merge the adjacent pair whose joined piece is in the vocab with the highest
// score (ties: the leftmost); a leftover symbol not in the vocab becomes its UTF-8 bytes.
function spmReference(text, { addBos = true, addSpacePrefix = true } = {}) {
  const { tokens, types, scores } = spmVocab();
  const id = new Map(tokens.map((t, i) => [t, i]));
  const specials = tokens.filter(
    (t, i) => types[i] === TYPE.CONTROL || types[i] === TYPE.USER_DEFINED || types[i] === TYPE.UNKNOWN,
  );
  specials.sort((a, b) => b.length - a.length);
  const out = addBos ? [1] : [];
  let prevSpecial = true;
  let rest = text;
  while (rest.length) {
    let at = rest.length;
    let hit = null;
    for (const s of specials) {
      const i = rest.indexOf(s);
      if (i >= 0 && (i < at || (i === at && s.length > hit.length))) ((at = i), (hit = s));
    }
    if (at > 0) {
      const raw = (addSpacePrefix && prevSpecial ? ' ' : '') + rest.slice(0, at);
      const syms = Array.from(raw.replaceAll(' ', '\u2581'));
      for (;;) {
        let best = -1;
        for (let i = 0; i + 1 < syms.length; i++) {
          const j = id.get(syms[i] + syms[i + 1]);
          if (j !== undefined && (best < 0 || scores[j] > scores[id.get(syms[best] + syms[best + 1])]))
            best = i;
        }
        if (best < 0) break;
        syms.splice(best, 2, syms[best] + syms[best + 1]);
      }
      for (const s of syms) {
        if (id.has(s)) out.push(id.get(s));
        else for (const b of new TextEncoder().encode(s)) out.push(3 + b);
      }
      prevSpecial = false;
    }
    if (hit === null) break;
    out.push(id.get(hit));
    prevSpecial = true;
    rest = rest.slice(at + hit.length);
  }
  return out;
}

const SPM_TEXTS = [
  'hello world',
  'hello',
  'helloworld hello',
  'held wore hell',
  '  two  spaces    four',
  'add dad ladder',
  '世界 hello 世',
  'bytes: Zq é 🙂\n',
  'hi<|user|>hello<|im_end|> world',
  '<s>hello</s>',
  'x',
  'I',
  'hello I, Iz Izz zI',
  'ear hear rear eare',
];

describe('gguf tokenizer: SentencePiece ("llama"), llama.cpp\'s algorithm', () => {
  it('encodes as the direct score-based merge, and decodes back', async () => {
    const { tok } = await spm(spmMetadata());
    for (const text of SPM_TEXTS) {
      const ids = tok.encode(text).ids;
      assert.deepEqual(ids, spmReference(text), JSON.stringify(text));
      const plain = tok.encode(text, { add_special_tokens: false }).ids;
      assert.deepEqual(plain, spmReference(text, { addBos: false }));
      if (text.includes('<')) continue;
      // the ▁ prepended is stripped again from the first piece; BOS written as its text
      assert.equal(tok.decode(plain, { skip_special_tokens: true }), text);
      assert.equal(tok.decode(ids), `<s> ${text}`);
    }
  });

  it('a character that is no piece joins its neighbour into a piece; equal scores: leftmost first', async () => {
    const { tok } = await spm(spmMetadata());
    const { tokens } = spmVocab();
    const id = (t) => tokens.indexOf(t);
    const enc = (text) => tok.encode(text, { add_special_tokens: false }).ids;
    assert.ok(id('I') < 0 && id('z') < 0 && id('\u2581I') > 0);
    assert.deepEqual(enc('I'), [id('\u2581I')]); // not ▁ + <0x49>
    assert.deepEqual(enc('Iz'), [id('\u2581Iz')]);
    assert.deepEqual(enc('Izz'), [id('\u2581Iz'), 3 + 0x7a]);
    assert.deepEqual(enc('ear'), [id('\u2581'), id('ea'), id('r')]); // ea and ar tie: ea, the leftmost
    assert.deepEqual(tok.tokenize('hello I'), ['\u2581hello', '\u2581I']);
    // token by token, as the library's tokenStrings shows them
    assert.equal(tok.decode([id('\u2581hello')]), 'hello');
    assert.equal(tok.decode([id('\u2581world'), id('\u2581hello')]), 'world hello');
    assert.equal(tok.decode([3 + 0xc3, 3 + 0xa9]), '\u00e9');
    assert.equal(tok.decode([id('<|user|>'), id('</s>')], { skip_special_tokens: true }), '<|user|>');
    assert.equal(tok.decode([id('<|user|>'), id('</s>')]), '<|user|></s>');
    assert.equal(tok.token_to_id('\u2581Iz'), id('\u2581Iz'));
    assert.equal(tok.id_to_token(id('ea')), 'ea');
    assert.throws(() => tok.decode([]), /non-empty/);
  });

  it('random strings over the vocab agree with the direct BPE', async () => {
    const { tok } = await spm(spmMetadata());
    const alphabet = ['h', 'e', 'l', 'o', 'w', 'r', 'd', 'a', ' ', ' ', 'z', 'I', 'ß', '世', '<|user|>'];
    let seed = 12345 >>> 0;
    const rand = (n) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), (seed >>> 8) % n);
    for (let k = 0; k < 300; k++) {
      const text = Array.from({ length: 1 + rand(14) }, () => alphabet[rand(alphabet.length)]).join('');
      assert.deepEqual(tok.encode(text).ids, spmReference(text), JSON.stringify(text));
    }
  });

  it('tokenizer.ggml.add_space_prefix false and add_bos_token false', async () => {
    const md = spmMetadata([
      ['tokenizer.ggml.add_space_prefix', 'bool', false],
      ['tokenizer.ggml.add_bos_token', 'bool', false],
    ]);
    const { tok, tokenizerConfig } = await spm(md);
    assert.equal(tokenizerConfig.add_bos_token, false);
    for (const text of ['hello world', ' hello', 'add<|user|>add'])
      assert.deepEqual(tok.encode(text).ids, spmReference(text, { addBos: false, addSpacePrefix: false }));
  });

  it('the config: tokens by name, add-BOS by default, add-EOS when set, the chat template', async () => {
    const template = '{% for m in messages %}{{ bos_token }}{{ m.content }}{% endfor %}';
    const md = spmMetadata([
      ['tokenizer.ggml.add_eos_token', 'bool', true],
      ['tokenizer.chat_template', 'string', template],
    ]);
    const { tok, tokenizerConfig, eosIds } = await spm(md);
    assert.deepEqual(
      { ...tokenizerConfig },
      {
        chat_template: template,
        bos_token: '<s>',
        eos_token: '</s>',
        unk_token: '<unk>',
        pad_token: null,
        add_bos_token: true,
        add_eos_token: true,
        clean_up_tokenization_spaces: false,
      },
    );
    assert.deepEqual(tok.encode('hello').ids, [...spmReference('hello'), 2]);
    const imEnd = spmVocab().tokens.indexOf('<|im_end|>');
    assert.deepEqual(eosIds, [2, imEnd]); // </s> (eos, and by text) and <|im_end|> by text
  });

  it("special tokens side by side, an empty text, Phi-3's spaces after special tokens dropped", async () => {
    const plain = await spm(spmMetadata());
    // two special tokens with no text between; an empty text is BOS alone
    assert.deepEqual(plain.tok.encode('<s></s>', { add_special_tokens: false }).ids, [1, 2]);
    assert.deepEqual(plain.tok.encode('').ids, [1]);
    const named = (name) => spm(spmMetadata([['general.name', 'string', name]]));
    const text = '<|user|>\n hello<|im_end|> world';
    const ids = async (name) => (await named(name)).tok.encode(text).ids;
    assert.deepEqual(await ids('Tiny'), spmReference(text));
    assert.deepEqual(await ids('Phi-3 mini'), spmReference('<|user|>hello<|im_end|>world'));
  });
});
