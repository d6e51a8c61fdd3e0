// A hybrid model's layers in the demo, and signed maps in <attention-heatmap>. The committed
// tests/golden/pretrained/lfm2-tiny folder (layer 0 a short convolution, layer 1 attention with 4
// heads) opened through the folder input: on the conv layer the heatmap draws its one signed map
// (the torch reference's, expected.json) on the diverging palette over ±max|a|, the layer note says
// what the map is, the steps view says the layer has no softmax steps, the model view has 1 + 4
// tiles (and the notes of a DeltaNet layer and of one reading another layer's K/V); on the attention layer the 4 heads on the sequential palette and the steps view; no
// console error, axe clean, nothing wider than a 360-px phone. A signed heatmap's readout, legend,
// bars and cell colours against the values it was given.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT, assertCleanPage, axeViolations, demoReady, join, launch, openWidgetPage } from './helpers.mjs';

const FOLDER = join(ROOT, 'tests', 'golden', 'pretrained', 'lfm2-tiny');
const CASE = JSON.parse(readFileSync(join(FOLDER, 'expected.json'), 'utf8')).cases[0];
// Case b1_t7's ids are the text "0Basea-tN" (the fixture's byte-level tokenizer, no special tokens).
const TEXT = '0Basea-tN';
// The demo's maps are the library's float32 forward: the torch float64 reference within this.
const close = (x, want) => Math.abs(x - want) <= 1e-5 + 1e-4 * Math.abs(want);

let b;
before(async () => (b = await launch()));
after(async () => b?.close());

/** The demo with the lfm2-tiny folder open on TEXT (one load for the tests that start from it). */
const folderPage = () =>
  b.shared('/', async (page) => {
    await demoReady(page);
    await page.setInputFiles('#model-folder', FOLDER);
    await page.waitForFunction(() => document.querySelector('#model').value === 'folder', null, {
      timeout: 20_000,
    });
    await page.fill('#text', TEXT);
    await page.waitForFunction(() => document.querySelectorAll('#chips .chip').length === 7);
  });

/** Shows layer `l` and waits until the heatmap draws its map (H maps of 7 × 7). */
async function showLayer(page, l, H) {
  await page.selectOption('#layer', String(l));
  await page.waitForFunction(
    ({ l, H }) => {
      const hm = document.querySelector('attention-heatmap');
      const note = document.querySelector('#layer-note').textContent;
      return note.startsWith(`Layer ${l}:`) && hm.data?.H === H && hm.shown?.matrices[0].rows === 7;
    },
    { l, H },
    { timeout: 20_000 },
  );
}

/** What the heatmap, notes, steps and model view show. */
const shown = (page) =>
  page.evaluate(() => {
    const hm = document.querySelector('attention-heatmap');
    const mv = document.querySelector('attention-model-view');
    const tile = (k) => mv._tiles[k].view.opts;
    return {
      signed: hm.hasAttribute('signed'),
      domain: hm._domain,
      weights: hm.data.flat ? Array.from(hm.data.flat) : [],
      summary: hm.shadowRoot.querySelector('.summary').textContent,
      select: hm.shadowRoot.querySelector('select').value,
      drawn: hm.shown.matrices.map((m) => m.head),
      note: document.querySelector('#layer-note').textContent,
      stepsHidden: document.querySelector('#steps').hidden,
      stepsNote: document.querySelector('#steps-note').hidden
        ? null
        : document.querySelector('#steps-note').textContent,
      stepsHeads: document.querySelector('#steps').trace?.heads ?? null,
      mv: {
        heads: mv.shown.heads,
        kinds: mv.shown.kinds,
        maps: [tile(0).domain.map, tile(1).domain.map],
        conv: { lo: tile(0).domain.lo, hi: tile(0).domain.hi, title: tile(0).title },
      },
    };
  });

test('lfm2-tiny in the demo: the conv layer signed on the diverging palette with its note, the attention layer as before', async () => {
  const { page, watch } = await folderPage();
  await page.evaluate(() => window.attentionDemo.setState({ view: '3' })); // head 3 of layer 1's 4
  await page.waitForFunction(() => document.querySelector('attention-heatmap').getAttribute('head') === '3');
  await showLayer(page, 0, 1);
  const conv = await shown(page);
  const want0 = CASE.attention[0].data;
  assert.equal(conv.weights.length, want0.length);
  conv.weights.forEach((x, i) => assert.ok(close(x, want0[i]), `conv map [${i}] ${x} vs ${want0[i]}`));
  assert.ok(
    want0.some((v) => v < 0),
    'the reference map has negative weights',
  );
  const m = Math.max(...conv.weights.map(Math.abs));
  assert.equal(conv.signed, true);
  assert.deepEqual([conv.drawn, conv.select], [[0], '0'], 'head 3 asked of a 1-map layer: its map, said so');
  assert.deepEqual(
    [conv.domain.map, conv.domain.lo, conv.domain.hi, conv.domain.caption],
    ['diverging', -m, m, 'signed: weights of the values, not probabilities'],
  );
  assert.match(conv.summary, /1 head · signed: weights of the values, not probabilities/);
  assert.equal(
    conv.note,
    'Layer 0: a short convolution (kernel 3): its map is the effective token mixing A[t,s] = mean over ' +
      'channels of C_t·w[t−s]·B_s — signed, banded, no softmax.',
  );
  assert.equal(conv.stepsHidden, true);
  assert.match(conv.stepsNote, /^Layer 0 is a short convolution: it has no softmax steps/);
  assert.deepEqual(conv.mv.heads, [1, 4]);
  assert.deepEqual(conv.mv.kinds, ['conv', 'attention']);
  assert.deepEqual(conv.mv.maps, ['diverging', 'viridis'], 'the conv tile diverging, the heads sequential');
  assert.deepEqual(conv.mv.conv, { lo: -m, hi: m, title: 'L0 · conv' });
  // The model view's SVG: the conv layer named, its tile and colour bar captioned signed, 1 + 4 panels.
  const svg = await page.$eval('attention-model-view', (el) => {
    const text = el.toSVG();
    const state = JSON.parse(
      new DOMParser().parseFromString(text, 'image/svg+xml').querySelector('metadata').textContent,
    );
    return { text, kinds: state.panels.map((p) => p.kind), heads: state.heads };
  });
  assert.deepEqual(svg.kinds, ['conv', 'attention', 'attention', 'attention', 'attention']);
  assert.deepEqual(svg.heads, [1, 4]);
  assert.match(svg.text, />Layer 0 · short convolution \(signed\)</);
  assert.match(svg.text, />signed</);
  // The rollout multiplies softmax maps: refused for this model, naming the conv layer.
  const rollout = await page.$eval('attention-model-view', async (el) => {
    el.mode = 'rollout';
    await new Promise((ok) => requestAnimationFrame(ok));
    const said = el.shadowRoot.querySelector('.error').textContent;
    el.mode = 'heads';
    return said;
  });
  assert.equal(rollout, 'The rollout needs softmax attention in every layer: layer 0 is a conv layer.');
  assert.equal(
    JSON.parse(await page.$eval('attention-heatmap', (el) => el.getJSON())).signed,
    'signed: weights of the values, not probabilities',
  );

  await showLayer(page, 1, 4);
  const att = await shown(page);
  const want1 = CASE.attention[1].data;
  att.weights.forEach((x, i) => assert.ok(close(x, want1[i]), `attention [${i}] ${x} vs ${want1[i]}`));
  assert.equal(att.signed, false);
  assert.deepEqual([att.drawn, att.select], [[3], '3']);
  assert.deepEqual([att.domain.map, att.domain.lo, att.domain.hi], ['viridis', 0, 1]);
  assert.doesNotMatch(att.summary, /signed/);
  assert.match(att.note, /^Layer 1: full causal attention; RoPE/);
  assert.equal(att.stepsHidden, false);
  assert.equal(att.stepsNote, null);
  assert.equal(att.stepsHeads, 4);

  // The notes of the layer kinds this fixture lacks: a DeltaNet layer, and one reading another's K/V.
  const notes = await page.evaluate(async () => {
    const { showLayerNote } = await import('/web/demo-trained.js');
    const el = { hidden: true, textContent: '' };
    const note = (info, l) => (showLayerNote(() => el, info, l), el.textContent);
    const attention = { kind: 'attention', window: 0, rope: false, kvFrom: 1 };
    const tiled = { kind: 'delta', heads: 4, kvHeads: 2, kvFrom: null, valueHeadOrder: 'tiled' };
    return [
      note({ kind: 'delta', heads: 4, kvFrom: null }, 0),
      note(attention, 3),
      note(attention, 1),
      note(tiled, 2),
    ];
  });
  assert.deepEqual(notes, [
    'Layer 0: gated DeltaNet linear attention: its map is the exact effective attention of the delta rule ' +
      'per value head — signed, rows need not sum to 1.',
    'Layer 3: full causal attention; no RoPE in this layer; K/V from layer 1.',
    'Layer 1: full causal attention; no RoPE in this layer.',
    'Layer 2: gated DeltaNet linear attention: its map is the exact effective attention of the delta rule ' +
      "per value head — signed, rows need not sum to 1; value heads in the GGUF file's order: head h reads " +
      'key head h mod 2.',
  ]);

  await showLayer(page, 0, 1);
  // The parts a hybrid layer changes (the rest of the page with a folder open: demo-pretrained.test.mjs).
  const parts = {
    include: ['#layer-row', '#layer-note', '#steps-note', '#model-view', '#heatmap'].map((id) => [id]),
  };
  assert.deepEqual(await axeViolations(page, parts), [], 'axe clean with the conv layer shown');
  await page.setViewportSize({ width: 360, height: 800 });
  await page.waitForFunction(() => document.documentElement.scrollWidth <= 360, null, { timeout: 5000 });
  assert.deepEqual(watch.errors, [], 'no console error');
  assert.deepEqual(watch.offOrigin, [], 'nothing outside the origin');
});

const HEATMAPS = `
  <attention-heatmap id="s" signed style="display:block;width:520px"></attention-heatmap>
  <attention-heatmap id="n" diverging="red-blue" style="display:block;width:520px"></attention-heatmap>`;
// A 3 × 3 signed map, max|a| = 1: cell (1, 0) = −0.5, cell (2, 2) = 0.4.
const SIGNED = [1, 0, 0, -0.5, 0.25, 0, 0.1, -0.8, 0.4];

test('<attention-heatmap signed>: diverging colours over ±max|a|, readout, legend caption, signed bars, SVG', async () => {
  const { page, watch } = await openWidgetPage(b, 'div', 'signed-heatmap', HEATMAPS, 'attention-heatmap');
  const r = await page.evaluate(async (weights) => {
    const { colormap } = await import('/web/widgets.js');
    const els = ['s', 'n'].map((id) => document.getElementById(id));
    for (const el of els)
      el.data = { weights, shape: [1, 3, 3], queryTokens: ['a', 'b', 'c'], keyTokens: ['a', 'b', 'c'] };
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    const pixel = (el, row, col) => {
      const view = el._views[0].view,
        canvas = el._views[0].canvas;
      // Near the cell's left edge: its number is written in its middle.
      const c = view.cellCenter(row, col),
        cw = view.cellCenter(0, 1).x - view.cellCenter(0, 0).x,
        rect = canvas.getBoundingClientRect(),
        sx = canvas.width / rect.width;
      const d = canvas
        .getContext('2d')
        .getImageData(
          Math.floor((c.x - 0.35 * cw - rect.left) * sx),
          Math.floor((c.y - rect.top) * sx),
          1,
          1,
        ).data;
      return [d[0], d[1], d[2]];
    };
    const lut = (name, v) => {
      const i = Math.round(((v + 1) / 2) * 255) * 3,
        t = colormap(name);
      return [t[i], t[i + 1], t[i + 2]];
    };
    const [s, n] = els;
    const view = s._views[0].view;
    const at = view.cellCenter(1, 0);
    view.canvas.dispatchEvent(
      new PointerEvent('pointermove', { clientX: at.x, clientY: at.y, bubbles: true }),
    );
    s.setAttribute('query', '2');
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    return {
      domains: [s._domain, n._domain].map((d) => [d.map, d.lo, d.hi]),
      negative: { got: pixel(s, 1, 0), want: lut('diverging', -0.5) },
      positive: { got: pixel(s, 2, 2), want: lut('diverging', 0.4) },
      redBlue: { got: pixel(n, 1, 0), want: lut('red-blue', -0.5) },
      readout: s.shadowRoot.querySelector('.readout').textContent,
      bars: s.shadowRoot.querySelector('.dist .muted').textContent,
      svg: s.toSVG(),
      fills: [-0.5, 0.4].map((v) => {
        const [r, g, b2] = lut('diverging', v);
        return `#${[r, g, b2].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
      }),
    };
  }, SIGNED);
  assert.deepEqual(
    r.domains,
    [
      ['diverging', -1, 1],
      ['red-blue', -1, 1],
    ],
    'signed: ±max|a|; a negative weight makes it signed without the attribute',
  );
  for (const [name, { got, want }] of Object.entries({
    negative: r.negative,
    positive: r.positive,
    redBlue: r.redBlue,
  }))
    got.forEach((c, k) => assert.ok(Math.abs(c - want[k]) <= 2, `${name} cell ${got} vs the map's ${want}`));
  assert.ok(r.negative.got[2] > r.negative.got[0], 'the negative cell is blue');
  assert.ok(r.positive.got[0] > r.positive.got[2], 'the positive cell is orange');
  assert.match(
    r.readout,
    /query “b” \(1\) → key “a” \(0\): weight = −0\.5 — signed: weights of the values, not probabilities/,
  );
  assert.match(
    r.bars,
    /^The bars sum to -0\.300000 \(signed: weights of the values, not probabilities: a row need not sum to 1\)\.$/,
  );
  const texts = [...r.svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]).join(' ');
  assert.match(
    texts,
    /signed: weights of the values, not probabilities/,
    'the legend says so (on two lines)',
  );
  assert.match(r.svg, /<title>Signed weights \(of the values, not probabilities\), all heads: 3 query/);
  for (const fill of r.fills)
    assert.ok(r.svg.includes(`fill="${fill}"`), `the SVG has the cell colour ${fill}`);
  await assertCleanPage(page, watch);
  await b.release(page);
});
