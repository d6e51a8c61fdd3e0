// el.state: every widget that draws returns a JSON-able state — attributes, config,
// what lives in properties (precomputed data, a trace, ids, the head or pair shown, steps taken) —
// and accepts one back. Each widget here comes in a pair of the same width: A is changed (attributes,
// properties, clicks), B is left as it loaded; then B.state = A.state (through JSON text) and every
// canvas of B must equal A's pixel for pixel, and toSVG() must give the same document. The JSON
// export carries the state. All under the strict CSP, no console error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const W = 'style="display:block;width:640px"';
const pair = (tag, attrs = '') =>
  `<${tag} id="a-${tag}" ${W} ${attrs}></${tag}>\n<${tag} id="b-${tag}" ${W}></${tag}>`;
const BODY = [
  pair(
    'attention-heatmap',
    'text="States reproduce the same picture." head="1" heads="2" mask="causal" palette="cividis" query="2"',
  ),
  `<attention-heatmap id="a-data" ${W}></attention-heatmap><attention-heatmap id="b-data" ${W}></attention-heatmap>`,
  pair(
    'attention-steps',
    'text="A state, then the same steps." step="scores" head="2" positional="rope" seed="4"',
  ),
  `<attention-steps id="a-trace" ${W}></attention-steps><attention-steps id="b-trace" ${W}></attention-steps>`,
  pair('attention-model-view', 'ids="3 1 4 1 5 9" palette="gray"'),
  pair('positional-encoding-heatmap', 'length="30" d-model="20" base="100" dims="1,5"'),
  pair('mask-editor', 'text="mask this one please" mask="custom" toggles="0.1,2.3" head="1"'),
  pair('alibi-bias', 'heads="6" length="10" causal="false" seed="2"'),
  pair('gqa-heads', 'heads="6" kv-heads="3" length="7" seed="9"'),
  pair('kv-cache-stepper', 'embed-dim="24" heads="4" kv-heads="2" length="8" seed="3"'),
  pair('rope-explorer', 'd="16" base="500" offset="3" seed="2"'),
  pair('query-explorer', 'query="0.8,-0.3" scaling="false"'),
  pair('softmax-playground', 'logits="2,1,0.5,-1" scale="3"'),
  pair('variance-experiment', 'samples="400" seed="5" keys="6"'),
  pair('mask-fill-compare', 'scores="1,2,3" masked="1"'),
].join('\n');
const TAGS = [
  'attention-heatmap',
  'data',
  'attention-steps',
  'trace',
  'attention-model-view',
  'positional-encoding-heatmap',
  'mask-editor',
  'alibi-bias',
  'gqa-heads',
  'kv-cache-stepper',
  'rope-explorer',
  'query-explorer',
  'softmax-playground',
  'variance-experiment',
  'mask-fill-compare',
];

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'state',
    'state',
    BODY,
    'attention-heatmap, attention-steps, positional-encoding-heatmap, mask-editor, alibi-bias, gqa-heads',
  ));
  await page.evaluate(async () => {
    const $ = (s) => document.querySelector(s);
    const { TinyTransformer } = await import('/src/js/index.js');
    const cfg = { vocabSize: 11, maxLength: 8, dModel: 12, numHeads: 3, numLayers: 2, seed: 3 };
    // Both model views show a model set from JS (the same weights); only A has ids.
    $('#a-attention-model-view').model = new TinyTransformer(cfg);
    $('#b-attention-model-view').model = new TinyTransformer(cfg);
    // Precomputed weights with −∞-free rows and tokens of our own.
    const T = 5,
      w = new Float32Array(2 * T * T);
    for (let i = 0; i < w.length; i++) w[i] = ((i * 7919) % 97) / 97 / T;
    $('#a-data').data = {
      weights: w,
      shape: [2, T, T],
      queryTokens: ['a', 'b', 'c', 'd', 'e'],
      keyTokens: ['v', 'w', 'x', 'y', 'z'],
    };
    $('#a-data').head = 'all';
    // A trace from a TinyTransformer layer, as the model view opens it (masked step: −∞ cells).
    const m = new TinyTransformer({ ...cfg, seed: 8 });
    const { trace } = m.forward([[1, 2, 3, 4]], { attention: false, trace: { layers: [1] } });
    $('#a-trace').trace = {
      tokens: ['w', 'x', 'y', 'z'],
      steps: trace[1],
      heads: 3,
      dModel: 12,
      causal: true,
    };
    $('#a-trace').setAttribute('step', 'masked');
    $('#a-trace').setAttribute('head', '2');
    // Interactions that live in properties.
    $('#a-alibi-bias').head = 4;
    $('#a-rope-explorer').pair = 3;
    $('#a-rope-explorer').position = 21;
  });
  await page.waitForFunction(
    () =>
      [
        '#a-attention-model-view',
        '#a-kv-cache-stepper',
        '#a-rope-explorer',
        '#a-query-explorer',
        '#a-softmax-playground',
        '#a-variance-experiment',
        '#a-mask-fill-compare',
        '#a-data',
        '#a-trace',
      ].every((s) => document.querySelector(s).dataset.ready !== undefined),
    null,
    { timeout: 20_000 },
  );
  await page.evaluate(() => {
    const kv = document.querySelector('#a-kv-cache-stepper');
    for (let i = 0; i < 4; i++) kv.step();
    kv.kvHead = 1;
    // A click on the heatmap: query row 3 of the first tile becomes the bars.
    const hm = document.querySelector('#a-data');
    const p = hm.cellCenter(1, 3, 0);
    const tile = hm.shadowRoot.querySelectorAll('canvas')[1];
    tile.dispatchEvent(new PointerEvent('click', { clientX: p.x, clientY: p.y, bubbles: true }));
    // Focus and hover marks are transient (not state): leave the tile.
    hm.shadowRoot.activeElement?.blur();
    tile.dispatchEvent(new PointerEvent('pointerleave'));
  });
  // The click sets query="3": the heatmap redraws with that row of the tile as the bars.
  await page.waitForFunction(
    () => {
      const hm = document.querySelector('#a-data');
      const bars = hm.shadowRoot.querySelector('.dist canvas');
      return (
        hm.getAttribute('query') === '3' &&
        !bars.hidden &&
        bars.getAttribute('aria-label')?.startsWith('Bar chart: the attention of query 3 ')
      );
    },
    null,
    { timeout: 20_000 },
  );
});
after(async () => {
  await b?.close();
});

/** In the page: each canvas of an element's shadow root as [width, height, FNV-1a of its pixels]. */
function pictures(id) {
  return page.evaluate(
    (id) =>
      [...document.querySelector(`#${id}`).shadowRoot.querySelectorAll('canvas')].map((c) => {
        const d = c.getContext('2d').getImageData(0, 0, Math.max(1, c.width), Math.max(1, c.height)).data;
        let h = 0x811c9dc5;
        for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 0x01000193) >>> 0;
        return [c.width, c.height, c.hidden ? 'hidden' : h];
      }),
    id,
  );
}

test('each state is JSON-able, names its widget and survives a JSON round trip', async () => {
  const out = await page.evaluate(
    (tags) =>
      tags.map((t) => {
        const el = document.querySelector(`#a-${t}`);
        const s = el.state;
        return {
          t,
          widget: s.widget,
          version: s.version,
          same: JSON.stringify(JSON.parse(JSON.stringify(s))) === JSON.stringify(s),
          local: el.localName,
        };
      }),
    TAGS,
  );
  for (const o of out) {
    assert.equal(o.widget, o.local, o.t);
    assert.equal(o.version, 1, o.t);
    assert.ok(o.same, `${o.t}: JSON round trip`);
  }
});

test('a state set on a second instance redraws the same picture, bit for bit', async () => {
  const before = {};
  for (const t of TAGS) {
    before[t] = await pictures(`b-${t}`);
    assert.ok((await pictures(`a-${t}`)).length > 0, `${t} draws`);
  }
  await page.evaluate((tags) => {
    for (const t of tags)
      document.querySelector(`#b-${t}`).state = JSON.parse(
        JSON.stringify(document.querySelector(`#a-${t}`).state),
      );
  }, TAGS);
  // Every B draws its state on the microtask that setting it schedules (before evaluate returns); the
  // stepper re-steps once its module is ready, so its 4 tokens in the cache (and kvHead 1) are awaited.
  await page.waitForFunction(
    () => {
      const kv = document.querySelector('#b-kv-cache-stepper');
      return kv.length === 4 && kv.shown?.kvHead === 1;
    },
    null,
    { timeout: 20_000 },
  );
  // Draw A again too: a canvas's first text can come out before the system font is resolved (seen
  // with query-explorer's labels), which no state can reproduce.
  await page.evaluate((tags) => {
    for (const t of tags) document.querySelector(`#a-${t}`).refresh();
  }, TAGS);
  for (const t of TAGS) {
    const a = await pictures(`a-${t}`),
      bb = await pictures(`b-${t}`);
    assert.deepEqual(bb, a, `${t}: B's canvases equal A's`);
    assert.notDeepEqual(before[t], a, `${t}: B looked different before (the test changes something)`);
  }
  const svgs = await page.evaluate(
    (tags) =>
      tags
        .filter((t) => typeof document.querySelector(`#a-${t}`).toSVG === 'function')
        .map((t) => [
          t,
          document.querySelector(`#a-${t}`).toSVG() === document.querySelector(`#b-${t}`).toSVG(),
        ]),
    TAGS,
  );
  assert.ok(svgs.length >= 7, `${svgs.length} widgets with toSVG`);
  for (const [t, same] of svgs) assert.ok(same, `${t}: the same SVG document`);
  // And B's state now reads as A's.
  const states = await page.evaluate(
    (tags) =>
      tags.map((t) => [
        t,
        JSON.stringify(document.querySelector(`#a-${t}`).state),
        JSON.stringify(document.querySelector(`#b-${t}`).state),
      ]),
    TAGS,
  );
  for (const [t, a, bb] of states) assert.equal(bb, a, `${t}: B.state equals A.state`);
});

test('the JSON export carries the state; a state of another widget is refused', async () => {
  const out = await page.evaluate(
    (tags) =>
      tags.map((t) => {
        const el = document.querySelector(`#a-${t}`);
        return [t, JSON.stringify(JSON.parse(el.getJSON()).state), JSON.stringify(el.state)];
      }),
    TAGS,
  );
  for (const [t, exported, state] of out) assert.equal(exported, state, `${t}: getJSON().state`);
  // The SVG's <metadata> holds the same state (widgetState), a trace's numbers left out.
  const meta = await page.evaluate(
    (tags) =>
      tags
        .filter((t) => typeof document.querySelector(`#a-${t}`).toSVG === 'function')
        .map((t) => {
          const el = document.querySelector(`#a-${t}`);
          const doc = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
          const st = el.state;
          if (st.trace) st.trace.steps = null;
          return [
            t,
            JSON.stringify(JSON.parse(doc.querySelector('metadata').textContent).widgetState),
            JSON.stringify(st),
          ];
        }),
    TAGS,
  );
  for (const [t, inSvg, state] of meta) assert.equal(inSvg, state, `${t}: <metadata> widgetState`);
  const msg = await page.evaluate(() => {
    try {
      document.querySelector('#b-gqa-heads').state = document.querySelector('#a-alibi-bias').state;
      return 'accepted';
    } catch (e) {
      return e.message;
    }
  });
  assert.match(msg, /alibi-bias/);
  const detail = await page.evaluate(() => {
    const s = document.querySelector('#a-attention-model-view').state,
      h = document.querySelector('#a-data').state,
      tr = document.querySelector('#a-trace').state;
    return {
      model: s.model,
      ids: s.attributes.ids,
      palette: s.attributes.palette,
      dataShape: h.data.shape,
      barsTile: h.barsTile,
      masked: tr.trace.steps.find((x) => x.name === 'masked').data.includes('-Infinity'),
    };
  });
  assert.equal(detail.model.source, 'set from JS');
  assert.equal(detail.model.config.numLayers, 2);
  assert.equal(detail.ids, '3 1 4 1 5 9');
  assert.equal(detail.palette, 'gray');
  assert.deepEqual(detail.dataShape, [2, 5, 5]);
  assert.equal(detail.barsTile, 1);
  assert.ok(detail.masked, 'masked cells kept as "-Infinity"');
  // After a state, a model widget still follows its attributes (only JS-only keys became properties).
  const text = await page.evaluate(async () => {
    const el = document.querySelector('#b-mask-editor');
    el.setAttribute('text', 'attributes still drive it');
    await null; // after the redraw: setAttribute queued it as a microtask before this one
    return el.config.text;
  });
  assert.equal(text, 'attributes still drive it');
});

test('the trainer: the state re-trains to the same step with the same settings and heads', async () => {
  await page.evaluate(() => {
    const html =
      '<attention-trainer id="ta" task="copy" length="4" layers="1" heads="2" d-model="16" style="display:block;width:640px"></attention-trainer>' +
      '<attention-trainer id="tb" style="display:block;width:640px"></attention-trainer>';
    document.querySelector('main').insertAdjacentHTML('beforeend', html);
  });
  await page.waitForFunction(
    () => document.querySelector('#ta').snapshot && document.querySelector('#tb').snapshot,
    null,
    { timeout: 30_000 },
  );
  await page.evaluate(() => document.querySelector('#ta').stepOnce(20));
  await page.waitForFunction(() => document.querySelector('#ta').snapshot.step === 20, null, {
    timeout: 30_000,
  });
  await page.evaluate(() => {
    document.querySelector('#tb').state = JSON.parse(JSON.stringify(document.querySelector('#ta').state));
  });
  // Both have drawn their step-20 snapshot (the status line and the heads are drawn together).
  await page.waitForFunction(
    () =>
      ['#ta', '#tb'].every((s) => {
        const el = document.querySelector(s);
        return (
          el.snapshot.step === 20 &&
          el.shadowRoot.querySelector('.status').textContent.startsWith('step 20 ·')
        );
      }),
    null,
    { timeout: 30_000 },
  );
  const [sa, sb] = await page.evaluate(() => ['#ta', '#tb'].map((s) => document.querySelector(s).state));
  assert.deepEqual(sb.settings, sa.settings);
  assert.equal(sb.step, 20);
  const heads = async (id) => (await pictures(id)).slice(2); // the loss and accuracy charts keep each run's own points
  assert.deepEqual(await heads('tb'), await heads('ta'), 'the heads after 20 steps are the same picture');
  await assertCleanPage(page, watch);
});
