// The demo's whole state, and its round trip through the URL query string. Only values that differ
// from the defaults are written, so a shared link stays short and readable:
//   /?t=The+cat+sat&d=32&h=4&m=causal&tg=2.1,3.0&step=scores&head=1
// The Steer panel's recipe is part of it (hook, pos, neg, coef, cont, ntok: web/demo-steer.js).
import { DEFAULT_CONFIG, formatToggles, normalizeConfig, parseBool, parseToggles } from './widgets.js';
import { MAX_STEER_TOKENS } from './workers/steer.js';

/** The most heads the side panel offers. */
export const MAX_HEADS = 16;

export const DEMO_DEFAULTS = Object.freeze({
  ...DEFAULT_CONFIG,
  text: 'The animal did not cross the street because it was too tired.',
  source: 'L’animal n’a pas traversé la rue car il était trop fatigué.',
  step: 'scores', // the step <attention-steps> shows
  head: 0, // its head
  view: 'all', // <attention-heatmap>: 'all' | 'mean' | head index
  query: -1, // the query row shown as bars (-1: the last)
  model: 'text', // the demo opens on the character model, which reads whatever is typed; 'seeded' (the
  // config-driven layer) | a preset | 'file' | 'folder'
  layer: 0, // the layer shown of a trained model
  // The Steer panel's recipe (activation addition, after Turner et al.'s "Love" − "Hate"):
  steerHook: '', // 'blocks.{l}.hook_resid_pre'; '' = the middle layer of the model shown
  steerPositive: 'Love', // the positive prompts, one per line
  steerNegative: 'Hate', // the negative prompts, one per line
  steerCoefficient: 4, // × the steering vector (−10 … 10)
  steerPrompt: 'I hate you because', // the prompt both continuations continue
  steerTokens: 20, // new tokens of each continuation
  // The Hugging Face Hub "Open from Hugging Face…" asks ('' = https://huggingface.co): a mirror's URL
  // (HF_ENDPOINT's role; the page's CSP must allow its origins in connect-src, docs/hub.md).
  hubUrl: '',
  // Attention sinks and selections (<attention-heatmap>'s hide-columns, queries, combine): keys hidden
  // with each row renormalised without them; several query rows, their rows averaged or summed.
  hideColumns: [],
  queries: [],
  combine: 'mean',
  // Watch a chat (web/demo-chat.js): the conversation, the reply the model gave, the reply token
  // selected (its index in the reply; -1: none) and how its attention is shown: 'layer' (the layer's
  // heads: chatHead 'all' | 'mean' | a head), 'layers' (the mean over layers and heads), 'rollout'.
  chatSystem: '',
  chatUser: '',
  chatReply: '',
  chatToken: -1,
  chatAgg: 'layer',
  chatHead: 'mean',
  chatModel: '', // the chat's model where it has a name: a Hub repository, 'owner/name' or 'owner/name:file'
});

/** The longest prompt text of the Steer panel a state keeps (each box). */
export const MAX_STEER_TEXT = 4000;

// state key → [URL parameter, kind]
const PARAMS = {
  text: ['t', 'str'],
  source: ['s', 'str'],
  cross: ['x', 'bool'],
  dModel: ['d', 'int'],
  heads: ['h', 'int'],
  kvHeads: ['kv', 'int'],
  seed: ['seed', 'int'],
  positional: ['pe', 'str'],
  base: ['base', 'num'],
  mask: ['m', 'str'],
  pad: ['pad', 'int'],
  toggles: ['tg', 'toggles'],
  scaling: ['sc', 'bool'],
  temperature: ['tau', 'num'],
  dropout: ['p', 'num'],
  dropoutSeed: ['ps', 'int'],
  residual: ['res', 'bool'],
  layerNorm: ['ln', 'bool'],
  step: ['step', 'str'],
  head: ['head', 'int'],
  view: ['view', 'str'],
  query: ['q', 'int'],
  model: ['model', 'str'],
  layer: ['layer', 'int'],
  steerHook: ['hook', 'str'],
  steerPositive: ['pos', 'str'],
  steerNegative: ['neg', 'str'],
  steerCoefficient: ['coef', 'num'],
  steerPrompt: ['cont', 'str'],
  steerTokens: ['ntok', 'int'],
  hubUrl: ['hub-url', 'str'],
  hideColumns: ['hide', 'list'],
  queries: ['qs', 'list'],
  combine: ['comb', 'str'],
  chatSystem: ['cs', 'str'],
  chatUser: ['cu', 'str'],
  chatReply: ['cr', 'str'],
  chatToken: ['ct', 'int'],
  chatAgg: ['ca', 'str'],
  chatHead: ['ch', 'str'],
  chatModel: ['cm', 'str'],
};

/** Up to 64 whole numbers in [0, 1023], sorted, each once ("0,3" or an array); anything else: none. */
const listOf = (v) =>
  [...new Set((Array.isArray(v) ? v : String(v ?? '').split(',')).map((x) => String(x).trim()))]
    .filter((x) => /^\d{1,4}$/.test(x) && Number(x) <= 1023)
    .map(Number)
    .sort((a, b) => a - b)
    .slice(0, 64);

/** The chat's state normalized: texts cut, the token index and the view's names in range. */
function normalizeChat(merged) {
  const text = (v) => String(v ?? '').slice(0, MAX_STEER_TEXT);
  const n = Math.round(Number(merged.chatToken));
  const head = String(merged.chatHead);
  return {
    chatSystem: text(merged.chatSystem),
    chatUser: text(merged.chatUser),
    chatReply: text(merged.chatReply),
    chatToken: Number.isFinite(n) ? Math.max(-1, Math.min(4095, n)) : -1,
    chatAgg: ['layer', 'layers', 'rollout'].includes(merged.chatAgg) ? merged.chatAgg : 'layer',
    chatHead: ['all', 'mean'].includes(head) || /^\d{1,2}$/.test(head) ? head : 'mean',
    chatModel: /^[\w.-]{1,96}\/[\w.-]{1,96}(:[\w./-]{1,200})?$/.test(String(merged.chatModel))
      ? String(merged.chatModel)
      : '',
  };
}

/** A Hub URL kept in the state: http(s), no credentials, query or fragment, no trailing slash; else ''. */
function hubUrlOf(value) {
  let url;
  try {
    url = new URL(String(value));
  } catch {
    return '';
  }
  const plain = /^https?:$/.test(url.protocol) && !url.username && !url.password && !url.search && !url.hash;
  return plain ? url.href.replace(/\/+$/, '') : '';
}

/** The Steer panel's recipe normalized: a resid_pre hook or '', texts cut, the numbers in range. */
function normalizeSteer(merged) {
  const text = (v) => String(v ?? '').slice(0, MAX_STEER_TEXT);
  const hook = /^blocks\.\d{1,3}\.hook_resid_pre$/.test(String(merged.steerHook)) ? merged.steerHook : '';
  const c = Number(merged.steerCoefficient);
  const coefficient = Number.isFinite(c)
    ? Math.round(Math.max(-10, Math.min(10, c)) * 10) / 10
    : DEMO_DEFAULTS.steerCoefficient;
  const n = Math.round(Number(merged.steerTokens));
  return {
    steerHook: hook,
    steerPositive: text(merged.steerPositive),
    steerNegative: text(merged.steerNegative),
    steerCoefficient: coefficient === 0 ? 0 : coefficient, // no −0 in a link
    steerPrompt: text(merged.steerPrompt),
    steerTokens: Number.isFinite(n) ? Math.max(1, Math.min(MAX_STEER_TOKENS, n)) : DEMO_DEFAULTS.steerTokens,
  };
}

/** Normalizes a demo state (model keys through the widgets' normalizeConfig). */
export function normalizeState(s) {
  const merged = { ...DEMO_DEFAULTS, ...s };
  const model = normalizeConfig(merged);
  const head = Math.max(0, Math.min(63, Math.round(Number(merged.head)) || 0));
  const query = Math.max(-1, Math.min(1023, Math.round(Number(merged.query)) || 0));
  const view = ['all', 'mean'].includes(merged.view)
    ? merged.view
    : String(Math.max(0, parseInt(merged.view, 10) || 0));
  const step = /^[a-z_]{1,24}$/.test(String(merged.step)) ? String(merged.step) : DEMO_DEFAULTS.step;
  const modelName = /^(seeded|file|[a-z]{1,24})$/.test(String(merged.model))
    ? String(merged.model)
    : 'seeded';
  const layer = Math.max(0, Math.min(63, Math.round(Number(merged.layer)) || 0));
  return {
    ...model,
    tokens: null,
    sourceTokens: null,
    stateDict: null,
    step,
    head,
    view,
    query,
    model: modelName,
    layer,
    ...normalizeSteer(merged),
    hubUrl: hubUrlOf(merged.hubUrl),
    hideColumns: listOf(merged.hideColumns),
    queries: listOf(merged.queries),
    combine: merged.combine === 'sum' ? 'sum' : 'mean',
    ...normalizeChat(merged),
  };
}

/** The state encoded by a query string ("?t=…"). Unknown parameters are ignored. */
export function stateFromSearch(search) {
  const q = new URLSearchParams(search);
  const s = {};
  for (const [key, [param, kind]] of Object.entries(PARAMS)) {
    if (!q.has(param)) continue;
    const v = q.get(param);
    if (kind === 'bool') s[key] = parseBool(v, DEMO_DEFAULTS[key]);
    else if (kind === 'int' || kind === 'num') s[key] = Number(v);
    else if (kind === 'toggles') s[key] = parseToggles(v);
    else if (kind === 'list') s[key] = listOf(v);
    else s[key] = v;
  }
  return normalizeState(s);
}

/** "?t=…&d=…" for a state (defaults omitted); "" when everything is default. */
export function searchFromState(state) {
  const s = normalizeState(state);
  const q = new URLSearchParams();
  for (const [key, [param, kind]] of Object.entries(PARAMS)) {
    const v = s[key],
      d = DEMO_DEFAULTS[key];
    if (kind === 'toggles' || kind === 'list') {
      if (v.length) q.set(param, kind === 'list' ? v.join(',') : formatToggles(v));
      continue;
    }
    if (v === d) continue;
    q.set(param, kind === 'bool' ? (v ? '1' : '0') : String(v));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}
