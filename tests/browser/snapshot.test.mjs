// The standalone HTML snapshot: snapshotHTML(elements, { title }) from the widgets module
// gives one file with each view as inline SVG and its data as a table, with no script, no external
// reference and a <meta> policy of default-src 'none' plus its one <style>'s hash. Served with that
// policy as a header too, it loads with no console error and no CSP violation, its style applies, the
// heatmap's SVG shows the canvas's colours (a screenshot, inside cells, within 2/255), every view is
// there, and axe-core finds no violation in it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, assertCleanPage, axeViolations, join, launch, openWidgetPage, routeHtml } from './helpers.mjs';

const BODY = `
  <attention-heatmap id="hm" style="display:block;width:560px" text="A snapshot & <its> views." head="1" mask="causal"></attention-heatmap>
  <attention-model-view id="mv" ids="1 2 3 4 5"></attention-model-view>
  <attention-steps id="steps" style="display:block;width:560px" text="A snapshot of steps" step="scores"></attention-steps>
  <positional-encoding-heatmap id="pe" length="16" d-model="8"></positional-encoding-heatmap>
  <mask-editor id="mask" text="no vector here" mask="causal"></mask-editor>`;

let b, page, watch, html, expected;
before(async () => {
  b = await launch({ viewport: { width: 1100, height: 900 } });
  ({ page, watch } = await openWidgetPage(
    b,
    'snap',
    'snapshot',
    BODY,
    'attention-heatmap, attention-steps, positional-encoding-heatmap, mask-editor',
  ));
  await page.evaluate(async () => {
    const { TinyTransformer } = await import('/src/js/index.js');
    document.querySelector('#mv').model = new TinyTransformer({
      vocabSize: 11,
      maxLength: 8,
      dModel: 12,
      numHeads: 3,
      numLayers: 2,
      seed: 3,
    });
  });
  await page.waitForFunction(() => document.querySelector('#mv').dataset.ready !== undefined);
  // Every widget of the library has toSVG() now: this mask editor stands for an element without one
  // (a page's own AwElement subclass), so its method is taken away.
  await page.$eval('#mask', (el) => {
    el.toSVG = undefined;
  });
  ({ html, expected } = await page.evaluate(async () => {
    const { snapshotHTML, SNAPSHOT_CSS, sha256Base64 } = await import('/web/widgets.js');
    const els = ['#hm', '#mv', '#steps', '#pe', '#mask'].map((s) => document.querySelector(s));
    const out = snapshotHTML(els, { title: 'Snapshot <test> & co' });
    // The style hash, checked against WebCrypto's SHA-256.
    const digest = new Uint8Array(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(SNAPSHOT_CSS)),
    );
    const webcrypto = btoa(String.fromCharCode(...digest));
    // Canvas colours of a few cells of the heatmap (head 1, one tile): the expected screen colours,
    // read a tenth of a cell in from its left edge (the cell's number sits at its centre).
    const hm = document.querySelector('#hm'),
      canvas = hm.shadowRoot.querySelector('.tiles canvas');
    const r = canvas.getBoundingClientRect(),
      sx = canvas.width / r.width,
      ctx = canvas.getContext('2d');
    const cw = hm.cellCenter(0, 0, 1).x - hm.cellCenter(0, 0, 0).x;
    const cells = [
      [0, 0],
      [3, 1],
      [5, 5],
      [6, 2],
      [7, 3],
    ].map(([row, col]) => {
      const c = hm.cellCenter(0, row, col),
        p = { x: c.x - 0.4 * cw, y: c.y };
      return {
        row,
        col,
        rgb: Array.from(
          ctx
            .getImageData(Math.floor((p.x - r.left) * sx), Math.floor((p.y - r.top) * sx), 1, 1)
            .data.slice(0, 3),
        ),
      };
    });
    return { html: out, expected: { cells, webcrypto, ours: sha256Base64(SNAPSHOT_CSS) } };
  }));
});
after(async () => {
  await b?.close();
});

test('the snapshot is one file: no script, nothing external, a hash-only policy', () => {
  assert.equal(expected.ours, expected.webcrypto, "our SHA-256 equals WebCrypto's");
  assert.match(html, /^<!doctype html>/);
  assert.doesNotMatch(html, /<script/i);
  assert.doesNotMatch(html, /<(iframe|object|embed|img|image|link|foreignObject|use)\b/i);
  const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
  assert.ok(meta, 'a CSP <meta>');
  assert.equal(meta[1], `default-src 'none'; style-src 'sha256-${expected.ours}'`);
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)];
  assert.equal(styles.length, 1, 'one <style>');
  assert.doesNotMatch(html, /\sstyle="/, 'no style attribute (blocked without unsafe-inline)');
  const text = html.replace(/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/g, '');
  assert.doesNotMatch(text, /https?:|data:|blob:|@import|@font-face|\ssrc=|\shref=/i, 'no URL');
  for (const m of text.matchAll(/url\(([^)]*)\)/g))
    assert.match(m[1], /^#/, `only internal url(#…): ${m[0]}`);
  assert.match(html, /<title>Snapshot &lt;test&gt; &amp; co<\/title>/);
  // Five views: four figures, the mask editor as a note, five tables; ids unique.
  assert.equal((html.match(/<svg /g) || []).length, 4);
  assert.match(html, /This view has no vector figure/);
  assert.equal((html.match(/<table>/g) || []).length, 5);
  const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  assert.match(html, /A snapshot &amp; &lt;its&gt; views\.|&lt;its&gt;/, 'token text escaped');
});

test("served under default-src 'none' it renders: style applied, SVG colours = canvas, axe clean", async () => {
  const policy = /content="([^"]+)"/.exec(
    /<meta http-equiv="Content-Security-Policy"[^>]+>/.exec(html)[0],
  )[1];
  const url = b.url('/__snapshot/view.html');
  await routeHtml(b.context, url, html, { 'Content-Security-Policy': policy });
  const snap = await b.newPage();
  await snap.page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener(
      'securitypolicyviolation',
      (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
      true,
    );
  });
  const res = await snap.page.goto(url);
  assert.equal(res.headers()['content-security-policy'], policy);
  const info = await snap.page.evaluate(() => ({
    scripts: document.scripts.length,
    svgs: document.querySelectorAll('svg').length,
    collapse: getComputedStyle(document.querySelector('table')).borderCollapse,
    figure: (() => {
      const r = document.querySelector('figure svg').getBoundingClientRect();
      return [r.width, r.height];
    })(),
  }));
  assert.equal(info.scripts, 0);
  assert.equal(info.svgs, 4);
  assert.equal(info.collapse, 'collapse', 'the hashed <style> applies');
  assert.ok(info.figure[0] > 100 && info.figure[1] > 100, `the first figure is drawn: ${info.figure}`);
  // Where the heatmap's cells lie on the page: the cell area from its <metadata>, scaled as drawn.
  const points = await snap.page.evaluate((cells) => {
    const svg = document.querySelector('figure svg');
    const meta = JSON.parse(svg.querySelector('metadata').textContent);
    const r = svg.getBoundingClientRect(),
      k = r.width / Number(svg.getAttribute('width'));
    const p = meta.panels[0];
    svg.scrollIntoView();
    const r2 = svg.getBoundingClientRect();
    return cells.map(({ row, col }) => ({
      x: r2.left + (p.cells.x + ((col + 0.1) * p.cells.w) / p.cols) * k,
      y: r2.top + (p.cells.y + ((row + 0.5) * p.cells.h) / p.rows) * k,
    }));
  }, expected.cells);
  for (let i = 0; i < points.length; i++) {
    const png = await snap.page.screenshot({
      clip: { x: Math.floor(points[i].x), y: Math.floor(points[i].y), width: 1, height: 1 },
    });
    // Decode the 1-pixel PNG in the widget page (which may draw images).
    const rgb = await page.evaluate(async (b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const c = new OffscreenCanvas(1, 1),
        ctx = c.getContext('2d');
      ctx.drawImage(bmp, 0, 0);
      return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
    }, png.toString('base64'));
    const want = expected.cells[i].rgb;
    assert.ok(
      rgb.every((v, j) => Math.abs(v - want[j]) <= 2),
      `cell (${expected.cells[i].row}, ${expected.cells[i].col}): snapshot ${rgb} vs canvas ${want}`,
    );
  }
  await snap.page.screenshot({
    path: join(ROOT, 'test-results', 'screenshots', 'snapshot.png'),
    fullPage: false,
  });
  const found = await axeViolations(snap.page);
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  assert.deepEqual(await snap.page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(snap.watch.errors, [], 'no console error');
  assert.deepEqual(
    snap.watch.requests.filter((u) => u !== url),
    [],
    'no request but the page',
  );
  await snap.page.close();
  await assertCleanPage(page, watch);
});

test('with JavaScript off the snapshot shows every view', async () => {
  const url = b.url('/__snapshot/nojs.html');
  await routeHtml(b.context, url, html, {});
  const { page: p, watch: w } = await b.newPage();
  const cdp = await b.context.newCDPSession(p);
  await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
  await p.goto(url);
  // Still drawn: four figures of real size, five tables, the heading.
  const boxes = await p.locator('figure svg').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return [Math.round(r.width), Math.round(r.height)];
    }),
  );
  assert.equal(boxes.length, 4);
  for (const [wd, ht] of boxes) assert.ok(wd > 100 && ht > 50, `figure ${wd}×${ht}`);
  assert.equal(await p.locator('table').count(), 5);
  assert.equal(await p.locator('h1').textContent(), 'Snapshot <test> & co');
  assert.deepEqual(w.errors, []);
  await b.release(p);
});
