// What the reader opens or saves in the demo's side panel: PyTorch weights as JSON for the seeded
// layer (load, save, back to seeded), a TinyTransformer .safetensors file (or a GGUF file, or a split
// one's parts, which the model worker opens: demo-pretrained.js), and a figure (a view's JSON export
// or SVG figure, which sets the demo's state: see demo-figure.js). Nothing here reads more than the
// chosen file.
import { download, modelStateDict, runModel } from './widgets.js';
import { loadedSource, openFile } from './demo-models.js';
import { figureState, planFigure, readFigureFile } from './demo-figure.js';
import { modelConfig, page, replaceState, seeded, setWayBack, setWeights } from './demo-store.js';
import { $ } from './demo-dom.js';
import { whenDrawn } from './demo-render.js';
import { switchModel } from './demo-sources.js';
import { opensAsGGUF } from './demo-gguf.js';
import { openModelFiles } from './demo-pretrained.js';

/** The first file of a file input, which is cleared (so the same file can be picked again). */
function takeFile(e) {
  const file = e.target.files[0];
  e.target.value = '';
  return file;
}

/** d_model implied by a state dict (in_proj_weight is (3E, E); out_proj.weight is (E, E)). */
function inferDModel(sd) {
  const shapeOf = (v) =>
    v && Array.isArray(v.shape)
      ? v.shape
      : Array.isArray(v) && Array.isArray(v[0])
        ? [v.length, v[0].length]
        : null;
  const s = shapeOf(sd['out_proj.weight']) || shapeOf(sd.in_proj_weight);
  return s ? s[1] : null;
}

async function loadWeights(e) {
  const file = takeFile(e);
  if (!file) return;
  const { state } = page;
  const note = $('weights-note');
  note.className = 'note';
  try {
    const sd = JSON.parse(await file.text());
    if (!sd || typeof sd !== 'object' || Array.isArray(sd))
      throw new Error('expected a JSON object { name: tensor }');
    const E = inferDModel(sd);
    const patch = {};
    if (E && E !== state.dModel) {
      patch.dModel = E;
      if (E % state.heads) patch.heads = 1;
    }
    const trial = runModel({ ...state, ...patch, stateDict: sd });
    if (!trial.ok) throw new Error(trial.error.message);
    note.textContent = `Loaded ${Object.keys(sd).length} tensors from “${file.name}”${patch.dModel ? ` (d_model set to ${E})` : ''}. Weights are not stored in the link.`;
    $('weights-reset').hidden = false;
    setWeights(sd, file.name, patch);
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not load “${file.name}”: ${err.message}`;
  }
}

function resetWeights() {
  $('weights-reset').hidden = true;
  $('weights-note').textContent = 'Back to seeded weights.';
  setWeights(null);
}

function saveWeights() {
  const { state, stateDict } = page;
  const sd = modelStateDict(modelConfig());
  download(
    `attention-weights-d${state.dModel}-h${state.heads}${stateDict ? '-loaded' : `-seed${state.seed}`}.json`,
    JSON.stringify(sd),
    'application/json',
  );
}

async function openModelFile(e) {
  const files = [...e.target.files];
  e.target.value = ''; // so the same file can be picked again
  // A GGUF file (or a split one's parts, picked together) opens in the model worker, as a folder does:
  // read there tensor by tensor, never whole here.
  if (opensAsGGUF(files.map((f) => f.name))) return openModelFiles(files);
  const file = files[0];
  if (!file) return;
  const note = $('model-note');
  try {
    const s = openFile(new Uint8Array(await file.arrayBuffer()), file.name);
    Object.assign($('model').querySelector(`option[value="${s.name}"]`), {
      hidden: false,
      textContent: s.label,
    });
    const said = `Opened “${file.name}”: ${s.info.numLayers} layer(s), ${s.info.numHeads} head(s), vocabulary of ${s.info.vocabSize}.`;
    note.className = 'note';
    note.textContent = said;
    await switchModel(s.name);
    note.textContent = said;
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not open “${file.name}”: ${err.message}`;
  }
}

/** Shows a figure's plan: the demo's state from it, drawn; then the view's own state on top. */
async function showFigure(ws, plan) {
  setWayBack(null);
  const weights = {};
  if (!plan.weights && page.stateDict && plan.demoState.model === seeded.name) {
    // the figure was drawn with seeded weights
    Object.assign(weights, { stateDict: null, stateDictName: '' });
    $('weights-reset').hidden = true;
    $('weights-note').textContent = 'Back to seeded weights: the figure was drawn with them.';
  }
  const drawn = whenDrawn();
  replaceState(plan.demoState, 'push', weights);
  await drawn;
  // The figure's own view gets its state too: what the demo's state does not hold (the tile whose
  // query row is shown as bars, a palette) comes back; the rest is what the demo just drew.
  const el = plan.view ? $(plan.view) : null;
  if (el && el.localName === ws.widget && el.localName !== 'attention-model-view') {
    el.state = ws;
    el.refresh();
  }
}

// Open a figure: a view's JSON export or SVG figure sets the demo's state (see demo-figure.js).
async function openFigure(e) {
  const file = takeFile(e);
  if (!file) return;
  const note = $('figure-note'),
    root = document.documentElement;
  note.className = 'note';
  note.textContent = '';
  delete root.dataset.figure;
  try {
    const ws = figureState(await readFigureFile(file));
    const plan = planFigure(ws, { loadedSource, stateDictName: page.stateDictName });
    if (plan.need) {
      note.className = 'note bad';
      note.textContent = plan.need;
      root.dataset.figure = 'needs-files';
      return;
    }
    await showFigure(ws, plan);
    note.textContent = `Opened “${file.name}”: a <${ws.widget}> figure of ${plan.note}, on “${page.state.text}”.`;
    root.dataset.figure = 'opened';
  } catch (err) {
    note.className = 'note bad';
    note.textContent = `Could not open “${file.name}” as a figure: ${err.message}`;
    root.dataset.figure = 'error';
  }
}

/** Wires the weights, model file and figure inputs and buttons. */
export function attachFiles() {
  $('figure-file').addEventListener('change', openFigure);
  $('weights-file').addEventListener('change', loadWeights);
  $('weights-reset').addEventListener('click', resetWeights);
  $('weights-save').addEventListener('click', saveWeights);
  $('model-file').addEventListener('change', openModelFile);
}
