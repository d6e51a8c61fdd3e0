// The demo on a real checkpoint (issue #16): a Hugging Face model folder the reader opens or drops,
// read offline by attn.loadPretrained (File objects, tensor by tensor, with a progress bar). Shown
// on the input: its tokens, the steps and the heatmap of the chosen layer, every layer × head in an
// <attention-model-view>, the next-token top 10, greedy generation and the logit lens. A folder
// cannot be in a link, so demo.js keeps it out of the URL. Token text only goes through textContent.
import { attn } from './widgets.js';

const EXAMPLE = 'Hello world! The cat sat on the mat.';
const kMaxModelBytes = 3 * 2 ** 30;  // of the 4 GiB heap, leaving room for the page's other buffers
let folder = null;  // the loaded entry (one at a time)
let opened = 0;     // how many folders were opened: each entry's key

/** The folder's entry (demo.js treats it like a trained model named "folder"), or null. */
export function loadedFolder() { return folder; }

/** A token as shown: spaces and line breaks made visible. */
export const visible = (s) => String(s).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';

const mb = (bytes) => (bytes < 1e6 ? `${Math.round(bytes / 1e3)} kB` : `${(bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0)} MB`);
const depth = (f) => (f.webkitRelativePath || f.relativePath || f.name).split('/').length;

async function readJSON(file) {
  try {
    return JSON.parse(await file.text());
  } catch (error) {
    throw new Error(`${file.name} is not valid JSON (${error.message}).`);
  }
}

/**
 * Loads a checkpoint folder from its files (config.json, tokenizer.json, tokenizer_config.json,
 * model.safetensors or the shards with model.safetensors.index.json, matched by file name) and makes
 * it the loaded folder (the previous one is disposed only once this one has loaded).
 */
export async function openFolder(fileList, { folderName = '', onProgress } = {}) {
  const byName = new Map();
  for (const f of [...fileList].sort((a, b) => depth(a) - depth(b))) if (!byName.has(f.name)) byName.set(f.name, f);
  if (!byName.has('config.json')) {
    throw new Error(`the folder has no config.json (found ${byName.size ? [...byName.keys()].slice(0, 6).join(', ') : 'no files'}). `
      + 'Open the folder of a Hugging Face checkpoint: config.json, tokenizer.json and model.safetensors.');
  }
  const config = await readJSON(byName.get('config.json'));
  const tokenizer = byName.has('tokenizer.json') ? await readJSON(byName.get('tokenizer.json')) : null;
  const tokenizerConfig = byName.has('tokenizer_config.json') ? await readJSON(byName.get('tokenizer_config.json')) : null;
  const generationConfig = byName.has('generation_config.json') ? await readJSON(byName.get('generation_config.json')) : null;
  const chatTemplate = byName.has('chat_template.jinja') ? await byName.get('chat_template.jinja').text() : null;
  const shards = [...byName.values()].filter((f) => f.name.endsWith('.safetensors'));
  let weights, weightsIndex = null, size;
  if (byName.has('model.safetensors.index.json')) {
    weightsIndex = await readJSON(byName.get('model.safetensors.index.json'));
    const named = new Set(Object.values(weightsIndex?.weight_map ?? {}));
    const missing = [...named].filter((n) => !byName.has(n));
    if (missing.length) throw new Error(`a weights file is missing: model.safetensors.index.json names ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not in the folder.`);
    weights = shards.filter((f) => named.has(f.name));
    size = weights.reduce((n, f) => n + f.size, 0);
  } else {
    weights = byName.get('model.safetensors') ?? (shards.length === 1 ? shards[0] : null);
    const other = [...byName.keys()].find((n) => /^pytorch_model.*\.bin$|\.gguf$/i.test(n));
    if (!weights && other) {
      throw new Error(/\.gguf$/i.test(other) ? `${other} is a GGUF file (llama.cpp), which this page does not read: open the Hugging Face checkpoint with model.safetensors.`
        : `${other} holds PyTorch pickled weights, which this page does not read: convert them to safetensors (save_pretrained with safe_serialization=True).`);
    }
    if (!weights) {
      throw new Error(`the weights file is missing: the folder has no model.safetensors (nor model.safetensors.index.json with its shards)${
        shards.length ? `; it has ${shards.map((f) => f.name).join(', ')}: rename the one to open model.safetensors` : ''}.`);
    }
    size = weights.size;
  }
  let model;
  // Weights stay in the file's format in the heap (16-bit stays 16-bit): the model needs about its
  // file's size plus a forward's buffers. The page lets a model use up to 3 GiB of the 4 GiB heap.
  const memoryLimit = Math.min(kMaxModelBytes, Math.max(attn.memoryLimit(), Math.ceil(size * 1.2) + 256 * 2 ** 20));
  try {
    model = await attn.loadPretrained({ config, weights, weightsIndex, tokenizer, tokenizerConfig, generationConfig, chatTemplate, onProgress, memoryLimit });
  } catch (error) {
    if (error.code === 'TOO_LARGE') {
      throw new Error(`the weights (${mb(size)} of safetensors) are too large for this page, which gives a model at most `
        + `${mb(kMaxModelBytes)} of the 4 GiB WebAssembly heap: ${error.message}.`);
    }
    throw error;
  }
  const name = folderName || (byName.get('config.json').webkitRelativePath || '').split('/').slice(-2, -1)[0]
    || config._name_or_path || config.model_type || 'model';
  folder?.model.dispose();
  folder = makeEntry(model, String(name).split('/').pop(), Boolean(tokenizer));
  return folder;
}

function makeEntry(model, folderName, hasTokenizer) {
  const { maxPositions } = model, H = model.numHeads, dModel = H * model.headDim;
  const memo = new Map();  // a few forwards, keyed by ids and options (the model view asks for the same)
  const forward = (ids, options) => {
    const key = `${Array.from(ids.flat ? ids.flat() : ids).join(',')}|${JSON.stringify(options)}`;
    if (!memo.has(key)) {
      if (memo.size >= 6) memo.delete(memo.keys().next().value);
      memo.set(key, model.forward(ids, options));
    }
    return memo.get(key);
  };
  const entry = {
    name: 'folder', kind: 'pretrained', key: ++opened, model, folderName, hasTokenizer, maxPositions, example: EXAMPLE,
    label: `Folder: ${folderName} (${model.architecture})`,
    forward,
    // What <attention-model-view> needs of a model: config and forward (its ids come as [ids]).
    view: { config: { numLayers: model.numLayers, numHeads: H, dModel, causal: true }, forward },
    /** { tokens, ids, error, truncated } of the text (token ids typed with spaces when there is no tokenizer). */
    tokenize(text) {
      let ids;
      // A chat template's text already holds its special tokens (BOS included): none are added.
      if (hasTokenizer) ids = Array.from(model.encode(String(text), { addSpecialTokens: text !== entry.chatText }));
      else {
        ids = String(text).trim().split(/[\s,]+/).filter(Boolean).map(Number);
        const bad = ids.find((i) => !Number.isInteger(i) || i < 0 || i >= model.vocabSize);
        if (bad !== undefined) return { tokens: [], ids: [], error: `This folder has no tokenizer.json: type token ids (0 … ${model.vocabSize - 1}) separated by spaces.` };
      }
      if (!ids.length) return { tokens: [], ids: [], error: 'There are no tokens: type some.' };
      const truncated = ids.length > maxPositions;
      ids = ids.slice(0, maxPositions);
      return { ids, tokens: entry.strings(ids), error: '', truncated };
    },
    strings: (ids) => (hasTokenizer ? model.tokenStrings(ids) : Array.from(ids, String)),
  };
  return entry;
}

/** Renders the folder's model on state.text: every view on state.layer. Returns the top 10 shown. */
export function renderPretrained({ state, trained: entry, $, steps, heatmap, chips }) {
  const { model } = entry;
  const L = model.numLayers, H = model.numHeads;
  const layer = Math.min(state.layer, L - 1);
  const layerSelect = $('layer');
  if (layerSelect.childElementCount !== L) layerSelect.replaceChildren(...Array.from({ length: L }, (_, i) => new Option(`Layer ${i}`, String(i))));
  layerSelect.value = String(layer);
  $('layer-row').hidden = L < 2;
  const input = entry.tokenize(state.text);
  const shown = input.tokens.map(visible);
  chips($('chips'), shown);
  $('token-count').textContent = input.error || `${input.ids.length} token${input.ids.length === 1 ? '' : 's'}`
    + `${input.truncated ? ` (the first ${entry.maxPositions}: the model's longest input)` : ''} · ${entry.label.slice(8)}`;
  $('token-count').className = input.error ? 'bad' : '';
  for (const id of ['pretrained', 'model-view', 'lens']) $(id).hidden = Boolean(input.error);
  $('chat').hidden = !entry.hasTokenizer || entry.model.chatTemplateNames.length === 0;
  if (input.error) return null;
  const { ids } = input, T = ids.length;
  const r = entry.forward([ids], { attention: true, trace: { layers: [layer] } });
  const dModel = H * r.trace[layer].find((s) => s.name === 'q').shape.at(-1);
  steps.trace = { tokens: shown, steps: r.trace[layer], heads: H, dModel, causal: true };
  steps.setAttribute('step', state.step);
  steps.setAttribute('head', String(Math.min(state.head, H - 1)));
  heatmap.data = { weights: r.attention[layer].data, shape: [H, T, T], queryTokens: shown, keyTokens: shown };
  heatmap.setAttribute('head', state.view);
  heatmap.setAttribute('query', String(state.query));
  const view = $('model-view');
  if (view.model !== entry.view) view.model = entry.view;
  if (view.dataset.sig !== `${entry.key}|${ids}`) { view.dataset.sig = `${entry.key}|${ids}`; view.ids = ids; view.tokens = shown; }
  const top = topNext(entry, r.logits.data, T);
  renderTop($('next-table'), top);
  $('next-summary').textContent = `After “${shown[T - 1]}” (position ${T - 1}): the 10 likeliest next tokens hold `
    + `${(100 * top.reduce((s, t) => s + t.p, 0)).toFixed(1)}% of the probability. Layer ${layer} of ${L} is shown below.`;
  scheduleLens(entry, ids, shown, $);
  return top;
}

/** The 10 likeliest next tokens after the last position: softmax of the last logits row (in double). */
export function topNext(entry, logits, T) {
  const V = logits.length / T;
  const row = logits.subarray((T - 1) * V, T * V);
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  let z = 0;
  for (const x of row) z += Math.exp(x - max);
  const order = Array.from(row.keys()).sort((a, b) => row[b] - row[a]).slice(0, 10);
  const strings = entry.strings(order);
  return order.map((id, k) => ({ id, token: strings[k], p: Math.exp(row[id] - max) / z }));
}

function cell(tag, text, cls) {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
}

function renderTop(table, top) {
  const head = document.createElement('tr');
  for (const h of ['#', 'next token', 'id', 'probability']) { const th = cell('th', h); th.scope = 'col'; head.append(th); }
  const rows = top.map((t, k) => {
    const tr = document.createElement('tr');
    const bar = cell('span', '', 'bar');
    bar.style.width = `${Math.max(1, Math.round(120 * t.p))}px`;
    const prob = cell('td', `${(100 * t.p).toFixed(2)}%`, 'prob');
    prob.prepend(bar);
    tr.append(cell('td', String(k + 1)), cell('td', visible(t.token), 'tok'), cell('td', String(t.id), 'muted'), prob);
    return tr;
  });
  const caption = cell('caption', 'The ten likeliest next tokens, most likely first', 'visually-hidden');
  const thead = document.createElement('thead'), tbody = document.createElement('tbody');
  thead.append(head);
  tbody.append(...rows);
  table.replaceChildren(caption, thead, tbody);
}

// ---- the logit lens: computed a moment after the input settles (L + 1 passes through the head) ----

let lensTimer = 0, lensKey = '';

function scheduleLens(entry, ids, shown, $) {
  const key = `${entry.key}|${ids}`;
  if (key === lensKey) return;
  lensKey = key;
  clearTimeout(lensTimer);
  $('lens').dataset.state = 'pending';
  lensTimer = setTimeout(() => renderLens(entry, ids, shown, $), 150);
}

function renderLens(entry, ids, shown, $) {
  if (folder !== entry) return;
  const table = $('lens-table'), note = $('lens-note');
  let lens;
  try {
    lens = entry.model.forward([ids], { attention: false, logitLens: true }).logitLens;
  } catch (error) {
    // Feature detection: an older library refuses the option; the table appears once it exists.
    table.replaceChildren();
    note.textContent = /not implemented/.test(error.message) ? 'The logit lens is not available in this version of the library.' : `Logit lens: ${error.message}`;
    $('lens').dataset.state = 'unavailable';
    return;
  }
  const L = entry.model.numLayers, T = ids.length;
  const top = lens.ids.data, probs = lens.probs.data;
  const strings = entry.strings(top);
  const head = document.createElement('tr');
  head.append(cell('td', ''));
  shown.forEach((t, i) => { const th = cell('th', t, 'tok'); th.scope = 'col'; th.title = `position ${i}`; head.append(th); });
  const rows = Array.from({ length: L + 1 }, (_, l) => {
    const tr = document.createElement('tr');
    const th = cell('th', l === 0 ? 'Embeddings' : l === L ? `Layer ${l} (output)` : `Layer ${l}`);
    th.scope = 'row';
    tr.append(th);
    for (let t = 0; t < T; t++) {
      const p = probs[l * T + t];
      const td = cell('td', visible(strings[l * T + t]), 'tok');
      td.style.setProperty('--p', p.toFixed(3));
      td.title = `${(100 * p).toFixed(1)}%`;
      td.append(cell('span', ` ${(100 * p).toFixed(0)}%`, 'visually-hidden'));
      tr.append(td);
    }
    return tr;
  });
  const caption = cell('caption', 'Logit lens: rows are layers (the embeddings, then after each block), columns are positions; '
    + 'each cell is the likeliest next token read from that layer, shaded by its probability.', 'visually-hidden');
  const thead = document.createElement('thead'), tbody = document.createElement('tbody');
  thead.append(head);
  tbody.append(...rows);
  table.replaceChildren(caption, thead, tbody);
  note.textContent = `Each layer's residual stream put through the final norm and the output head; the last row is the model's own prediction. Darker = more probable.`;
  $('lens').dataset.state = 'ready';
}

// ---- the controls: folder input, drag and drop, progress, generation ----

/** Every file of dropped items: folders read one level deep (plus their subfolders' files). */
async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])].map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null)).filter(Boolean);
  if (!entries.length) return { files: [...dataTransfer.files], folderName: '' };
  const read = async (entry, level) => {
    if (entry.isFile) return [await new Promise((ok, no) => entry.file(ok, no))];
    if (!entry.isDirectory || level > 2) return [];
    const reader = entry.createReader(), all = [];
    for (let batch; (batch = await new Promise((ok, no) => reader.readEntries(ok, no))).length;) all.push(...batch);
    return (await Promise.all(all.map((e) => read(e, level + 1)))).flat().map((f) => Object.assign(f, { relativePath: `${entry.name}/${f.relativePath ?? f.name}` }));
  };
  const files = (await Promise.all(entries.map((e) => read(e, 1)))).flat();
  return { files, folderName: entries.length === 1 && entries[0].isDirectory ? entries[0].name : '' };
}

/**
 * Wires the folder input, drag and drop onto the page, the progress bar and the Generate button.
 * hooks: opened(entry) after a load, getText(), setText(text).
 */
export function attachFolder($, hooks) {
  const note = $('model-note'), progress = $('folder-progress'), progressText = $('folder-progress-text');
  let busy = false;
  async function open(files, folderName) {
    if (busy || !files.length) return;
    busy = true;
    note.className = 'note';
    note.textContent = '';
    progress.value = 0;
    $('folder-progress-row').hidden = false;
    progressText.textContent = 'Loading weights: 0 %';
    let shownPercent = 0;
    try {
      const entry = await openFolder(files, { folderName, onProgress: (done, total) => {
        progress.value = total ? (100 * done) / total : 100;
        const percent = Math.floor(progress.value);
        if (percent !== shownPercent) { shownPercent = percent; progressText.textContent = `Loading weights: ${percent} %`; }
      } });
      const option = $('model').querySelector('option[value="folder"]');
      option.textContent = entry.label;
      option.hidden = false;
      await hooks.opened(entry);
      note.textContent = `Opened ${entry.label.slice(8)}: ${entry.model.numLayers} layers, ${entry.model.numHeads} heads`
        + `${entry.hasTokenizer ? '' : ' (no tokenizer.json: type token ids)'}. A folder cannot be in a link: Copy link shares the last preset.`;
    } catch (error) {
      note.className = 'note bad';
      note.textContent = `Could not open the folder: ${error.message}`;
    } finally {
      $('folder-progress-row').hidden = true;
      busy = false;
    }
  }
  $('model-folder').addEventListener('change', (e) => {
    const files = [...e.target.files];
    e.target.value = '';
    open(files, '');
  });
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  let leaveTimer = 0;
  document.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    document.body.classList.add('dragging');
    clearTimeout(leaveTimer);
    leaveTimer = setTimeout(() => document.body.classList.remove('dragging'), 300);
  });
  document.addEventListener('drop', async (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    document.body.classList.remove('dragging');
    const { files, folderName } = await droppedFiles(e.dataTransfer);
    open(files, folderName);
  });
  $('generate').addEventListener('click', () => generate($, hooks));
  $('generate-stop').addEventListener('click', () => generation?.abort());
  $('chat').addEventListener('submit', (e) => {
    e.preventDefault();
    if (!folder) return;
    const system = $('chat-system').value.trim(), content = $('chat-message').value;
    const messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content }];
    try {
      const text = folder.model.applyChatTemplate(messages, { addGenerationPrompt: true, tokenize: false });
      folder.chatText = text;
      $('chat-note').textContent = 'The chat template’s text is the input now: its special tokens are the chips marked by brackets. Generate answers it.';
      hooks.setText(text);
    } catch (error) {
      $('chat-note').textContent = `Could not apply the chat template: ${error.message}`;
    }
  });
}

let generation = null;  // the running generation's AbortController

// Up to 20 greedy tokens after the input, shown as they come (generateStream yields to the page
// between tokens); Stop ends it. The tokens are appended to the input at the end.
async function generate($, hooks) {
  const button = $('generate'), stop = $('generate-stop'), out = $('generate-note');
  if (!folder || generation) return;
  const input = folder.tokenize(hooks.getText());
  const n = Math.min(20, folder.maxPositions - input.ids.length);
  if (input.error || n < 1) { out.textContent = input.error || `The input already fills the model's ${folder.maxPositions} positions.`; return; }
  const entry = folder, ids = [];
  generation = new AbortController();
  button.disabled = true;
  stop.hidden = false;
  out.textContent = 'Generating…';
  let text = '';
  try {
    for await (const token of entry.model.generateStream(input.ids, { maxNewTokens: n, signal: generation.signal })) {
      ids.push(token.id);
      text = entry.hasTokenizer ? entry.model.decode(ids) : ` ${ids.join(' ')}`;
      out.textContent = `Generating (${ids.length} of ${n}): “${text}”`;
    }
    const why = generation.signal.aborted ? ', stopped by you' : ids.length < n ? ', stopped at its end-of-sequence token' : '';
    out.textContent = `Generated ${ids.length} tokens (greedy${why}), appended to the input: “${text}”`;
    if (ids.length && folder === entry) {
      const chat = hooks.getText() === entry.chatText;
      hooks.setText(hooks.getText() + text);
      if (chat) entry.chatText = hooks.getText();  // still the template's text: no special tokens added
    }
  } catch (error) {
    out.textContent = `Could not generate: ${error.message}`;
  } finally {
    generation = null;
    button.disabled = false;
    stop.hidden = true;
  }
}
