// One drawing path: every widget figure moved onto a display list (figures/display-list.js) is painted by
// both backends from the same list. For each: the widget's canvas is, pixel for pixel, the list
// painted onto a fresh canvas; and its SVG holds the list's items in order (texts with their
// words and places, strokes, bars, lines, the legend) and its cells in the list's colours.
// Widgets: heatmap views (<attention-heatmap> one head with a causal mask, all heads, big-cell
// numbers; <alibi-bias> with its Σ column), bar charts, line charts, x–y charts, and the vector
// planes with arrows (<query-explorer>'s key and value planes, <rope-explorer>'s plane), and
// <logit-attribution>'s bars.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCleanPage, launch, openWidgetPage } from './helpers.mjs';

const S = 'The quick brown fox jumps over the lazy dog while the cat sleeps.';
const BODY = `
  <attention-heatmap id="one" style="display:block;width:480px" text="${S}" head="1" mask="causal"></attention-heatmap>
  <attention-heatmap id="all" text="${S}" head="all" heads="4"></attention-heatmap>
  <attention-heatmap id="small" style="display:block;width:600px" text="Tiny one." head="0"></attention-heatmap>
  <alibi-bias id="alibi" heads="4" length="12" seed="3"></alibi-bias>
  <positional-encoding-heatmap id="pe" length="24" d-model="16" dims="0,3,9"></positional-encoding-heatmap>
  <softmax-playground id="sp" style="display:block;width:600px"></softmax-playground>
  <variance-experiment id="ve"></variance-experiment>
  <query-explorer id="qe"></query-explorer>
  <rope-explorer id="re"></rope-explorer>
  <logit-attribution id="la" src="/web/presets/induction.safetensors" ids="5 12 3 9 14 0 7 11 2 3 9 14 0" limit="20"></logit-attribution>`;

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  ({ page, watch } = await openWidgetPage(b, 'div', 'display-list', BODY, 'attention-heatmap'));
});
after(async () => {
  await b?.close();
});

/** For each heatmap view of a widget: canvas pixels that differ from its list, and the SVG's misses. */
function heatmaps(id) {
  return page.evaluate(async (id) => {
    const { canvasDiff, cellMismatches, missingItems } = await import('/tests/browser/display-list-page.js');
    const { heatmapList } = await import('/web/widgets/figures/heatmap-list.js');
    const { themeOf } = await import('/web/widgets/figures/draw-util.js');
    const { readSvg } = await import('/tests/browser/svg-inspect.js');
    const el = document.querySelector(`#${id}`);
    const views = el._views ? el._views.map((v) => v.view) : [el._biasView, el._weightView];
    const { doc, state, fillAt, hex } = await readSvg(el.toSVG());
    return views.map((view, k) => {
      const pixels = canvasDiff(
        view.canvas,
        el,
        (ctx, theme) => heatmapList(ctx, theme, view.opts, view.geo).items,
      );
      // The SVG panel: the same list, laid out for the figure, at the panel's place in it.
      const g = view.layout(view.width, 1),
        cells = state.panels[k].cells;
      const { items } = heatmapList(view.canvas.getContext('2d'), themeOf(el), view.opts, g, {
        ox: cells.x - g.x0,
        oy: cells.y - g.y0,
      });
      return {
        pixels,
        kinds: [...new Set(items.map((it) => it.kind))].sort().join(' '),
        missing: missingItems(doc, items),
        cells: cellMismatches(items[0], fillAt, hex),
      };
    });
  }, id);
}

/**
 * A chart of a widget (canvas `canvas` drawn with options `opts`, kind 'bars' | 'lines' | 'xy'):
 * canvas pixels that differ from its list, and the items its SVG panel (drawn alone) misses.
 */
function chart(id, canvas, opts, kind) {
  return page.evaluate(
    async ({ id, canvas, opts, kind }) => {
      const { canvasDiff, missingItems } = await import('/tests/browser/display-list-page.js');
      const { barsLayout, barsList, linesList } = await import('/web/widgets/figures/chart-list.js');
      const { xyLayout, xyList } = await import('/web/widgets/figures/xy-list.js');
      const { SERIES_COLORS } = await import('/web/widgets/figures/charts.js');
      const { barsPanel, linesPanel, xyPanel, svgDocument, svgFigure } =
        await import('/web/widgets/figures/svg.js');
      const { themeOf } = await import('/web/widgets/figures/draw-util.js');
      const el = document.querySelector(`#${id}`);
      const o = { host: el, ...el[opts] };
      const colors = SERIES_COLORS;
      const list = (ctx, theme) =>
        kind === 'bars'
          ? barsList(ctx, theme, o, barsLayout(ctx, o, theme))
          : kind === 'lines'
            ? linesList(ctx, theme, o, { colors })
            : xyList(theme, o, xyLayout(ctx, o, theme), { colors });
      const pixels = canvasDiff(el[canvas], el, list);
      const theme = themeOf(el),
        fig = svgFigure(theme, 1);
      const panel = { bars: barsPanel, lines: linesPanel, xy: xyPanel }[kind](fig, o, { colors });
      const svg = svgDocument(fig, { width: o.width, height: panel.h, title: 't', state: {} });
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      const items = list(document.createElement('canvas').getContext('2d'), theme);
      return { pixels, n: items.length, missing: missingItems(doc, items) };
    },
    { id, canvas, opts, kind },
  );
}

test('heatmap views: the canvas is the display list, and the SVG holds its items and cells', async () => {
  const kinds = new Set();
  for (const id of ['one', 'all', 'small', 'alibi']) {
    const panels = await heatmaps(id);
    assert.ok(panels.length >= 1, id);
    panels.forEach((p, k) => {
      assert.equal(p.pixels, 0, `${id} panel ${k}: canvas pixels that differ from the painted list`);
      assert.deepEqual(p.missing, [], `${id} panel ${k}: list items missing from the SVG`);
      assert.equal(p.cells, 0, `${id} panel ${k}: SVG cells not in the list's colour`);
      for (const kind of p.kinds.split(' ')) kinds.add(kind);
    });
  }
  // Every part of a heatmap was seen: hatching (lines), borders (rules), the legend (ramp, rect).
  for (const kind of ['cells', 'lines', 'ramp', 'rect', 'rules', 'text']) assert.ok(kinds.has(kind), kind);
});

test('bar, line and x–y charts: the canvas is the display list, and the SVG panel holds its items', async () => {
  const charts = [
    ['one', '_barsCanvas', '_barsOpts', 'bars'],
    ['sp', '_bars', '_barsOpts', 'bars'],
    ['pe', '_curves', '_curvesOpts', 'lines'],
    ['sp', '_curves', '_curvesOpts', 'xy'],
    ['ve', '_canvas', '_chartOpts', 'xy'],
  ];
  for (const [id, canvas, opts, kind] of charts) {
    const r = await chart(id, canvas, opts, kind);
    assert.ok(r.n > 5, `${id} ${kind}: a list`);
    assert.equal(r.pixels, 0, `${id} ${kind}: canvas pixels that differ from the painted list`);
    assert.deepEqual(r.missing, [], `${id} ${kind}: list items missing from the SVG`);
  }
  await assertCleanPage(page, watch);
});

test('vector planes with arrows: the canvas is the display list, and the SVG holds its items', async () => {
  const planes = await page.evaluate(async () => {
    const { canvasDiff, missingItems } = await import('/tests/browser/display-list-page.js');
    const q = await import('/web/widgets/attention/query-explorer-planes.js');
    const r = await import('/web/widgets/positions/rope-explorer-plane.js');
    const { svgDocument, svgFigure } = await import('/web/widgets/figures/svg.js');
    const { themeOf } = await import('/web/widgets/figures/draw-util.js');
    const { pairColors } = await import('/web/widgets/figures/xy-chart.js');
    const qe = document.querySelector('#qe'),
      re = document.querySelector('#re');
    // What each plane draws, from the widgets' public properties: the key plane's canvas comes
    // first in <query-explorer>, then the value plane's; the plane first in <rope-explorer>.
    const [keyCanvas, valueCanvas] = qe.shadowRoot.querySelectorAll('canvas'),
      ropeCanvas = re.shadowRoot.querySelector('canvas');
    const size = parseFloat(keyCanvas.style.width);
    const result = qe.result,
      sh = { q: result.query, K: qe.keys, V: qe.values, labels: qe.labels, result };
    const view = {
      shown: re.shown,
      pair: re.pair,
      position: re.position,
      style: re.rotaryStyle,
      size: parseFloat(ropeCanvas.style.width),
    };
    const frame = r.planeFrame(view, themeOf(re), pairColors(re));
    const lists = {
      key: (theme, o = 0, s = 1) => {
        const { P, items } = q.planeAxes(theme, size, -q.RANGE, q.RANGE, o, o);
        return [...items, ...q.keyPlaneList(sh, theme, P, s)];
      },
      value: (theme, o = 0, s = 1) => {
        const { P, items } = q.planeAxes(theme, size, ...q.valueRange(sh), o, o);
        return [...items, ...q.valuePlaneList(sh, theme, P, s)];
      },
      rope: (theme, o = 0, s = 1) => r.planeList(frame, { ox: o, oy: o, s }).items,
    };
    const canvases = { key: keyCanvas, value: valueCanvas, rope: ropeCanvas };
    const svgOf = {
      key: (fig) => q.keyPlaneSVG(sh, fig, 10, 10, size),
      value: (fig) => q.valuePlaneSVG(sh, fig, 10, 10, size),
      rope: (fig) => r.planeSVG(frame, fig, 10, 10),
    };
    const out = {};
    for (const k of Object.keys(lists)) {
      const host = k === 'rope' ? re : qe,
        theme = themeOf(host);
      const fig = svgFigure(theme, 1);
      const p = svgOf[k](fig);
      const svg = svgDocument(fig, { width: p.w + 20, height: p.h + 20, title: k, state: {} });
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      const items = lists[k](theme, 10);
      out[k] = {
        pixels: canvasDiff(canvases[k], host, (ctx, th) => lists[k](th)),
        arrows: items.filter((it) => it.kind === 'arrow').length,
        missing: missingItems(doc, items),
      };
    }
    return out;
  });
  for (const [k, p] of Object.entries(planes)) {
    assert.equal(p.pixels, 0, `${k} plane: canvas pixels that differ from the painted list`);
    assert.deepEqual(p.missing, [], `${k} plane: list items missing from the SVG`);
  }
  assert.ok(planes.key.arrows >= 2 && planes.rope.arrows === 2, 'the planes have their arrows');
  await assertCleanPage(page, watch);
});

test("<logit-attribution>'s bars: the canvas is the display list, and the SVG holds its items", async () => {
  await page.waitForFunction(() => document.querySelector('#la')?.shown, null, { timeout: 20_000 });
  const r = await page.evaluate(async () => {
    const { canvasDiff, missingItems } = await import('/tests/browser/display-list-page.js');
    const { attributionList } = await import('/web/widgets/interp/logit-attribution-list.js');
    const el = document.querySelector('#la');
    const list = (ctx, theme) => attributionList(ctx, theme, el._geo);
    const items = list(
      document.createElement('canvas').getContext('2d'),
      (await import('/web/widgets/figures/draw-util.js')).themeOf(el),
    );
    const doc = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
    return {
      pixels: canvasDiff(el._canvas, el, list),
      bars: items.filter((it) => it.kind === 'rect').length,
      texts: items.filter((it) => it.kind === 'text').length,
      shown: Math.min(20, el.shown.components.length),
      missing: missingItems(doc, items),
      svgTexts: doc.querySelectorAll('text').length,
    };
  });
  assert.equal(r.bars, r.shown, 'one bar per component shown');
  assert.equal(r.texts, 2 * r.shown + 1, 'a name and a value per bar, and the axis 0');
  assert.equal(r.pixels, 0, 'canvas pixels that differ from the painted list');
  assert.deepEqual(r.missing, [], 'list items missing from the SVG');
  assert.equal(r.svgTexts, r.texts, 'every text of the list is SVG text');
  await assertCleanPage(page, watch);
});
