// A long prompt on a checkpoint model (more than LONG_T tokens): the page never asks for a forward's
// (H, T, T) maps. It states what the run will hold (weights + KV cache + the map state of
// mapStateBytes), reads the prompt in the model worker with model.prefill (progress, Stop), then draws
// one head's pooled overview (each cell the max of a block of rows × columns) on a canvas; a cell
// picked (click, or arrows then Enter) asks the worker for that block's exact tile, shown as a table
// with its tokens. Only softmax layers have maps here. Token text only goes through textContent.
import { $ } from './demo-dom.js';
import { colormap } from './widgets/figures/colormap.js';

/** Above this many tokens a checkpoint model's input is read as a long prompt. */
export const LONG_T = 512;

const long = {
  source: null, // the source whose prompt is read (or being read)
  sig: '', // the ids read into the worker's session ('' while none)
  tokens: [],
  controller: null, // the running prefill's AbortController
  cell: [0, 0], // the overview's cursor
  view: null, // { layer, head, n, T, data } of the overview drawn
  want: null, // { source, ids, tokens, layer } of the latest render
};

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const idsSig = (ids) => ids.join(',');
const KIND_NAMES = { conv: 'a short convolution', delta: 'a gated DeltaNet layer' };

/** The short-prompt path is drawn: the long panel goes, the heatmap comes back. */
export function hideLong(heatmap) {
  $('long').hidden = true;
  heatmap.hidden = false;
}

/** The rows (or columns) [start, end) of overview cell index `a` of `n` over T tokens. */
export const blockOf = (a, n, T) => [Math.floor((a * T) / n), Math.floor(((a + 1) * T) / n)];

/**
 * The render of a long input (renderModel hands it over): the other map views hidden, the plan stated,
 * and — once this input was read — the overview of `layer`. Resolves to null (no predictions).
 */
export async function renderLong(ctx, { ids, tokens, layer }) {
  const { source, heatmap, steps } = ctx;
  for (const el of [heatmap, steps, $('steps-note'), $('delta-steps'), $('model-view'), $('lens')])
    el.hidden = true;
  $('pretrained').hidden = true;
  $('long').hidden = false;
  if (long.source !== source) Object.assign(long, { source, sig: '', view: null });
  long.want = { source, ids, tokens, layer };
  const p = await source.longPlan(ids.length);
  if (!ctx.current()) return undefined;
  showPlan(p, ids.length);
  if (long.sig === idsSig(ids)) await drawOverview();
  else if (!long.controller) clearMaps('Read the prompt to see its maps.');
  return null;
}

function showPlan(p, T) {
  const note = $('long-plan');
  const parts = `weights ${mb(p.weightBytes)} + KV cache ${mb(p.kvBytes)} (float32, while it reads) + map state ${mb(p.mapBytes)} (float16 queries and keys)`;
  note.className = p.fits ? 'note small' : 'note small bad';
  note.textContent = p.fits
    ? `${T} tokens: more than ${LONG_T}, so the page reads the prompt in chunks and keeps only what the maps need: ${parts} = ${mb(p.total)} of the ${mb(p.budget)} it gives a model.`
    : `${T} tokens cannot be read here: ${parts} = ${mb(p.total)}; ${p.why}. Shorten the prompt.`;
  $('long-read').disabled = !p.fits || long.controller !== null;
}

function clearTile() {
  $('long-tile').replaceChildren();
  $('long-tile-title').textContent = '';
}

function clearMaps(message) {
  long.view = null;
  $('long-canvas').hidden = true;
  clearTile();
  $('long-cell').textContent = '';
  $('long-note').textContent = message;
}

/** Reads the latest input into the worker's session: progress shown, Stop aborts it. */
async function read() {
  const { source, ids } = long.want;
  const controller = new AbortController();
  long.controller = controller;
  long.sig = '';
  $('long-read').disabled = true;
  $('long-stop').hidden = false;
  const bar = $('long-progress');
  Object.assign(bar, { value: 0, max: ids.length, hidden: false });
  clearMaps(`Reading ${ids.length} tokens…`);
  try {
    await source.longPrefill(ids, {
      signal: controller.signal,
      onProgress: (done, total) => {
        Object.assign(bar, { value: done, max: total });
        $('long-note').textContent = `Read ${done} of ${total} tokens…`;
      },
    });
    long.sig = idsSig(ids);
  } catch (error) {
    const stopped = error.name === 'AbortError' || error.code === 'ABORTED';
    clearMaps(
      stopped
        ? 'Stopped: nothing was kept. Read the prompt again to see its maps.'
        : `The prompt could not be read: ${error.message}`,
    );
  } finally {
    long.controller = null;
    $('long-stop').hidden = true;
    bar.hidden = true;
    $('long-read').disabled = false;
    $('long').dataset.state = long.sig ? 'read' : 'idle';
  }
  // The input changed while it was read: its maps would not be this input's.
  if (long.sig && long.sig !== idsSig(long.want.ids))
    clearMaps('The input changed while it was read: read it again.');
  else if (long.sig) await drawOverview();
}

/** The overview of the wanted layer and the chosen head; a layer that is not softmax says why not. */
async function drawOverview() {
  const { source, ids, tokens, layer } = long.want;
  const d = source.info.layers?.[layer] ?? { kind: 'attention', heads: source.info.numHeads };
  if (d.kind !== 'attention') {
    clearMaps(
      `Layer ${layer} is ${KIND_NAMES[d.kind] ?? `a ${d.kind} layer`}: its maps need the short-prompt path (at most ${LONG_T} tokens). Pick a softmax attention layer.`,
    );
    return;
  }
  const select = $('long-head');
  if (select.childElementCount !== d.heads)
    select.replaceChildren(...Array.from({ length: d.heads }, (_, h) => new Option(`Head ${h}`, String(h))));
  const head = Math.min(Number(select.value) || 0, d.heads - 1);
  const r = await source.longOverview(layer, head);
  const [n] = r.shape;
  long.tokens = tokens;
  long.view = { layer, head, n, T: ids.length, data: r.data };
  long.cell = [Math.min(long.cell[0], n - 1), Math.min(long.cell[1], n - 1)];
  clearTile(); // a tile shown was of the overview drawn before
  const hi = paint(long.view);
  const [r0, r1] = blockOf(0, n, ids.length);
  $('long-note').textContent =
    `Layer ${layer}, head ${head}: a pooled overview of ${n} × ${n} cells, each the largest weight of a block of about ${r1 - r0}–${Math.ceil(ids.length / n)} query rows × as many key columns (max pooling), coloured from 0 (dark) to the head's largest weight, ${hi.toFixed(4)} (yellow). Click a cell, or move with the arrow keys and press Enter, to see its exact weights.`;
  $('long').shown = { overview: long.view, tile: null };
  $('long').dataset.state = 'drawn';
}

/** Draws the overview (each cell a pixel, the canvas scaled by CSS); returns the largest value. */
function paint({ n, data }) {
  const canvas = $('long-canvas');
  canvas.hidden = false;
  canvas.width = n;
  canvas.height = n;
  const g = canvas.getContext('2d');
  const img = g.createImageData(n, n);
  const lut = colormap('viridis');
  let hi = 0;
  for (const v of data) hi = Math.max(hi, v);
  for (let k = 0; k < n * n; k++) {
    const i = Math.round((data[k] / (hi || 1)) * 255) * 3;
    img.data.set([lut[i], lut[i + 1], lut[i + 2], 255], k * 4);
  }
  g.putImageData(img, 0, 0);
  drawCursor(g, n);
  return hi;
}

function drawCursor(g, n) {
  const [a, b] = long.cell;
  g.strokeStyle = '#ff4081';
  g.lineWidth = Math.max(1, n / 128);
  g.strokeRect(b, a, 1, 1);
  g.canvas.setAttribute(
    'aria-label',
    `Pooled attention overview, ${n} × ${n} cells (max of each block); the selected cell is row ${a}, column ${b}`,
  );
  showCell();
}

function showCell() {
  const { n, T, data } = long.view;
  const [a, b] = long.cell;
  const [r0, r1] = blockOf(a, n, T),
    [c0, c1] = blockOf(b, n, T);
  $('long-cell').textContent =
    `Cell (${a}, ${b}): query rows ${r0}–${r1 - 1} × key columns ${c0}–${c1 - 1}, max ${data[a * n + b].toFixed(4)}`;
}

/** The exact weights of the selected cell's block, as a table with its tokens. */
async function zoom() {
  const { layer, head, n, T } = long.view;
  const [a, b] = long.cell;
  const rows = blockOf(a, n, T),
    cols = blockOf(b, n, T);
  const view = long.view;
  const r = await long.source.longTile(layer, head, rows, cols);
  if (long.view !== view) return; // another overview was drawn meanwhile
  const label = (i) => `${i} ${long.tokens[i] ?? ''}`;
  const table = $('long-tile');
  $('long-tile-title').textContent =
    `Exact weights of layer ${layer}, head ${head}: query rows ${rows[0]}–${rows[1] - 1} (down) × key columns ${cols[0]}–${cols[1] - 1} (across)`;
  const th = (text, scope) => Object.assign(document.createElement('th'), { textContent: text, scope });
  const head_ = document.createElement('tr');
  head_.append(th('query \\ key', 'col'));
  for (let j = cols[0]; j < cols[1]; j++) head_.append(th(label(j), 'col'));
  const body = Array.from({ length: rows[1] - rows[0] }, (_, i) => {
    const tr = document.createElement('tr');
    tr.append(th(label(rows[0] + i), 'row'));
    for (let j = 0; j < cols[1] - cols[0]; j++)
      tr.append(
        Object.assign(document.createElement('td'), { textContent: r.data[i * r.shape[1] + j].toFixed(4) }),
      );
    return tr;
  });
  table.replaceChildren(head_, ...body);
  $('long').shown = { overview: long.view, tile: { cell: [a, b], rows, cols, data: r.data, shape: r.shape } };
  $('long').dataset.state = 'zoomed';
}

function onKey(e) {
  if (!long.view) return;
  const step = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    zoom();
  } else if (step) {
    e.preventDefault();
    const n = long.view.n;
    long.cell = long.cell.map((v, k) => Math.max(0, Math.min(n - 1, v + step[k])));
    paint(long.view);
  }
}

function onClick(e) {
  if (!long.view) return;
  const c = e.currentTarget;
  const box = c.getBoundingClientRect(),
    css = getComputedStyle(c);
  const px = (name) => parseFloat(css[name]) || 0;
  // the cells span the content box: the border left out, fractions of a pixel kept
  const x = e.clientX - box.left - px('borderLeftWidth'),
    y = e.clientY - box.top - px('borderTopWidth');
  const w = box.width - px('borderLeftWidth') - px('borderRightWidth'),
    h = box.height - px('borderTopWidth') - px('borderBottomWidth');
  const n = long.view.n;
  const at = (p, size) => Math.max(0, Math.min(n - 1, Math.floor((p / size) * n)));
  long.cell = [at(y, h), at(x, w)];
  paint(long.view);
  zoom();
}

/** Wires the long panel's controls once. */
export function attachLong() {
  $('long-read').addEventListener('click', () => long.want && read());
  $('long-stop').addEventListener('click', () => long.controller?.abort());
  $('long-head').addEventListener('change', () => long.sig && drawOverview());
  $('long-canvas').addEventListener('keydown', onKey);
  $('long-canvas').addEventListener('click', onClick);
}
