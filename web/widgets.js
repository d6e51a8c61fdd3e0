// attention-wasm widgets: one <script type="module" src=".../web/widgets.js"> and a tag is all a page
// needs. Every widget on a page shares this one import of the library and one wasm instance. The
// elements are the ELEMENTS table below (docs/widgets.md has each one's attributes and events).
//
// The module also exports the helpers the demo and tutorial pages build on.
import * as attn from '../src/js/index.js';
import { whenReady } from './widgets/runtime.js';
import { AttentionSteps } from './widgets/attention/attention-steps.js';
import { AttentionHeatmap } from './widgets/attention/attention-heatmap.js';
import { PositionalEncodingHeatmap } from './widgets/positions/positional-encoding-heatmap.js';
import { MaskEditor } from './widgets/attention/mask-editor.js';
import { AttentionTrainer } from './widgets/models/attention-trainer.js';
import { AttentionModelView } from './widgets/models/attention-model-view.js';

import { QueryExplorer } from './widgets/attention/query-explorer.js';
import { VarianceExperiment } from './widgets/attention/variance-experiment.js';
import { SoftmaxPlayground } from './widgets/attention/softmax-playground.js';
import { MaskFillCompare } from './widgets/attention/mask-fill-compare.js';
import { RopeExplorer } from './widgets/positions/rope-explorer.js';
import { AlibiBias } from './widgets/positions/alibi-bias.js';
import { GqaHeads } from './widgets/attention/gqa-heads.js';
import { KvCacheStepper } from './widgets/attention/kv-cache-stepper.js';
import { HeadScores } from './widgets/interp/head-scores.js';
import { LogitAttribution } from './widgets/interp/logit-attribution.js';
import { PatchingView } from './widgets/interp/patching-view.js';
import { TokenSaliency } from './widgets/interp/token-saliency.js';
import { DeltaRuleSteps } from './widgets/attention/delta-rule-steps.js';

// Every element, registered here and only here (a widget file defines its class, never its tag).
// README.md and docs/widgets.md list exactly these names (tests/js/docs.test.mjs).
export const ELEMENTS = {
  'attention-steps': AttentionSteps,
  'attention-heatmap': AttentionHeatmap,
  'positional-encoding-heatmap': PositionalEncodingHeatmap,
  'mask-editor': MaskEditor,
  'attention-trainer': AttentionTrainer,
  'attention-model-view': AttentionModelView,
  'query-explorer': QueryExplorer,
  'variance-experiment': VarianceExperiment,
  'softmax-playground': SoftmaxPlayground,
  'mask-fill-compare': MaskFillCompare,
  'rope-explorer': RopeExplorer,
  'alibi-bias': AlibiBias,
  'gqa-heads': GqaHeads,
  'kv-cache-stepper': KvCacheStepper,
  'head-scores': HeadScores,
  'logit-attribution': LogitAttribution,
  'patching-view': PatchingView,
  'token-saliency': TokenSaliency,
  'delta-rule-steps': DeltaRuleSteps,
};
for (const [name, cls] of Object.entries(ELEMENTS)) {
  if (!customElements.get(name)) customElements.define(name, cls);
}

// Start loading the wasm module right away (once), rather than when the first widget connects.
const ready = whenReady();

export {
  attn,
  ready,
  AttentionSteps,
  AttentionHeatmap,
  PositionalEncodingHeatmap,
  MaskEditor,
  AttentionTrainer,
  AttentionModelView,
};
export { tokenize, tokenizeWithInfo, MAX_TOKENS } from './widgets/tokenizer.js';
export { tokenSeed, tokenVector, embedTokens } from './widgets/embedding.js';
export {
  DEFAULT_CONFIG,
  normalizeConfig,
  runModel,
  clearModelCache,
  validHeadCounts,
  tokensOf,
  maskMatrix,
  parseBool,
  parseToggles,
  formatToggles,
  modelStateDict,
  resultFromTrace,
  PAD_TOKEN,
} from './widgets/model.js';
export { HeatmapView } from './widgets/figures/heatmap-view.js';
export { drawBars, drawLines, SERIES_COLORS } from './widgets/figures/charts.js';
export { colormap, colorOf, autoDomain } from './widgets/figures/colormap.js';
export { matrixToCSV, download } from './widgets/export.js';
export { formatNumber, exactNumber } from './widgets/figures/draw-util.js';
export { loadKatex } from './widgets/runtime.js';
// Figures: a standalone HTML snapshot of views, and printing them as vectors.
export { snapshotHTML, downloadSnapshot, figureSVG, sha256Base64, SNAPSHOT_CSS } from './widgets/snapshot.js';
export { preparePrint, restorePrint } from './widgets/print.js';

// The tutorial's widgets (web/tutorial.html).
//   <query-explorer>        one query against a few keys: drag it and watch the weights move
//   <variance-experiment>   Var(q·k) against d_k, with and without the 1/√d_k scaling
//   <softmax-playground>    softmax of editable logits, and how it saturates as they grow
//   <mask-fill-compare>     a fully masked row: −∞ (this library: zeros) versus a −1e9 fill (uniform)
export { QueryExplorer };
export { VarianceExperiment };
export { measureDotProductVariance } from './widgets/attention/variance-experiment.js';
export { SoftmaxPlayground };
export { MaskFillCompare };

// Attention in today's models.
//   <rope-explorer>   rotary embeddings: a pair rotating with position, q·k against the relative offset
//   <alibi-bias>      ALiBi: each head's linear distance bias and the weights it gives
//   <gqa-heads>       grouped-query attention: which query heads share a key/value head, their weights
//   <kv-cache-stepper> decoding one token at a time with a real KV cache, checked against a full forward
export { RopeExplorer };
export { AlibiBias };
export { GqaHeads };
export { KvCacheStepper };

// Why a model predicts what it does.
//   <head-scores>        previous-token, duplicate-token and induction scores of every layer × head
//   <logit-attribution>  each component's share of a logit difference, sorted, with a data table
//   <patching-view>      activation patching: which heads (or residual positions) carry the answer
//   <token-saliency>     which input tokens the prediction depends on: gradients, integrated gradients
export { HeadScores, LogitAttribution, PatchingView, TokenSaliency };

// Attention without softmax.
//   <delta-rule-steps>   one DeltaNet value head's state update for a token: decay, correct, write, read
export { DeltaRuleSteps };
export {
  deltaHooks,
  deltaHeadFromActivations,
  deltaWalk,
  deltaOutputs,
  mixValues,
} from './widgets/attention/delta-rule-data.js';
