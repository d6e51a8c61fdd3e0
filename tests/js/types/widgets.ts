// Type test of 'attention-wasm/widgets': the elements by tag name, their shared types and the helpers.
// Compiled only, never run: `tsc -p tests/js/types --noEmit` (tests/js/types.test.mjs).
import {
  ELEMENTS,
  AttentionSteps,
  QueryExplorer,
  measureDotProductVariance,
  normalizeConfig,
  runModel,
  attn,
} from 'attention-wasm/widgets';
import type {
  AwElement,
  HeatmapState,
  ModelResult,
  VarianceResult,
  WidgetConfig,
} from 'attention-wasm/widgets';

const steps: AttentionSteps = document.createElement('attention-steps');
const explorer: QueryExplorer = document.createElement('query-explorer');
const base: AwElement = steps;
const stepsClass: typeof AttentionSteps = ELEMENTS['attention-steps'];
const config: WidgetConfig = normalizeConfig({ heads: 2 });
const result: ModelResult = runModel(config);
if (result.ok) result.steps.forEach((s) => s.name);
const variance: VarianceResult = measureDotProductVariance(16, 100, 1);
const heatmap: HeatmapState | null = document.querySelector('attention-heatmap')?.state ?? null;
const softmaxOut = attn.softmax([1, 2]);
// @ts-expect-error the base class is a type only: web/widgets.js does not export it
import('attention-wasm/widgets').then((m) => m.AwElement);
// @ts-expect-error heads is a number
normalizeConfig({ heads: '2' });
// @ts-expect-error not a tag of ELEMENTS
ELEMENTS['no-such-widget'];

export { explorer, base, stepsClass, variance, heatmap, softmaxOut };
