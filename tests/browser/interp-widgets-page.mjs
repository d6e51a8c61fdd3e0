// Shared by the interpretability widget tests (interp-widgets and interp-widgets-interaction .test.mjs):
// useInterpWidgetsPage() launches Chromium before the calling file's tests and closes it after them (`b`); openAll opens
// <head-scores>, <logit-attribution>, <patching-view> and <attention-model-view mode="rollout"> on the
// induction preset under the strict CSP, and reference() loads the same model in the page.

import { after, before } from 'node:test';
import { launch, openWidgetPage } from './helpers.mjs';

// The widgets and the page run the same wasm code on the same float32 weights (the worker its own
// instance of the same build): results agree to float32 rounding of the same operations.
export const kSameTol = 1e-6;

export const SRC = '/web/presets/induction.safetensors';
export const CLEAN = [5, 12, 3, 9, 14, 0, 7, 11, 2, 3, 9, 14, 0];
export const CORRUPTED = [5, 12, 3, 9, 14, 8, 7, 11, 2, 3, 9, 14, 0];
export const ALL = 'head-scores, logit-attribution, patching-view, attention-model-view';
export const PAGE = `
  <head-scores src="${SRC}" ids="${CLEAN.join(' ')}"></head-scores>
  <logit-attribution src="${SRC}" ids="${CLEAN.join(' ')}"></logit-attribution>
  <patching-view src="${SRC}" clean="${CLEAN.join(' ')}" corrupted="${CORRUPTED.join(' ')}" autorun></patching-view>
  <attention-model-view src="${SRC}" ids="${CLEAN.join(' ')}" mode="rollout"></attention-model-view>`;

export let b;
/**
 * Registers the hooks that open the browser before the calling file's tests and close it after them:
 * each test file calls this once at its top level (a module is evaluated once per process, so
 * hooks registered at import would serve only the first file of a lane that imports it).
 */
export function useInterpWidgetsPage() {
  before(async () => {
    b = await launch({ viewport: { width: 1000, height: 900 } });
  });
  after(async () => {
    await b?.close();
  });
}

export async function openAll(name = 'all', body = PAGE) {
  const r = await openWidgetPage(b, 'interp', name, body, ALL);
  await r.page.waitForFunction(() => document.querySelector('patching-view')?.shown, null, {
    timeout: 20_000,
  });
  return r;
}

/** In the page: window.__ref = { attn, model } with a TinyTransformer of the preset, for the reference calls. */
export async function reference(page) {
  await page.evaluate(async (src) => {
    const attn = await import('/src/js/index.js');
    await attn.init();
    const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
    window.__ref = { attn, model: attn.TinyTransformer.fromSafetensors(bytes) };
  }, SRC);
}

export const maxDiff = (a, b) =>
  a.length !== b.length
    ? Infinity
    : Math.max(0, ...a.map((x, i) => (Number.isNaN(x) && Number.isNaN(b[i]) ? 0 : Math.abs(x - b[i]))));
