// <token-saliency> on the induction preset, one page at a 360 px phone width under the strict CSP: the
// scores drawn equal model.saliency's for the same options (gradient × input in the page, integrated
// gradients in the worker), the method control reruns, Cancel stops a long run, the keyboard moves
// between tokens and announces each score, the exports (CSV, JSON, SVG, PNG), the canvas is its
// display list and the SVG holds the same list, axe-core finds nothing and the widget fits the phone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { assertCleanPage, axeViolations, launch, openWidgetPage } from './helpers.mjs';

const SRC = '/web/presets/induction.safetensors';
const IDS = [5, 12, 3, 9, 14, 0, 7, 11, 2, 3, 9, 14, 0];
const BODY = `
  <token-saliency id="gx" src="${SRC}" ids="${IDS.join(' ')}"></token-saliency>
  <token-saliency id="ig" src="${SRC}" ids="${IDS.join(' ')}" method="integrated-gradients" steps="8"></token-saliency>`;
// The worker runs the same wasm build on the same float32 weights as the page.
const TOL = 1e-5;

let b, page, watch;
before(async () => {
  b = await launch({ viewport: { width: 360, height: 800 } });
  ({ page, watch } = await openWidgetPage(b, 'interp', 'token-saliency', BODY, 'token-saliency'));
  await page.evaluate(async (src) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
    window.__ref = { model: attn.TinyTransformer.fromSafetensors(bytes) };
  }, SRC);
  const settled = () =>
    [...document.querySelectorAll('token-saliency')].every(
      (el) => el.shown || !el.shadowRoot.querySelector('[role="alert"]').hidden,
    );
  await page.waitForFunction(settled, null, { timeout: 30_000 });
});
after(async () => {
  await b?.close();
});

/** The widget's options and scores, and model.saliency's scores for the same options, in the page. */
async function againstModel(id) {
  return page.evaluate(async (id) => {
    const el = document.getElementById(id);
    const p = el.plan();
    const r = await window.__ref.model.saliency(p.ids, p.options);
    return {
      options: p.options,
      shown: Array.from(el.shown.scores),
      ref: Array.from(r.scores.data),
      value: [el.shown.value, r.value],
      delta: [el.shown.delta, r.delta],
      where: el.shown.where,
      state: el.state,
    };
  }, id);
}

const maxDiff = (a, c) => Math.max(0, ...a.map((x, i) => Math.abs(x - c[i])));

test('the scores drawn are model.saliency’s for the same options (page and worker)', async () => {
  const gx = await againstModel('gx');
  assert.equal(gx.options.method, 'gradient-x-input');
  assert.equal(gx.where, 'page');
  assert.equal(gx.shown.length, IDS.length);
  assert.ok(maxDiff(gx.shown, gx.ref) <= TOL, `gradient × input differs by ${maxDiff(gx.shown, gx.ref)}`);
  assert.ok(Number.isNaN(gx.delta[0]), 'delta is NaN but for integrated gradients');
  assert.deepEqual(gx.state.scores.length, IDS.length);
  assert.equal(gx.state.method, 'gradient-x-input');
  const ig = await againstModel('ig');
  assert.equal(ig.where, 'worker');
  assert.equal(ig.options.steps, 8);
  assert.ok(maxDiff(ig.shown, ig.ref) <= TOL, `integrated gradients differ by ${maxDiff(ig.shown, ig.ref)}`);
  assert.ok(Math.abs(ig.delta[0] - ig.delta[1]) <= TOL && Number.isFinite(ig.delta[0]));
  assert.ok(Math.abs(ig.value[0] - ig.value[1]) <= TOL);
});

test('the method control reruns; Cancel stops a long run in the worker', async () => {
  const r = await page.evaluate(async () => {
    const el = document.getElementById('gx');
    const select = el.shadowRoot.querySelector('select');
    const done = new Promise((res) => el.addEventListener('saliency-done', res, { once: true }));
    select.value = 'gradient';
    select.dispatchEvent(new Event('change'));
    await done;
    const gradient = { method: el.shown.method, min: Math.min(...el.shown.scores), map: el.shown.domain.map };
    const ig = document.getElementById('ig');
    const cancelled = new Promise((res) => ig.addEventListener('saliency-cancel', res, { once: true }));
    ig.steps = 4096;
    // One task: the redraw and the run it starts are microtasks, so the run is under way (asserted).
    await new Promise((res) => setTimeout(res, 0));
    const wasRunning = ig.running;
    ig.shadowRoot.querySelector('.run button').click();
    await cancelled;
    const after = { running: ig.running, status: ig.shadowRoot.querySelector('.run .muted').textContent };
    ig.steps = 8;
    await new Promise((res) => ig.addEventListener('saliency-done', res, { once: true }));
    el.method = 'gradient-x-input';
    await new Promise((res) => el.addEventListener('saliency-done', res, { once: true }));
    return { gradient, wasRunning, after, igMethod: ig.shown.method };
  });
  assert.deepEqual(r.gradient.method, 'gradient');
  assert.ok(r.gradient.min >= 0, 'gradient norms are non-negative');
  assert.equal(r.gradient.map, 'viridis', 'a sequential map for the norm');
  assert.ok(r.wasRunning);
  assert.deepEqual(r.after, { running: false, status: 'Cancelled.' });
  assert.equal(r.igMethod, 'integrated-gradients');
});

test('keyboard: the tokens are a grid of one row; arrows move and each score is announced', async () => {
  await page.evaluate(() => {
    const el = document.getElementById('gx');
    window.__focused = []; // the positions token-focus announces, in order
    el.addEventListener('token-focus', (e) => window.__focused.push(e.detail.position));
    el.shadowRoot.querySelector('[tabindex="0"]').focus();
  });
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const two = await page.evaluate(() => {
    const el = document.getElementById('gx');
    const a = el.shadowRoot.activeElement;
    return {
      label: a.getAttribute('aria-label'),
      role: a.getAttribute('role'),
      readout: el.shadowRoot.querySelector('.readout').textContent,
      focus: window.__focused.at(-1),
    };
  });
  assert.equal(two.role, 'gridcell');
  assert.match(two.label, /^position 2, token “3”: score -?\d/);
  assert.equal(two.readout, two.label);
  assert.equal(two.focus, 2);
  await page.keyboard.press('End');
  const end = await page.evaluate(() =>
    document.getElementById('gx').shadowRoot.activeElement.getAttribute('aria-label'),
  );
  assert.match(end, new RegExp(`^position ${IDS.length - 1}, `));
  await page.keyboard.press('Home');
  const home = await page.evaluate(() =>
    document.getElementById('gx').shadowRoot.activeElement.getAttribute('aria-label'),
  );
  assert.match(home, /^position 0, token “5”/);
});

test('exports: CSV, JSON, SVG and PNG; the canvas is its display list and the SVG holds it', async () => {
  const r = await page.evaluate(async () => {
    const el = document.getElementById('gx');
    const { checkCanvases } = await import('/tests/browser/display-list-page.js');
    const svg = el.toSVG();
    return {
      csv: el.getCSV(),
      json: JSON.parse(el.getJSON()),
      svg,
      png: el.getPNGDataURL().slice(0, 22),
      canvases: await checkCanvases(el, svg),
      scores: Array.from(el.shown.scores),
    };
  });
  const lines = r.csv.trim().split('\n');
  assert.equal(lines[0], 'position,id,token,score');
  assert.equal(lines.length, IDS.length + 1);
  assert.deepEqual(
    lines.slice(1).map((l) => Number(l.split(',')[3])),
    r.scores,
  );
  assert.equal(r.json.kind, 'token-saliency');
  assert.deepEqual(r.json.scores, r.scores);
  assert.equal(r.json.state.widget, 'token-saliency');
  assert.match(r.svg, /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(r.svg, /<metadata/);
  assert.equal(r.png, 'data:image/png;base64,');
  const shown = r.canvases.filter((c) => c.shown);
  assert.equal(shown.length, 1);
  const [c] = shown;
  assert.ok(c.list && c.texts >= IDS.length, `painted from a display list with every token (${c.kinds})`);
  assert.equal(c.pixels, 0, 'the canvas is its list painted afresh');
  assert.deepEqual(c.missing, [], 'every list item is in the SVG');
});

test('axe-core finds nothing, the widget fits a 360 px phone, and the page is clean', async () => {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  const widths = await page.evaluate(() => ({
    doc: document.documentElement.scrollWidth,
    right: Math.max(
      ...[...document.querySelectorAll('token-saliency')].flatMap((el) => [
        el.getBoundingClientRect().right,
        ...[...el.shadowRoot.querySelectorAll('canvas, select, .controls, .run')]
          .filter((x) => !x.hidden)
          .map((x) => x.getBoundingClientRect().right),
      ]),
    ),
  }));
  assert.ok(widths.doc <= 360, `the page is ${widths.doc} px wide`);
  assert.ok(widths.right <= 360, `a widget ends at ${widths.right}`);
  await assertCleanPage(page, watch);
});
