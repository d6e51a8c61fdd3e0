// The demo on a real checkpoint: a Hugging Face model folder or a GGUF file (or a split one's parts)
// the reader opens or drops, read offline by attn.loadPretrained in the model worker
// (web/workers/model-worker.js: File objects, tensor by tensor, with a progress bar), where its weights
// stay. Here: the model's source (the interface of web/demo-models.js, an async proxy to the worker)
// and its own controls — the folder input, drag and drop, greedy generation streamed token by token
// with Stop, the chat form. A folder or file cannot be in a link (ref null). Token text and the file's
// own strings only go through textContent.
import { visible } from './demo-trained.js';
import { ggufLabel, ggufNote, opensAsGGUF } from './demo-gguf.js';
import { WorkerClient } from './workers/rpc.js';

const EXAMPLE = 'Hello world! The cat sat on the mat.';
const depth = (f) => (f.webkitRelativePath || f.relativePath || f.name).split('/').length;

// ---- the worker and its proxy ----------------------------------------------------------------

// This module's one state object: the model worker's client (web/workers/rpc.js: it starts the
// worker on the first request, and a new one after a failure) and the running generation.
const folder = {
  worker: new WorkerClient(
    () => new Worker(new URL('./workers/model-worker.js', import.meta.url), { type: 'module' }),
    { onFail: (e) => `the model worker failed: ${e.message || 'see the console'}` },
  ),
  generation: null, // the running generation's AbortController
  busy: false, // a folder is being opened
  open: null, // opens files (a folder's or a GGUF file's) once attachFolder has wired the page
  hooks: null, // attachFolder's hooks: opened(source) shows a model
};

/**
 * Sends a request; resolves to its answer. `on`: { progress(done, total), token(t) } while it runs,
 * and `signal`, whose abort asks the worker to stop it (a generation after its current token, a
 * patch at its next batch).
 */
function request(type, args, { progress, token, signal } = {}) {
  return folder.worker.call(type, args, { onProgress: progress, onEvent: token, signal });
}

/**
 * Greedy tokens after `text` from the worker, as an async iterator of { id, text (all so far), of };
 * the request is sent now, and `signal` aborting ends it after the token being computed.
 */
function generateTokens(args, signal) {
  const queue = [];
  let end = null,
    wake = null;
  const p = request('generate', args, {
    token: (t) => {
      queue.push(t);
      wake?.();
    },
    signal,
  });
  const finish = (outcome) => {
    end = outcome;
    wake?.();
  };
  p.then(
    (v) => finish({ v }),
    (e) => finish({ e }),
  );
  return (async function* tokens() {
    for (;;) {
      if (queue.length) {
        yield queue.shift();
        continue;
      }
      if (end) {
        if (end.e) throw end.e;
        return end.v;
      }
      await new Promise((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  })();
}

/** The views a folder's model shows (the chat form where its tokenizer has a chat template). */
const folderViews = (info) => ({
  settings: false,
  maskEditor: false,
  predictions: 'next',
  modelView: true,
  lens: true,
  generate: true,
  chat: info.hasTokenizer && info.chatTemplateNames.length > 0,
});

const folderInfo = (info) => ({
  numLayers: info.numLayers,
  numHeads: info.numHeads,
  numKVHeads: info.numKVHeads,
  headDim: info.headDim,
  hiddenSize: info.hiddenSize,
  vocabSize: info.vocabSize,
  maxPositions: info.maxPositions,
  causal: true,
  architecture: info.architecture,
  layers: info.layers,
});

/** forward() through the worker, remembering a few answers by ids and options (a layer switch back is instant). */
function memoForward(key) {
  const memo = new Map();
  const forward = (ids, { layer = null, rows = 'all', attention = true } = {}) => {
    const k = `${ids}|${layer}|${rows}|${attention}`;
    if (!memo.has(k)) {
      if (memo.size >= 6) memo.delete(memo.keys().next().value);
      const p = request('forward', { key, ids: Array.from(ids), layer, rows, attention });
      p.catch(() => memo.delete(k));
      memo.set(k, p);
    }
    return memo.get(k);
  };
  return { forward, clear: () => memo.clear() };
}

/** The model source of an opened folder (info: the worker's description of its model). */
function folderSource(info) {
  const { key } = info;
  const memo = memoForward(key);
  const source = {
    name: 'folder',
    label: info.gguf
      ? ggufLabel(info)
      : info.hub
        ? `Hub: ${info.hub.repo} (${info.architecture})`
        : `Folder: ${info.folderName} (${info.architecture})`,
    ref: null,
    key,
    folderName: info.folderName,
    hasTokenizer: info.hasTokenizer,
    example: EXAMPLE,
    firstStep: 'weights',
    preset: null,
    words: null,
    views: folderViews(info),
    info: folderInfo(info),
    /** The chat template's last text: it holds its special tokens, so none are added when it is read. */
    chatText: null,
    async tokenize(text) {
      const r = await request('tokenize', { key, text, addSpecialTokens: text !== source.chatText });
      return { ...r, tokens: r.tokens.map(visible) };
    },
    forward: memo.forward,
    strings: (ids) => request('strings', { key, ids: Array.from(ids) }),
    async scored(ids) {
      return [0, ids.length];
    },
    logitLens: (ids) => request('logitLens', { key, ids: Array.from(ids) }),
    generate: (text, { maxNewTokens, signal }) =>
      generateTokens({ key, text, addSpecialTokens: text !== source.chatText, maxNewTokens }, signal),
    /** The Steer panel's recipe in the worker (its job `steer`): the plain and the steered continuations. */
    steer: (recipe, { signal, onToken } = {}) =>
      request('steer', { key, recipe }, { token: onToken, signal }),
    headScores: (ids, options = {}) => request('headScores', { key, ids: Array.from(ids), options }),
    logitAttribution: (ids, options = {}) =>
      request('logitAttribution', { key, ids: Array.from(ids), options }),
    /** Activation patching in the worker: `signal` aborting rejects it (AbortError) at its next batch. */
    patch: (options, { signal, onProgress } = {}) =>
      request('patch', { key, options }, { progress: onProgress, signal }),
    saliency: (ids, options = {}, { signal, onProgress } = {}) =>
      request('saliency', { key, ids: Array.from(ids), options }, { progress: onProgress, signal }),
    attributionPatch: (options, { signal, onProgress } = {}) =>
      request('attributionPatch', { key, options }, { progress: onProgress, signal }),
    qkAttribution: (ids, options) => request('qkAttribution', { key, ids: Array.from(ids), options }),
    /** A long prompt (web/demo-long.js): its plan, its prefill (abortable), one head's overview or tile. */
    longPlan: (T) => request('longPlan', { key, T }),
    longPrefill: (ids, { signal, onProgress } = {}) =>
      request('longPrefill', { key, ids: Array.from(ids) }, { progress: onProgress, signal }),
    longOverview: (layer, head) => request('longOverview', { key, layer, head }),
    longTile: (layer, head, rows, cols) => request('longTile', { key, layer, head, rows, cols }),
    async chat(messages) {
      const text = await request('chat', { key, messages });
      source.chatText = text;
      return text;
    },
    dispose() {
      memo.clear();
      folder.worker.notify('dispose', { key });
    },
  };
  return source;
}

// ---- the controls: folder input, drag and drop, progress, generation, chat ----

/** Every file of dropped items: folders read one level deep (plus their subfolders' files). */
async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])]
    .map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null))
    .filter(Boolean);
  if (!entries.length) return { files: [...dataTransfer.files], folderName: '' };
  const read = async (entry, level) => {
    if (entry.isFile) return [await new Promise((ok, no) => entry.file(ok, no))];
    if (!entry.isDirectory || level > 2) return [];
    const reader = entry.createReader(),
      all = [];
    for (let batch; (batch = await new Promise((ok, no) => reader.readEntries(ok, no))).length;)
      all.push(...batch);
    return (await Promise.all(all.map((e) => read(e, level + 1))))
      .flat()
      .map((f) => Object.assign(f, { relativePath: `${entry.name}/${f.relativePath ?? f.name}` }));
  };
  const files = (await Promise.all(entries.map((e) => read(e, 1)))).flat();
  return { files, folderName: entries.length === 1 && entries[0].isDirectory ? entries[0].name : '' };
}

/** One file per name, the shallowest (a folder's own files before its subfolders'). */
function filesByName(fileList) {
  const byName = new Map();
  for (const f of [...fileList].sort((a, b) => depth(a) - depth(b)))
    if (!byName.has(f.name)) byName.set(f.name, f);
  return byName;
}

/** The files a model was read from (a figure of it names them: a folder is not in a link). */
const modelFiles = (byName) =>
  [...byName.keys()]
    .filter((n) =>
      /^(config|tokenizer|tokenizer_config|generation_config)\.json$|^chat_template\.jinja$|\.safetensors(\.index\.json)?$/.test(
        n,
      ),
    )
    .sort();

/** The progress bar and its text while weights load (the text changes once per whole percent). */
function progressReporter($) {
  const progress = $('folder-progress'),
    progressText = $('folder-progress-text');
  progress.value = 0;
  $('folder-progress-row').hidden = false;
  progressText.textContent = 'Loading weights: 0 %';
  let shownPercent = 0;
  return (done, total) => {
    progress.value = total ? (100 * done) / total : 100;
    const percent = Math.floor(progress.value);
    if (percent !== shownPercent) {
      shownPercent = percent;
      progressText.textContent = `Loading weights: ${percent} %`;
    }
  };
}

/** The note after a folder opened (a GGUF file's is ggufNote's). */
const folderNote = (info) =>
  `Opened ${info.folderName} (${info.architecture}): ${info.numLayers} layers, ${info.numHeads} heads` +
  `${info.hasTokenizer ? '' : ' (no tokenizer.json: type token ids)'}. A folder cannot be in a link: Copy link shares the last preset.`;

/** Opens a folder's files (or a GGUF file, or a split one's parts) in the worker and shows its model (one at a time). */
async function openFolder($, hooks, fileList, folderName) {
  if (folder.busy || !fileList.length) return;
  folder.busy = true;
  const note = $('model-note');
  note.className = 'note';
  note.textContent = '';
  const progress = progressReporter($);
  const byName = filesByName(fileList);
  const gguf = opensAsGGUF([...byName.keys()]);
  try {
    const name =
      folderName || (byName.get('config.json')?.webkitRelativePath || '').split('/').slice(-2, -1)[0] || '';
    const activations = $('gguf-activations').value;
    const info = await request('open', { files: [...byName], folderName: name, activations }, { progress });
    const source = folderSource(info);
    source.files = info.gguf ? info.gguf.files : modelFiles(byName);
    const option = $('model').querySelector('option[value="folder"]');
    option.textContent = source.label;
    option.hidden = false;
    await hooks.opened(source);
    note.textContent = info.gguf ? ggufNote(info) : folderNote(info);
  } catch (error) {
    note.className = 'note bad';
    note.textContent = `Could not open the ${gguf ? 'model' : 'folder'}: ${error.message}`;
  } finally {
    $('folder-progress-row').hidden = true;
    folder.busy = false;
  }
}

/** A Hub job of the model worker that shows no model (hubFiles, hubCacheList, hubCacheDelete): its answer. */
export const hubRequest = (type, args = {}, { signal } = {}) => request(type, args, { signal });

/**
 * Opens a Hugging Face Hub repository in the model worker (args: its job hubOpen's: hub, file,
 * revision, hubUrl, token, kind, size, activations) and shows its model in the Model control. `on`:
 * progress(done, total), phase({ phase: 'download' | 'load', bytesPerSecond }), signal (Stop), files
 * (the paths a figure names). Resolves to the model's
 * description; rejects with the worker's error (ABORTED after Stop). One open at a time (a folder's too).
 */
export async function openHubModel(args, { progress, phase, signal, files }) {
  if (folder.busy) throw new Error('another model is being opened: wait for it, or stop it');
  folder.busy = true;
  try {
    const info = await request('hubOpen', args, { progress, token: phase, signal });
    const source = folderSource(info);
    source.files = files;
    source.hubName = args.file ? `${args.hub}:${args.file}` : args.hub; // what a chat's link names
    const option = document.getElementById('model').querySelector('option[value="folder"]');
    option.textContent = source.label;
    option.hidden = false;
    await folder.hooks.opened(source);
    return info;
  } finally {
    folder.busy = false;
  }
}

/** Opens picked files as a folder's are (Open a model… with a GGUF file or a split one's parts). */
export function openModelFiles(files) {
  folder.open?.(files, '');
}

/** Files or a folder dropped anywhere on the page open; the page shows it accepts them while dragged. */
function attachDrop(open) {
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
}

/**
 * The chat form: the model's chat template applied to the messages becomes the input (the prompt a
 * reply is watched after: its text and token count on the source; the messages in the state).
 * Resolves to whether it did.
 */
async function applyChat($, hooks) {
  const source = hooks.source();
  if (!source?.views.chat) return false;
  const system = $('chat-system').value.trim(),
    content = $('chat-message').value;
  const messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content }];
  try {
    const text = await source.chat(messages);
    source.chatPrompt = { text, length: (await source.tokenize(text)).ids.length };
    $('chat-note').textContent =
      'The chat template’s text is the input now: its special tokens are the chips marked by brackets. Generate answers it.';
    const chat = { chatSystem: system, chatUser: content, chatReply: '', chatToken: -1 };
    hooks.setText(text, chat);
    return true;
  } catch (error) {
    $('chat-note').textContent = `Could not apply the chat template: ${error.message}`;
    return false;
  }
}

/**
 * Wires the folder input, drag and drop onto the page, the progress bar, Generate/Stop and the chat
 * form. hooks: opened(source) after a load, source() the source shown, getText(), setText(text).
 */
export function attachFolder($, hooks) {
  const open = (files, folderName) => openFolder($, hooks, files, folderName);
  folder.open = open;
  folder.hooks = hooks;
  $('model-folder').addEventListener('change', (e) => {
    const files = [...e.target.files];
    e.target.value = '';
    open(files, '');
  });
  attachDrop(open);
  $('generate').addEventListener('click', () => generate($, hooks));
  $('generate-stop').addEventListener('click', () => folder.generation?.abort());
  $('chat').addEventListener('submit', (e) => {
    e.preventDefault();
    applyChat($, hooks);
  });
  // Watch a chat: the template applied, then the reply streamed (web/demo-chat.js shows it).
  $('chat-watch').addEventListener('click', async () => {
    if (await applyChat($, hooks)) generate($, hooks);
  });
}

// Up to 20 greedy tokens after the input, shown as they come; Stop ends the worker's stream (a Stop
// during the prompt's prefill, before the first token, ends with none). The tokens are appended to
// the input at the end.
async function generate($, hooks) {
  const button = $('generate'),
    stop = $('generate-stop'),
    out = $('generate-note');
  const source = hooks.source();
  if (!source?.views.generate || folder.generation) return;
  folder.generation = new AbortController();
  const { signal } = folder.generation;
  const tokens = source.generate(hooks.getText(), { maxNewTokens: 20, signal });
  button.disabled = true;
  stop.hidden = false;
  out.textContent = 'Generating…';
  let text = '',
    count = 0,
    of = 20;
  try {
    for await (const token of tokens) {
      count++;
      ({ text, of } = token);
      if (source.chatText === source.chatPrompt?.text) hooks.onChatToken?.(token, count);
      out.textContent = `Generating (${count} of ${of}): “${text}”`;
    }
    const why = signal.aborted
      ? ', stopped by you'
      : count < of
        ? ', stopped at its end-of-sequence token'
        : '';
    out.textContent = `Generated ${count} tokens (greedy${why}), appended to the input: “${text}”`;
    if (count && hooks.source() === source) {
      const chat = hooks.getText() === source.chatText;
      const prompt = source.chatPrompt?.text ?? '';
      const all = hooks.getText() + text;
      // still the template's text: no special tokens added; the reply is what follows its prompt
      if (chat) source.chatText = all;
      hooks.setText(
        all,
        chat && all.startsWith(prompt) ? { chatReply: all.slice(prompt.length), chatToken: -1 } : {},
      );
    }
  } catch (error) {
    out.textContent = error.code === 'INPUT' ? error.message : `Could not generate: ${error.message}`;
  } finally {
    folder.generation = null;
    button.disabled = false;
    stop.hidden = true;
  }
}
