// Shared by the tutorial tests (tutorial and tutorial-sections .test.mjs): in each file that calls
// useTutorialPage(), it launches Chromium and opens web/tutorial.html before its tests (`env`,
// `page`, its watch `w`, `badResponses`) and closes it after them; inspectWidgets() reads what each widget draws.

import { after, before } from 'node:test';
import { launch } from './helpers.mjs';

export const ALL_WIDGETS = [
  'query-explorer',
  'variance-experiment',
  'softmax-playground',
  'mask-fill-compare',
  'attention-steps',
  'attention-heatmap',
  'mask-editor',
  'positional-encoding-heatmap',
  'attention-trainer',
  'attention-model-view',
  'rope-explorer',
  'alibi-bias',
  'gqa-heads',
  'kv-cache-stepper',
  'head-scores',
  'logit-attribution',
  'patching-view',
  'token-saliency',
  'delta-rule-steps',
];

export let env, page, w, badResponses;

/** Waits until the tutorial script and every custom element on the page have rendered once. */
async function pageReady(p) {
  await p.waitForFunction(
    () => {
      const els = [...document.querySelectorAll('*')].filter((e) => e.localName.includes('-'));
      return (
        document.documentElement.dataset.tutorialReady !== undefined &&
        els.length > 0 &&
        els.every((e) => e.dataset.ready !== undefined) &&
        // <token-saliency>'s first run (integrated gradients, in a worker) has drawn
        [...document.querySelectorAll('token-saliency')].every((e) => e.shown)
      );
    },
    null,
    { timeout: 30_000 },
  );
}

/** In the page: for each widget matching `selector`, how many distinct colours its canvases hold and whether it shows an error. */
export function inspectWidgets(p, selector) {
  return p.evaluate(
    (sel) =>
      [...document.querySelectorAll(sel)].map((el) => {
        let colours = 0,
          drawn = 0;
        for (const c of el.shadowRoot.querySelectorAll('canvas')) {
          if (!c.width || !c.height || c.closest('[hidden]')) continue;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const seen = new Set();
          for (let i = 0; i < d.length && seen.size < 64; i += 4 * 7)
            seen.add((d[i] << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3]);
          colours = Math.max(colours, seen.size);
          if (seen.size > 2) drawn++;
        }
        const error = el.shadowRoot.querySelector('.error:not([hidden])');
        return {
          tag: el.localName,
          id: el.id,
          ready: el.dataset.ready !== undefined,
          colours,
          drawn,
          error: error ? error.textContent : '',
          text: el.shadowRoot.textContent.trim().length,
        };
      }),
    selector,
  );
}

/**
 * Registers the hooks that open the tutorial page before the calling file's tests and close it after them:
 * each test file calls this once at its top level (a module is evaluated once per process, so
 * hooks registered at import would serve only the first file of a lane that imports it).
 */
export function useTutorialPage() {
  before(async () => {
    env = await launch();
    ({ page, watch: w } = await env.newPage());
    badResponses = [];
    page.on('response', (r) => {
      if (r.status() >= 400) badResponses.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(env.url('/tutorial.html'));
    await pageReady(page);
  });

  after(async () => {
    await env?.close();
  });
}
