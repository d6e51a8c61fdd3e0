// The demo's trained models: the presets of web/presets/ (docs/presets.md) and any TinyTransformer
// safetensors file the reader opens (a trainer export). Loads them once, reads the input through the
// model's own vocabulary, runs the model (attention of every layer, the chosen layer traced) and
// ranks its next-token predictions. Token text only ever goes through textContent.
import { attn } from './widgets.js';

export const PRESETS = ['reverse', 'copy', 'sort', 'induction', 'text'];
const loaded = new Map();  // name → entry

/** { name, model, preset | null, vocab: string[], index: Map<string, id> } for a file's bytes. */
function entryOf(name, bytes) {
  const meta = attn.readSafetensorsMetadata(bytes);
  const preset = meta.preset ? JSON.parse(meta.preset) : null;
  const model = attn.TinyTransformer.fromSafetensors(bytes);
  const vocab = preset?.tokens ?? Array.from({ length: model.config.vocabSize }, (_, i) => String(i));
  return { name, model, preset, vocab, index: new Map(vocab.map((t, i) => [t, i])) };
}

/** A preset by name (fetched from this origin once). */
export async function loadPreset(name) {
  if (!loaded.has(name)) {
    const response = await fetch(new URL(`./presets/${name}.safetensors`, import.meta.url));
    if (!response.ok) throw new Error(`the preset “${name}” could not be fetched (${response.status})`);
    loaded.set(name, entryOf(name, new Uint8Array(await response.arrayBuffer())));
  }
  return loaded.get(name);
}

/** A model file the reader opened: replaces any earlier one (named "file"). */
export function loadFile(bytes) {
  loaded.get('file')?.model.dispose();
  const entry = entryOf('file', bytes);
  loaded.set('file', entry);
  return entry;
}

export function loadedModel(name) { return loaded.get(name) ?? null; }

/** The input a model starts on: the preset's own example, else the first tokens of its vocabulary. */
export function exampleInput(entry) {
  if (entry.example) return entry.example;  // an opened checkpoint folder (demo-pretrained.js)
  if (entry.preset?.name === 'reverse') return '3 1 4 1 5 9 | 9 5 1 4 1';
  if (entry.preset?.name === 'copy') return '3 1 4 1 5 9 | 3 1 4 1 5';
  if (entry.preset?.name === 'sort') return '3 1 4 1 5 | 1 1 3 4';
  if (entry.preset?.name === 'induction') return '3 9 12 5 1 7 14 3 9 12 5 1 7 14 2 8 0 11';
  if (entry.preset?.kind === 'text') return 'The weights of a head sum to one.';
  return entry.vocab.slice(0, Math.min(6, entry.model.config.maxLength)).join(' ');
}

/**
 * The input as the model's tokens: characters for a text model (unknown ones read as its unknown
 * token), else whitespace-separated vocabulary entries. { tokens, ids, error, truncated }.
 */
export function tokenizeFor(entry, text) {
  if (entry.tokenize) return entry.tokenize(text);  // an opened checkpoint folder: its own tokenizer
  const max = entry.model.config.maxLength;
  let parts;
  if (entry.preset?.kind === 'text') {
    parts = [...String(text)].map((c) => (entry.index.has(c) ? c : entry.preset.unknownToken));
  } else {
    parts = String(text).trim().split(/\s+/).filter(Boolean);
    const bad = parts.find((p) => !entry.index.has(p));
    if (bad !== undefined) {
      const shown = entry.vocab.length > 12 ? `${entry.vocab.slice(0, 12).join(' ')} …` : entry.vocab.join(' ');
      return { tokens: [], ids: [], error: `“${bad}” is not in this model’s vocabulary (${shown}).` };
    }
  }
  const truncated = parts.length > max;
  parts = parts.slice(0, max);
  if (!parts.length) return { tokens: [], ids: [], error: 'There are no tokens: type some.' };
  return { tokens: parts, ids: parts.map((p) => entry.index.get(p)), error: '', truncated };
}

/** Logits, every layer's attention (H, T, T) and the chosen layer's trace. */
export function runModel(entry, ids, layer, mask = null) {
  const T = ids.length;
  const r = entry.model.forward([ids], { attention: true, trace: { layers: [layer] }, mask: mask && { data: mask, shape: [T, T] } });
  return { logits: r.logits.data, attention: r.attention.map((w) => w.data), trace: r.trace[layer] };
}

/**
 * Per position: the 3 likeliest next tokens with probabilities, and whether the actual next one is
 * first. In a task preset the inputs are random, so only answer positions (t ≥ L) are scored.
 */
export function predictions(entry, ids, logits) {
  const V = entry.model.config.vocabSize;
  // Induction data: only the repeat (positions n … 2n − 2, n where the first symbol recurs) is predictable.
  let scoredFrom = entry.preset?.kind === 'task' ? entry.preset.task.length : 0, scoredTo = ids.length;
  if (entry.preset?.kind === 'repeat') {
    const n = ids.indexOf(ids[0], 1);
    [scoredFrom, scoredTo] = n > 0 ? [n, 2 * n - 1] : [ids.length, ids.length];
  }
  return ids.map((_, t) => {
    const row = logits.subarray(t * V, (t + 1) * V);
    const max = Math.max(...row);
    const e = Array.from(row, (x) => Math.exp(x - max));
    const z = e.reduce((a, b) => a + b, 0);
    const top = e.map((p, id) => ({ id, p: p / z })).sort((a, b) => b.p - a.p).slice(0, 3)
      .map(({ id, p }) => ({ token: entry.vocab[id], p }));
    const next = t + 1 < ids.length ? entry.vocab[ids[t + 1]] : null;
    return { top, next, correct: next === null || t < scoredFrom || t >= scoredTo ? null : top[0].token === next };
  });
}

const shownToken = (t) => (t === ' ' ? '␣' : t === '\n' ? '↵' : t);

/** The predictions as a table: position, token, top 3 (probabilities), the actual next token ✓/✗. */
export function renderPredictions(table, tokens, preds) {
  const cell = (tag, text, cls) => { const c = document.createElement(tag); c.textContent = text; if (cls) c.className = cls; return c; };
  const head = document.createElement('tr');
  for (const h of ['#', 'token', '1st', '2nd', '3rd', 'actual next']) head.append(cell('th', h));
  head.querySelectorAll('th').forEach((th) => th.setAttribute('scope', 'col'));
  const rows = preds.map((p, t) => {
    const tr = document.createElement('tr');
    tr.append(cell('td', String(t)), cell('td', shownToken(tokens[t]), 'tok'));
    for (const { token, p: prob } of p.top) tr.append(cell('td', `${shownToken(token)}  ${(100 * prob).toFixed(1)}%`, 'tok'));
    if (p.next === null) tr.append(cell('td', '—'));
    else if (p.correct === null) tr.append(cell('td', `${shownToken(p.next)} (not predictable)`, 'muted'));
    else tr.append(cell('td', `${shownToken(p.next)} ${p.correct ? '✓ right' : '✗ wrong'}`, p.correct ? 'ok' : 'bad'));
    return tr;
  });
  const thead = document.createElement('thead');
  thead.append(head);
  const tbody = document.createElement('tbody');
  tbody.append(...rows);
  table.replaceChildren(thead, tbody);
  const scored = preds.filter((p) => p.correct !== null);
  return { right: scored.filter((p) => p.correct).length, scored: scored.length };
}
