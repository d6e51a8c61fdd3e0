// "Open from Hugging Face…": a model by its Hub name (docs/hub.md), through the model worker's hub
// jobs (web/workers/model-worker.js: hubFiles, hubOpen, hubCacheList, hubCacheDelete). Nothing is
// fetched until the reader asks: Check size (or a model of the list) asks the Hub for the file list
// only, the size is stated with this browser's storage estimate, and Download and open starts the
// download (persistent storage asked first when it is large), with a progress bar and Stop. What the
// browser keeps (OPFS) is listed with its sizes, each with Delete. The Hub is https://huggingface.co,
// or the mirror the demo state names (`hub-url` in the link). The token goes to the worker with the
// call and nowhere else: never in the store, the link or storage. Text from the Hub only goes
// through textContent.
import { page } from './demo-store.js';
import { hubRequest, openHubModel } from './demo-pretrained.js';
import { mb } from './demo-gguf.js';

/** A byte count for people, up to gigabytes: "31 kB", "145 MB", "10.7 GB". */
const size = (bytes) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : mb(bytes));

const kHubUrl = 'https://huggingface.co';
/** Above this many bytes, the page asks the browser to keep its storage (navigator.storage.persist). */
const kLargeDownload = 100e6;
const kRepo = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;

/** Small models of the families this library opens, that run well in a page (sizes as the Hub lists them, rounded). */
const CURATED = [
  {
    repo: 'bartowski/SmolLM2-135M-Instruct-GGUF',
    file: 'Q4_K_M',
    name: 'SmolLM2 135M Instruct',
    bytes: 105e6,
  },
  { repo: 'bartowski/SmolLM2-135M-Instruct-GGUF', file: 'Q8_0', name: 'SmolLM2 135M Instruct', bytes: 145e6 },
  {
    repo: 'bartowski/SmolLM2-360M-Instruct-GGUF',
    file: 'Q4_K_M',
    name: 'SmolLM2 360M Instruct',
    bytes: 271e6,
  },
  { repo: 'bartowski/SmolLM2-360M-Instruct-GGUF', file: 'Q8_0', name: 'SmolLM2 360M Instruct', bytes: 386e6 },
  { repo: 'bartowski/Qwen_Qwen3-0.6B-GGUF', file: 'Q4_K_M', name: 'Qwen3 0.6B', bytes: 484e6 },
  { repo: 'openai-community/gpt2', file: '', name: 'GPT-2 (safetensors)', bytes: 550e6 },
];

// This view's one state object: the listing awaiting confirmation and the running download.
const hub = { pending: null, download: null };

const hubUrl = () => page.state.hubUrl || kHubUrl;

/** The storage this page uses and may use, as the browser estimates it (null where it does not say). */
async function storageEstimate() {
  try {
    const e = await navigator.storage?.estimate?.();
    return e && Number.isFinite(e.quota) ? { usage: e.usage ?? 0, quota: e.quota } : null;
  } catch {
    return null;
  }
}

/** The storage line under the cached list: used, allowed, whether the browser keeps it. */
async function showStorage($) {
  const e = await storageEstimate();
  const kept = await navigator.storage?.persisted?.().catch(() => false);
  $('hub-storage').textContent = e
    ? `This page stores ${size(e.usage)}; this browser allows it about ${size(e.quota)}` +
      `${kept ? ' (persistent: not cleared under storage pressure)' : ''}.`
    : 'This browser does not say how much this page may store.';
}

/** A button of a cached entry: its text, its accessible name, what a click does. */
function entryButton(text, label, action) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = text;
  button.setAttribute('aria-label', label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    await action();
    button.disabled = false;
  });
  return button;
}

/**
 * A cached entry opened at its commit: from the cache alone when the Hub cannot be reached (the
 * library's offline path); a GGUF entry names its file.
 */
function openCached($, entry) {
  const gguf = entry.files.find((f) => /\.gguf$/i.test(f.path));
  const listing = {
    repo: entry.repo,
    kind: gguf ? 'gguf' : 'safetensors',
    size: entry.size,
    files: entry.files,
  };
  const args = { hub: entry.repo, file: gguf?.path ?? '', revision: entry.commit, hubUrl: page.state.hubUrl };
  return download($, { args, listing, cached: true });
}

/** The cached list, from the worker: each entry with its size, Open and Delete. */
async function showCached($) {
  const list = $('hub-cached');
  let entries;
  try {
    entries = await hubRequest('hubCacheList');
  } catch (error) {
    list.replaceChildren();
    $('hub-note').textContent = `Could not list the cache: ${error.message}`;
    return;
  }
  list.replaceChildren(
    ...entries.map((entry) => {
      const li = document.createElement('li');
      const what = document.createElement('span');
      const rev = entry.revisions.length ? entry.revisions.join(', ') : entry.commit.slice(0, 7);
      const name = `${entry.repo} (${rev})`;
      what.textContent = `${name}: ${entry.files.map((f) => f.path).join(', ')}, ${size(entry.size)}`;
      const remove = async () => {
        await hubRequest('hubCacheDelete', { entry: { repo: entry.repo, commit: entry.commit } }).catch(
          (error) => ($('hub-note').textContent = `Could not delete ${entry.repo}: ${error.message}`),
        );
        await refresh($);
      };
      const buttons = document.createElement('span');
      buttons.append(
        entryButton('Open', `Open ${name} from this browser`, () => openCached($, entry)),
        ' ',
        entryButton('Delete', `Delete ${name} from this browser`, remove),
      );
      li.append(what, buttons);
      return li;
    }),
  );
  if (!entries.length) {
    const li = document.createElement('li');
    li.textContent = 'Nothing yet.';
    list.append(li);
  }
}

const refresh = ($) => Promise.all([showCached($), showStorage($)]);

/** The repository, file and token the fields hold (the token read now, kept nowhere). */
function asked($) {
  return {
    hub: $('hub-repo').value.trim(),
    file: $('hub-file').value.trim(),
    token: $('hub-token').value.trim(),
    hubUrl: page.state.hubUrl,
  };
}

/** Check size: the Hub's file list of the asked model, its size stated with the storage left, to confirm. */
async function check($) {
  const note = $('hub-note');
  const args = asked($);
  $('hub-confirm').hidden = true;
  hub.pending = null;
  if (!kRepo.test(args.hub)) {
    note.textContent = 'Name a repository as owner/name, e.g. bartowski/SmolLM2-135M-Instruct-GGUF.';
    return;
  }
  note.textContent = `Asking ${hubUrl()} for the files of ${args.hub}…`;
  try {
    const listing = await hubRequest('hubFiles', args);
    const e = await storageEstimate();
    const free = e ? e.quota - e.usage : Infinity;
    const files = listing.files.map((f) => `${f.path} (${size(f.size)})`).join(', ');
    $('hub-confirm-text').textContent =
      `${listing.repo} at ${listing.revision} (${listing.commit.slice(0, 7)}), ${listing.kind}: ${files}. ` +
      `Download ${size(listing.size)} (${listing.size.toLocaleString('en-US')} bytes)` +
      `${e ? `; this browser lets this page store about ${size(Math.max(0, free))} more` : ''}` +
      `${listing.size > free ? ': not enough room, the download would fail' : ''}. Files already cached are not downloaded again.`;
    hub.pending = { args: { ...args, revision: listing.revision }, listing };
    note.textContent = '';
    $('hub-confirm').hidden = false;
    $('hub-download').focus();
  } catch (error) {
    note.textContent = `Could not list ${args.hub}: ${error.message}`;
  }
}

/**
 * The progress bar's reporter. A GGUF file's tensors are fetched as they are placed, so the download
 * and the copy into the model alternate: the bar shows the download until every byte is here, then
 * the copy.
 */
function progressReporter($) {
  const bar = $('hub-progress'),
    text = $('hub-progress-text');
  const seen = { download: [0, 0], load: [0, 0] };
  let phase = 'download',
    rate = 0,
    shown = '';
  const say = () => {
    const [got, of] = seen.download;
    const downloading = of === 0 || got < of;
    const [done, total] = downloading ? seen.download : seen.load;
    bar.value = total ? (100 * done) / total : 0;
    const percent = Math.floor(bar.value);
    const line = downloading
      ? `Downloading: ${percent} % (${size(done)} of ${size(total)}${rate > 0 ? `, ${size(rate)}/s` : ''})`
      : `Loading weights: ${percent} %`;
    if (line !== shown) text.textContent = shown = line;
  };
  say();
  return {
    progress: (done, total) => {
      seen[phase] = [done, total];
      say();
    },
    phase: ({ phase: p, bytesPerSecond }) => {
      if (p in seen) phase = p;
      if (bytesPerSecond >= 0) rate = bytesPerSecond;
    },
  };
}

/**
 * Download and open (the confirmed listing), or Open of a cached entry: persistent storage asked for
 * a large download, then the model opened in the worker with a progress bar and Stop.
 */
async function download($, pending = hub.pending) {
  if (!pending || hub.download) return;
  const { args, listing, cached = false } = pending;
  const note = $('hub-note');
  $('hub-confirm').hidden = true;
  hub.pending = null;
  let kept = '';
  if (!cached && listing.size > kLargeDownload && navigator.storage?.persist) {
    const granted = await navigator.storage.persist().catch(() => false);
    kept = granted ? ' The browser keeps it (persistent storage).' : '';
  }
  hub.download = new AbortController();
  $('hub-progress-row').hidden = false;
  $('hub-stop').focus();
  note.textContent = '';
  const activations = $('gguf-activations').value;
  try {
    const info = await openHubModel(
      { ...args, kind: listing.kind, size: listing.size, activations },
      { ...progressReporter($), signal: hub.download.signal, files: listing.files.map((f) => f.path) },
    );
    note.textContent =
      `Opened ${listing.repo} ${cached ? 'from this browser' : 'from the Hub'} (${info.architecture}): ` +
      `${info.numLayers} layers, ${info.numHeads} heads${info.hasTokenizer ? '' : ' (no tokenizer: type token ids)'}. ` +
      `Cached in this browser: it opens again offline.${kept} A Hub model is not put in a link: Copy link shares the last preset.`;
  } catch (error) {
    const stopped = error.code === 'ABORTED' || error.name === 'AbortError';
    note.textContent = stopped
      ? `Stopped. What was downloaded of ${listing.repo} is kept: opening it again resumes from there.`
      : `Could not open ${listing.repo}: ${error.message}`;
  } finally {
    hub.download = null;
    $('hub-progress-row').hidden = true;
    await refresh($);
  }
}

/** The list of small models: each a button that fills the fields and checks its size. */
function fillCurated($) {
  $('hub-models').replaceChildren(
    ...CURATED.map((m) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = `${m.name}${m.file ? ` ${m.file}` : ''}, about ${size(m.bytes)}`;
      b.setAttribute('aria-label', `${b.textContent}: check the size of ${m.repo}`);
      b.addEventListener('click', () => {
        $('hub-repo').value = m.repo;
        $('hub-file').value = m.file;
        check($);
      });
      li.append(b);
      return li;
    }),
  );
}

/** Wires the panel: the fields, Check size, the list, Download and open, Cancel, Stop, the cache. */
export function attachHub($) {
  fillCurated($);
  const where = () =>
    ($('hub-where').textContent =
      `From ${hubUrl()}${page.state.hubUrl ? ' (a mirror, set by hub-url in the link)' : ''}.`);
  where();
  $('hub-check').addEventListener('click', () => check($));
  for (const id of ['hub-repo', 'hub-file', 'hub-token'])
    $(id).addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault(); // not the side panel's form
      check($);
    });
  $('hub-download').addEventListener('click', () => download($));
  $('hub-cancel').addEventListener('click', () => {
    hub.pending = null;
    $('hub-confirm').hidden = true;
    $('hub-check').focus();
  });
  $('hub-stop').addEventListener('click', () => hub.download?.abort());
  // The cache is read when the panel opens (the page's own storage: no request leaves it).
  $('hub-panel').addEventListener('toggle', () => {
    if (!$('hub-panel').open) return;
    where();
    refresh($);
  });
}
