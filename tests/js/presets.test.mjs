// The committed presets (web/presets/, `npm run train-presets`): each ≤ 100 KB, F16 safetensors
// that TinyTransformer.fromSafetensors opens, and every claim its description makes about its heads
// re-measured here with this file's own code on fresh sequences (a task seed the training never
// used; held-out text for the character model). Ablating the reverse preset's mirror head must drop
// its accuracy below 50%.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { init, TinyTransformer, createTask, evaluate, readSafetensorsMetadata } from '../../src/js/index.js';

await init();

const DIR = new URL('../../web/presets/', import.meta.url);
const kMaxBytes = 100 * 1024;
const kTaskAccuracy = 0.9; // sequence accuracy a task preset must keep on fresh sequences
const kAblatedAccuracy = 0.5; // the reverse preset without its mirror head: below this
const kTextLoss = 2.5; // nats per character on held-out text (uniform over ~90 characters: 4.5)
const FRESH_SEED = 2024;

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.safetensors'))
  .sort();

function argmaxKey(w, T, head, row) {
  const base = (head * T + row) * T;
  let best = 0;
  for (let j = 1; j <= row; j++) if (w[base + j] > w[base + best]) best = j;
  return best;
}

/** Fraction of covered rows whose argmax key is the claimed one (the kinds of docs/presets.md). */
function claimFraction(kind, w, T, head, ids, targets, L) {
  let covered = 0,
    hits = 0;
  for (let r = 0; r < T; r++) {
    const scored = targets ? targets[r] !== -100 : true;
    const best = argmaxKey(w, T, head, r);
    let want;
    if (kind === 'previous-token') want = r >= 1 ? r - 1 : null;
    else if (kind === 'previous-token-in-segment') {
      let seg = 1;
      while (seg < T && ids[seg] !== ids[0]) seg++;
      want = r >= 1 && r < seg ? r - 1 : null;
    } else if (kind === 'induction') {
      want = null;
      if (scored)
        for (let p = r - 1; p >= 0; p--)
          if (ids[p] === ids[r]) {
            want = p + 1;
            break;
          }
    } else if (kind === 'mirror') want = r >= L && scored ? 2 * L - 1 - r : null;
    else if (kind === 'offset') want = r >= L && scored ? r - L : null;
    else if (kind === 'same-value')
      want = r >= L && scored ? (best < L && ids[best] === targets[r] ? best : -1) : null;
    else throw new Error(`unknown claim kind ${kind}`);
    if (want === null) continue;
    covered++;
    if (best === want) hits++;
  }
  return { covered, hits };
}

/** Sums claimFraction over a batch (n, T) of ids/targets. */
function measure(model, kind, layer, head, ids, targets, n, T, L) {
  const w = model.forward(ids, { attention: [layer] }).attention[layer].data; // (n, H, T, T)
  const H = model.config.numHeads;
  let covered = 0,
    hits = 0;
  for (let s = 0; s < n; s++) {
    const r = claimFraction(
      kind,
      w.subarray(s * H * T * T, (s + 1) * H * T * T),
      T,
      head,
      ids.data.subarray(s * T, (s + 1) * T),
      targets?.data.subarray(s * T, (s + 1) * T),
      L,
    );
    covered += r.covered;
    hits += r.hits;
  }
  return hits / covered;
}

describe('presets', () => {
  it('there are reverse, sort, copy, induction and a text model, each ≤ 100 KB', () => {
    for (const name of ['reverse', 'sort', 'copy', 'induction', 'text'])
      assert.ok(files.includes(`${name}.safetensors`), name);
    for (const f of files)
      assert.ok(readFileSync(new URL(f, DIR)).length <= kMaxBytes, `${f} is over 100 KB`);
  });

  for (const file of files) {
    it(`${file}: opens, and every claim about its heads holds on fresh data`, () => {
      const bytes = readFileSync(new URL(file, DIR));
      const preset = JSON.parse(readSafetensorsMetadata(bytes).preset);
      assert.ok(preset.title && preset.summary && preset.heads.length >= 1);
      const model = TinyTransformer.fromSafetensors(bytes);
      try {
        if (preset.kind === 'task') checkTask(model, preset);
        else if (preset.kind === 'repeat') checkRepeat(model, preset);
        else checkText(model, preset);
      } finally {
        model.dispose();
      }
    });
  }

  it("ablating the reverse preset's mirror head drops its accuracy below 50%", () => {
    const bytes = readFileSync(new URL('reverse.safetensors', DIR));
    const preset = JSON.parse(readSafetensorsMetadata(bytes).preset);
    const { layer, head } = preset.heads.find((h) => h.claim.kind === 'mirror');
    const model = TinyTransformer.fromSafetensors(bytes);
    const task = createTask('reverse', {
      length: preset.task.length,
      numSymbols: preset.task.numSymbols,
      seed: FRESH_SEED,
    });
    const ablated = model.ablateHeads([[layer, head]]);
    const full = evaluate(model, task, { seed: FRESH_SEED });
    const without = evaluate(ablated, task, { seed: FRESH_SEED });
    assert.ok(full.sequenceAccuracy >= kTaskAccuracy, `full: ${full.sequenceAccuracy}`);
    assert.ok(
      without.sequenceAccuracy < kAblatedAccuracy,
      `without the mirror head: ${without.sequenceAccuracy}`,
    );
    for (const h of [ablated, model, task]) h.dispose();
  });
});

function checkTask(model, preset) {
  const { name, length: L, numSymbols } = preset.task;
  const task = createTask(name, { length: L, numSymbols, seed: FRESH_SEED });
  assert.deepEqual(preset.tokens, Array.from(task.tokenNames));
  const r = evaluate(model, task, { seed: FRESH_SEED });
  assert.ok(r.sequenceAccuracy >= kTaskAccuracy, `${name}: sequence accuracy ${r.sequenceAccuracy}`);
  const n = 64,
    T = task.sequenceLength;
  const { ids, targets } = task.batch(n);
  for (const h of preset.heads) {
    const f = measure(model, h.claim.kind, h.layer, h.head, ids, targets, n, T, L);
    assert.ok(
      f >= h.claim.minFraction,
      `${name} L${h.layer}H${h.head} ${h.claim.kind}: ${f} < ${h.claim.minFraction}`,
    );
  }
  task.dispose();
}

function checkText(model, preset) {
  const tokens = preset.tokens;
  const idOf = new Map(tokens.map((t, i) => [t, i]));
  const unknown = idOf.get(preset.unknownToken);
  // The held-out tail of the training text (tools/train-presets/corpus.txt: the first 90% trains).
  const text = [
    ...readFileSync(new URL('../../tools/train-presets/corpus.txt', import.meta.url), 'utf8'),
  ].map((c) => (idOf.has(c) ? idOf.get(c) : unknown));
  const held = text.slice(Math.floor(text.length * 0.9));
  const T = model.config.maxLength,
    n = 32;
  const ids = new Int32Array(n * T),
    targets = new Int32Array(n * T);
  for (let s = 0; s < n; s++) {
    const at = Math.floor((s * (held.length - T - 1)) / n);
    for (let j = 0; j < T; j++) {
      ids[s * T + j] = held[at + j];
      targets[s * T + j] = held[at + j + 1];
    }
  }
  const loss = model.loss({ data: ids, shape: [n, T] }, { data: targets, shape: [n, T] });
  assert.ok(loss < kTextLoss, `held-out loss ${loss} nats per character`);
  for (const h of preset.heads) {
    const f = measure(model, h.claim.kind, h.layer, h.head, { data: ids, shape: [n, T] }, null, n, T, 0);
    assert.ok(
      f >= h.claim.minFraction,
      `text L${h.layer}H${h.head} ${h.claim.kind}: ${f} < ${h.claim.minFraction}`,
    );
  }
}

// Induction data written here from its description: a segment of distinct symbols, repeated at
// once, then random filler; scored: the repeat's positions n … 2n − 2 (mulberry32, its own seed).
function repeatBatch({ symbols, length, minSegment, maxSegment }, n, seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const ids = new Int32Array(n * length),
    targets = new Int32Array(n * length).fill(-100);
  for (let s = 0; s < n; s++) {
    const seg = minSegment + Math.floor(rand() * (maxSegment - minSegment + 1));
    const pool = Array.from({ length: symbols }, (_, i) => i)
      .sort(() => rand() - 0.5)
      .slice(0, seg);
    const x = [...pool, ...pool];
    while (x.length < length) x.push(Math.floor(rand() * symbols));
    ids.set(x, s * length);
    for (let t = seg; t <= 2 * seg - 2; t++) targets[s * length + t] = x[t + 1];
  }
  return { ids: { data: ids, shape: [n, length] }, targets: { data: targets, shape: [n, length] } };
}

function checkRepeat(model, preset) {
  const n = 64,
    T = preset.data.length;
  const { ids, targets } = repeatBatch(preset.data, n, FRESH_SEED);
  const logits = model.forward(ids, { attention: false }).logits.data,
    V = model.config.vocabSize;
  let scored = 0,
    right = 0;
  for (let i = 0; i < n * T; i++) {
    if (targets.data[i] === -100) continue;
    const row = logits.subarray(i * V, (i + 1) * V);
    scored++;
    if (row.indexOf(Math.max(...row)) === targets.data[i]) right++;
  }
  assert.ok(right / scored >= kTaskAccuracy, `induction: token accuracy ${right / scored}`);
  for (const h of preset.heads) {
    const f = measure(model, h.claim.kind, h.layer, h.head, ids, targets, n, T, 0);
    assert.ok(
      f >= h.claim.minFraction,
      `induction L${h.layer}H${h.head} ${h.claim.kind}: ${f} < ${h.claim.minFraction}`,
    );
  }
}
