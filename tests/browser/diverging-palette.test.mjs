// The diverging palette of signed views: <attention-steps diverging="red-blue"> colours its
// signed steps (scores) and <positional-encoding-heatmap diverging="red-blue"> its encoding with the
// red–blue map (ColorBrewer RdBu: negative blue, 0 white, positive red), on the canvas, in the colour
// bar and in the SVG; `palette` on <attention-steps> colours its probability steps (weights). The
// default stays blue–orange / viridis; an unknown name falls back to them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const BODY = `
  <attention-steps id="rb" style="display:block;width:560px" text="signed scores in red and blue" step="scores" diverging="red-blue"></attention-steps>
  <attention-steps id="bo" style="display:block;width:560px" text="signed scores in red and blue" step="scores"></attention-steps>
  <attention-steps id="gw" style="display:block;width:560px" text="signed scores in red and blue" step="weights" palette="gray" diverging="nonsense"></attention-steps>
  <positional-encoding-heatmap id="pe" length="10" d-model="8" diverging="red-blue"></positional-encoding-heatmap>
  <mask-editor id="me" style="display:block;width:700px" text="a small mask in cividis" mask="causal" palette="cividis"></mask-editor>
  <kv-cache-stepper id="kv" style="display:block;width:700px" length="6" palette="gray" diverging="red-blue"></kv-cache-stepper>`;

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1000, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'div',
    'diverging',
    BODY,
    'attention-steps, positional-encoding-heatmap, mask-editor, kv-cache-stepper',
  ));
});
after(async () => {
  await b?.close();
});

/** In the page: for cells of el, the canvas pixel and the map's colour of the cell's value, and the SVG's fill there. */
function sample(id) {
  return page.evaluate(async (id) => {
    const { colormap } = await import('/web/widgets.js');
    const el = document.querySelector(`#${id}`);
    const canvas = el.shadowRoot.querySelector('canvas');
    const r = canvas.getBoundingClientRect(),
      sx = canvas.width / r.width,
      ctx = canvas.getContext('2d');
    const view = el._view,
      o = view.opts,
      lut = colormap(o.domain.map);
    const cw = view.cellCenter(0, 1).x - view.cellCenter(0, 0).x;
    const svg = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
    const grads = [...svg.querySelectorAll('linearGradient')].map((g) => g.id);
    const out = [];
    for (const [row, col] of [
      [0, 0],
      [1, 2],
      [2, 1],
      [3, 3],
      [4, 0],
    ]) {
      const v = o.data[row * o.cols + col];
      const lev = Math.min(
        255,
        Math.max(0, ((v - o.domain.lo) * (255 / (o.domain.hi - o.domain.lo)) + 0.5) | 0),
      );
      const c = view.cellCenter(row, col);
      const px = Array.from(
        ctx
          .getImageData(Math.floor((c.x - 0.4 * cw - r.left) * sx), Math.floor((c.y - r.top) * sx), 1, 1)
          .data.slice(0, 3),
      );
      const hex = `#${[0, 1, 2].map((k) => lut[lev * 3 + k].toString(16).padStart(2, '0')).join('')}`;
      out.push({
        row,
        col,
        v,
        px,
        want: [lut[lev * 3], lut[lev * 3 + 1], lut[lev * 3 + 2]],
        inSvg: svg.querySelector(`path[fill="${hex}"]`) !== null,
      });
    }
    return { map: o.domain.map, lo: o.domain.lo, hi: o.domain.hi, grads, out, state: el.state.attributes };
  }, id);
}

test('diverging="red-blue": signed steps and the encoding in red–blue, canvas and SVG alike', async () => {
  for (const id of ['rb', 'pe']) {
    const s = await sample(id);
    assert.equal(s.map, 'red-blue', id);
    assert.ok(s.lo < 0 && s.hi > 0, `${id}: a signed domain`);
    assert.deepEqual(s.grads, ['aw-cbar-red-blue'], `${id}: the SVG's colour bar`);
    for (const c of s.out) {
      assert.ok(
        c.px.every((x, k) => Math.abs(x - c.want[k]) <= 2),
        `${id} (${c.row}, ${c.col}) = ${c.v}: canvas ${c.px}, map ${c.want}`,
      );
      assert.ok(c.inSvg, `${id} (${c.row}, ${c.col}): the SVG has a path of that colour`);
    }
    assert.equal(s.state.diverging, 'red-blue', `${id}: in the state`);
  }
  // Negative is blue, positive red: the ends of the table.
  const ends = await page.evaluate(async () => {
    const { colormap } = await import('/web/widgets.js');
    const l = colormap('red-blue');
    return [Array.from(l.slice(0, 3)), Array.from(l.slice(765))];
  });
  assert.ok(ends[0][2] > ends[0][0], 'low end blue');
  assert.ok(ends[1][0] > ends[1][2], 'high end red');
});

test('the default stays blue–orange; palette colours the probability steps; unknown names fall back', async () => {
  const bo = await sample('bo');
  assert.equal(bo.map, 'diverging');
  assert.deepEqual(bo.grads, ['aw-cbar-diverging']);
  const gw = await sample('gw');
  assert.equal(gw.map, 'gray', 'weights in the gray palette');
  for (const c of gw.out)
    assert.ok(
      c.px.every((x, k) => Math.abs(x - c.want[k]) <= 2) && c.want[0] === c.want[1],
      `gray (${c.row}, ${c.col})`,
    );
  assert.equal(await page.$eval('#gw', (el) => el.diverging), 'blue-orange');
  await page.$eval('#gw', (el) => {
    el.step = 'scores';
    el.refresh(); // drawn now, not on the next microtask
  });
  assert.equal((await sample('gw')).map, 'diverging', 'an unknown diverging name: blue–orange');
  await assertCleanPage(page, watch);
});

test('palette on <mask-editor> (both panels) and palette + diverging on <kv-cache-stepper>, canvas, SVG and state', async () => {
  await page.$eval('#kv', (kv) => kv.shadowRoot.querySelector('button[aria-label^="Step"]').click()); // Step: one token into the cache
  await page.waitForFunction(() => document.querySelector('#kv').weights !== null, null, { timeout: 20_000 });
  const r = await page.evaluate(async () => {
    const { colormap } = await import('/web/widgets.js');
    const { paintedList } = await import('/web/widgets/figures/paint-canvas.js');
    const { themeOf } = await import('/web/widgets/figures/draw-util.js');
    // The canvas pixel at a cell's centre against the map's colour of its value, and the SVG's fill.
    const probe = (el, view, row, col) => {
      const o = view.opts,
        lut = colormap(o.domain.map),
        v = o.data[row * o.cols + col];
      const lev = Math.min(
        255,
        Math.max(0, ((v - o.domain.lo) * (255 / (o.domain.hi - o.domain.lo)) + 0.5) | 0),
      );
      const c = view.cellCenter(row, col),
        r = view.canvas.getBoundingClientRect(),
        sx = view.canvas.width / r.width;
      const cw = view.cellCenter(row, col + 1).x - c.x; // off the centre, clear of a value printed there
      const px = Array.from(
        view.canvas
          .getContext('2d')
          .getImageData(Math.floor((c.x - 0.4 * cw - r.left) * sx), Math.floor((c.y - r.top) * sx), 1, 1)
          .data.slice(0, 3),
      );
      const want = [lut[lev * 3], lut[lev * 3 + 1], lut[lev * 3 + 2]];
      const hex = `#${want.map((k) => k.toString(16).padStart(2, '0')).join('')}`;
      const svg = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
      return { map: o.domain.map, px, want, inSvg: svg.querySelector(`path[fill="${hex}"]`) !== null };
    };
    // A panel of <kv-cache-stepper> seen from outside, shaped as probe reads a view: the index-th
    // canvas of its shadow root, where the cells of the display list it was painted from lie and their
    // map, and the values (data, cols) from a public property, in the domain [lo, hi].
    const kvPanel = (kv, index, data, cols, lo, hi) => {
      const canvas = kv.shadowRoot.querySelectorAll('canvas')[index];
      const cells = paintedList(canvas)(canvas.getContext('2d'), themeOf(kv)).find(
        (it) => it.kind === 'cells',
      );
      const cellCenter = (row, col) => {
        const b = canvas.getBoundingClientRect();
        return { x: b.left + cells.x + (col + 0.5) * cells.cw, y: b.top + cells.y + (row + 0.5) * cells.ch };
      };
      return { canvas, cellCenter, opts: { data, cols, domain: { lo, hi, map: cells.map } } };
    };
    const me = document.querySelector('#me'),
      kv = document.querySelector('#kv');
    const x = kv.x,
      mx = Math.max(...Array.from(x, (v) => Math.abs(v))); // x's map is symmetric about 0
    return {
      mask: probe(me, me._maskView, 1, 0),
      weights: probe(me, me._weightView, 2, 1),
      x: probe(kv, kvPanel(kv, 0, x, kv.shown.embedDim, -mx, mx), 0, 0),
      kvWeights: probe(kv, kvPanel(kv, 2, kv.weights, kv.length, 0, 1), 0, 0),
      meState: me.state.attributes.palette,
      kvState: [kv.state.attributes.palette, kv.state.attributes.diverging],
      props: [me.palette, kv.palette, kv.diverging],
    };
  });
  assert.deepEqual(
    [r.mask.map, r.weights.map, r.x.map, r.kvWeights.map],
    ['cividis', 'cividis', 'red-blue', 'gray'],
  );
  for (const [name, c] of Object.entries({
    mask: r.mask,
    weights: r.weights,
    x: r.x,
    kvWeights: r.kvWeights,
  })) {
    assert.ok(
      c.px.every((v, k) => Math.abs(v - c.want[k]) <= 2),
      `${name}: canvas ${c.px}, map ${c.want}`,
    );
    assert.ok(c.inSvg, `${name}: the SVG has a path of that colour`);
  }
  assert.equal(r.meState, 'cividis');
  assert.deepEqual(r.kvState, ['gray', 'red-blue']);
  assert.deepEqual(r.props, ['cividis', 'gray', 'red-blue']);
  await assertCleanPage(page, watch);
});
