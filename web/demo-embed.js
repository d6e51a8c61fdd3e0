// "Put these widgets in your own page": the copy-paste snippet for what the demo shows right now, and
// how many custom elements the widgets module defines (counted from its registry, ELEMENTS). The
// seeded layer is the settings' own: its four views, with every setting that differs from the
// widgets' defaults as an attribute. A trained model is a safetensors file: <attention-model-view>
// loads it by `src` and opens its heads in an <attention-steps>. The snippet is text (textContent).
import { DEFAULT_CONFIG, ELEMENTS, formatToggles } from './widgets.js';
import { $ } from './demo-dom.js';
import { visible } from './demo-trained.js';

// Config keys that are not attributes in the snippet (text and source are written apart).
const NOT_ATTRIBUTES = ['text', 'source', 'cross', 'tokens', 'sourceTokens', 'stateDict'];

/** Text for a double-quoted HTML attribute in the copy-paste snippet. */
export function escapeAttr(s) {
  return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const kebab = (key) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const scriptTag = () => `<script type="module" src="${location.origin}/web/widgets.js"></script>\n\n`;

/** The model attributes of a config: the text, then each setting that differs from the widgets' default. */
function configAttributes(c) {
  const attrs = [`text="${escapeAttr(c.text)}"`];
  for (const [key, d] of Object.entries(DEFAULT_CONFIG)) {
    if (NOT_ATTRIBUTES.includes(key)) continue;
    const v = c[key];
    if (key === 'toggles') {
      if (v.length) attrs.push(`toggles="${formatToggles(v)}"`);
    } else if (key === 'kvHeads') {
      if (v && v !== c.heads) attrs.push(`kv-heads="${v}"`);
    } else if (v !== d) attrs.push(`${kebab(key)}="${escapeAttr(v)}"`);
  }
  if (c.cross) attrs.push('cross', `source="${escapeAttr(c.source)}"`);
  return attrs.join(' ');
}

/** The seeded layer's views: steps (on the step and head shown), heatmap, mask editor, encoding table. */
export function seededSnippet(c) {
  const a = configAttributes(c);
  const steps = `${c.step !== 'scores' ? ` step="${c.step}"` : ''}${c.head ? ` head="${c.head}"` : ''}`;
  const query = c.query >= 0 ? ` query="${c.query}"` : '';
  return (
    scriptTag() +
    `<attention-steps ${a}${steps}></attention-steps>\n` +
    `<attention-heatmap ${a} head="${c.view}"${query}></attention-heatmap>\n` +
    `<mask-editor ${a}></mask-editor>\n` +
    `<positional-encoding-heatmap d-model="${c.dModel}" base="${c.base}"></positional-encoding-heatmap>`
  );
}

/** Where a trained source's file is, for `src`, with a comment when the reader has to serve it. */
function modelFile(source) {
  if (source.ref && source.ref === source.name && source.preset && source.name !== 'file')
    return { src: new URL(`./presets/${source.name}.safetensors`, import.meta.url).href, note: '' };
  if (source.fileName)
    return {
      src: source.fileName,
      note: `<!-- Serve “${source.fileName}”, the file you opened, next to your page. -->\n`,
    };
  return {
    src: '',
    note:
      '<!-- A checkpoint folder is read on this device and has no URL: load it in your page and set the ' +
      "model view's `model` property (docs/checkpoints.md). -->\n",
  };
}

/** The sequence attributes: the ids, and their texts where the model names them (no spaces inside). */
function sequenceAttributes(source, input) {
  if (!input || input.error || !input.ids?.length) return '';
  const tokens = input.tokens.map(visible);
  const named = (source.preset?.tokens || source.name === 'folder') && !tokens.some((t) => /\s/.test(t));
  return ` ids="${Array.from(input.ids).join(' ')}"${named ? ` tokens="${escapeAttr(tokens.join(' '))}"` : ''}`;
}

/** A trained model's views: its layer × head grid, whose heads open step by step, and the steps view. */
export function modelSnippet(source, input, state) {
  const { src, note } = modelFile(source);
  const head = state.head ? ` head="${state.head}"` : '';
  const shown = ['<attention-heatmap>', ...(source.views.maskEditor ? ['<mask-editor>'] : [])];
  return (
    scriptTag() +
    note +
    `<attention-model-view${src ? ` src="${escapeAttr(src)}"` : ''}${sequenceAttributes(source, input)} steps="steps"></attention-model-view>\n` +
    `<attention-steps id="steps" step="${state.step}"${head}></attention-steps>\n` +
    `<!-- ${shown.join(' and ')} draw a trained model's attention from the data your page sets ` +
    '(their `data` property: docs/widgets.md). -->'
  );
}

/**
 * Fills the snippet for what is shown: the seeded layer's settings, or a trained source on its
 * tokenized input (`input`, when the render has it).
 */
export function showEmbed({ state, source, input = null }) {
  const code = $('embed-code');
  if (!source || source.views.settings) code.textContent = seededSnippet(state);
  else code.textContent = modelSnippet(source, input, state);
  code.dataset.model = source?.name ?? state.model;
}

/** The element count in the section's text: what widgets.js registers. */
export function showElementCount() {
  $('element-count').textContent = String(Object.keys(ELEMENTS).length);
}
