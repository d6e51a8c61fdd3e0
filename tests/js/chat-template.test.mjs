// applyChatTemplate renders a checkpoint's chat template with the vendored
// @huggingface/jinja exactly as transformers' apply_chat_template writes it (the ChatML shape of
// Qwen2's template and the Llama-2 shape, expected texts written by hand from the templates), then
// tokenizes it without adding special tokens again; templates that loop or recurse are TOO_LARGE and
// the module stays usable; files we do not read (GGUF, pytorch_model.bin) are named.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, loadPretrained, AttentionError } from '../../src/js/index.js';

await init();

const DIR = new URL('../golden/pretrained/', import.meta.url);
const read = (model, file) => readFileSync(new URL(`${model}/${file}`, DIR));
const json = (model, file) => JSON.parse(read(model, file).toString('utf8'));

// Qwen2-Instruct's chat template (ChatML), as its tokenizer_config.json holds it.
const CHATML =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
// Llama-2-chat's template.
const LLAMA2 =
  "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

// qwen3-tiny's tokenizer with ChatML's two special tokens added (ids past the tiny vocabulary: the
// ids are compared, never run).
function chatmlTokenizer() {
  const tok = json('qwen3-tiny', 'tokenizer.json');
  for (const [id, content] of [
    [96, '<|im_start|>'],
    [97, '<|im_end|>'],
  ]) {
    tok.added_tokens.push({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    });
  }
  return tok;
}

async function model(name, tokenizer, tokenizerConfig, extra = {}) {
  return loadPretrained({
    config: json(name, 'config.json'),
    weights: read(name, 'model.safetensors'),
    tokenizer,
    tokenizerConfig,
    ...extra,
  });
}

// The ids of `text` split at the special tokens by hand: each special token one id, each piece
// between them encoded alone (what the tokenizer must do with the whole text).
function idsBySpecials(m, text, specials) {
  const out = [];
  const re = new RegExp(
    `(${Object.keys(specials)
      .map((s) => s.replace(/[|[\]\\/]/g, '\\$&'))
      .join('|')})`,
  );
  for (const piece of text.split(re)) {
    if (piece === '') continue;
    if (Object.hasOwn(specials, piece)) out.push(specials[piece]);
    else out.push(...m.encode(piece, { addSpecialTokens: false }));
  }
  return out;
}

describe('chat templates', () => {
  it('ChatML (Qwen2): system message and generation prompt, text and ids as transformers writes them', async () => {
    const m = await model('qwen3-tiny', chatmlTokenizer(), {
      ...json('qwen3-tiny', 'tokenizer_config.json'),
      chat_template: CHATML,
    });
    const messages = [
      { role: 'system', content: 'You are a bot.' },
      { role: 'user', content: 'Hi there' },
    ];
    const text = m.applyChatTemplate(messages, { addGenerationPrompt: true, tokenize: false });
    assert.equal(
      text,
      '<|im_start|>system\nYou are a bot.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n',
    );
    const ids = Array.from(m.applyChatTemplate(messages, { addGenerationPrompt: true }));
    assert.deepEqual(ids, idsBySpecials(m, text, { '<|im_start|>': 96, '<|im_end|>': 97 }));
    assert.equal(ids.filter((id) => id === 96).length, 3);
    // Without a system message the template writes its default one; no generation prompt.
    assert.equal(
      m.applyChatTemplate([{ role: 'user', content: 'a' }], { tokenize: false }),
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\na<|im_end|>\n',
    );
    m.dispose();
  });

  it('Llama-2: BOS written by the template (not added again), system folded into the first turn, roles checked', async () => {
    const m = await model('llama-tiny', json('llama-tiny', 'tokenizer.json'), {
      ...json('llama-tiny', 'tokenizer_config.json'),
      chat_template: LLAMA2,
    });
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: ' Hello ' },
      { role: 'user', content: 'Bye' },
    ];
    const text = m.applyChatTemplate(messages, { tokenize: false });
    assert.equal(
      text,
      '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Bye [/INST]',
    );
    const ids = Array.from(m.applyChatTemplate(messages));
    assert.deepEqual(ids, idsBySpecials(m, text, { '<s>': 94, '</s>': 95 }));
    assert.equal(ids[0], 94);
    assert.notEqual(ids[1], 94, 'no second BOS');
    assert.throws(
      () => m.applyChatTemplate([{ role: 'assistant', content: 'x' }]),
      (e) => e.code === 'INVALID_ARGUMENT' && /roles must alternate/.test(e.message),
    );
    m.dispose();
  });

  it('named templates, chat_template.jinja winning, strftime_now on a fixed date, bad calls refused', async () => {
    const cfg = {
      ...json('llama-tiny', 'tokenizer_config.json'),
      chat_template: [
        { name: 'default', template: 'D{{ messages[0].content }}' },
        { name: 'tool_use', template: 'T{{ messages|length }}' },
      ],
    };
    const m = await model('llama-tiny', json('llama-tiny', 'tokenizer.json'), cfg);
    const msgs = [{ role: 'user', content: 'x' }];
    assert.deepEqual(m.chatTemplateNames, ['default', 'tool_use']);
    assert.equal(m.applyChatTemplate(msgs, { tokenize: false }), 'Dx');
    assert.equal(m.applyChatTemplate(msgs, { tokenize: false, template: 'tool_use' }), 'T1');
    assert.throws(
      () => m.applyChatTemplate(msgs, { template: 'nope' }),
      /no chat template named "nope"; this model has: default, tool_use/,
    );
    for (const bad of [[], [{ role: 'user' }], 'hi', [{ role: 1, content: 'x' }]])
      assert.throws(() => m.applyChatTemplate(bad), AttentionError);
    m.dispose();
    const file = "{{ strftime_now('%d %b %Y') }}|{{ bos_token }}";
    const f = await model('llama-tiny', json('llama-tiny', 'tokenizer.json'), cfg, { chatTemplate: file });
    assert.equal(
      f.applyChatTemplate(msgs, { tokenize: false, date: new Date(2026, 10, 25) }),
      '25 Nov 2026|<s>',
    );
    f.dispose();
    const none = await model(
      'llama-tiny',
      json('llama-tiny', 'tokenizer.json'),
      json('llama-tiny', 'tokenizer_config.json'),
    );
    assert.throws(() => none.applyChatTemplate(msgs), /has no chat template/);
    none.dispose();
  });

  it('templates that loop, nest loops, grow, recurse or do not parse are refused by the render bounds; the module stays usable', async () => {
    const hostile = [
      [
        '{% for i in range(1000000000) %}x{% endfor %}',
        'TOO_LARGE',
        /range\(1000000000\), over 100000 elements/,
      ],
      [
        '{% for i in range(90000) %}{% for j in range(90000) %}x{% endfor %}{% endfor %}',
        'TOO_LARGE',
        /ran past its bound/,
      ],
      [
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
        'TOO_LARGE',
        /grew too deep|ran past its bound|characters/,
      ],
      // The engine does not let a macro call itself: refused as a failed template, not a hang.
      ['{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}', 'INVALID_ARGUMENT', /not a function/],
      ['{% for i in range(3 %}', 'INVALID_ARGUMENT', /does not parse/],
    ];
    // Each is stopped by the render's own bound (steps, time, range size, string growth): the error
    // says which, so the test needs no clock of its own.
    for (const [template, code, why] of hostile) {
      const m = await model('llama-tiny', json('llama-tiny', 'tokenizer.json'), {
        ...json('llama-tiny', 'tokenizer_config.json'),
        chat_template: template,
      });
      assert.throws(
        () => m.applyChatTemplate([{ role: 'user', content: 'x' }]),
        (e) => e.code === code && why.test(e.message),
        template,
      );
      assert.equal(m.forward([[1, 2, 3]]).logits.shape[2], 96, 'the model still runs');
      m.dispose();
    }
  });

  it('GGUF and pytorch_model.bin files are named, not misread', async () => {
    const config = json('llama-tiny', 'config.json');
    const gguf = new Uint8Array(64);
    gguf.set([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0]);
    await assert.rejects(loadPretrained({ config, weights: gguf }), /GGUF file/);
    const zip = new Uint8Array(64);
    zip.set([0x50, 0x4b, 0x03, 0x04]);
    await assert.rejects(
      loadPretrained({ config, weights: zip }),
      /pytorch_model\.bin.*convert it to safetensors/,
    );
    const pickle = new Uint8Array(64);
    pickle.set([0x80, 0x02, 0x63, 0x63]);
    await assert.rejects(loadPretrained({ config, weights: pickle }), /pytorch_model\.bin/);
  });
});
