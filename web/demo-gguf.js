// GGUF files in the demo (llama.cpp's format, docs/gguf.md): which picked or dropped files open as a
// GGUF model (web/workers/gguf-files.js, shared with the model worker), and the summary the page shows
// of it (its name, architecture, weight types and size). Text from the file only ever reaches the page
// through textContent.

import { mb } from './workers/gguf-files.js';

export { isGGUF, mb, opensAsGGUF, typeCounts } from './workers/gguf-files.js';

/** The Model control's label of an opened GGUF model (what computes every view: the int8 mode is named). */
export const ggufLabel = (info) =>
  `GGUF: ${info.folderName} (${info.architecture}${info.gguf.activations === 'int8' ? ', int8 activations' : ''})`;

/** How the model's quantized matrices multiply the activations, as the note says it. */
const ACTIVATIONS = {
  exact: 'activations exact (each block dequantized, float32 products)',
  int8: 'activations int8, as llama.cpp (8-bit blocks, integer dot products)',
};

/**
 * The note after a GGUF model opened: its name, the architecture the file names and the family it is
 * loaded as, the weight types with their counts, the stored size, the layers and heads.
 */
export function ggufNote(info) {
  const g = info.gguf;
  // The lookup-only tables (an untied embedding, Gemma 4's per-layer table) are kept outside the heap.
  const outside = g.offHeapBytes
    ? `, ${mb(g.offHeapBytes)} of it outside the wasm heap (lookup-only tables)`
    : '';
  const bytes = `${mb(g.bytes)} stored (${g.bytes.toLocaleString('en-US')} bytes${outside})`;
  return (
    `Opened ${info.folderName} (GGUF${g.files.length > 1 ? `, ${g.files.length} parts` : ''}): ` +
    `architecture ${g.architecture} (${info.architecture}), weights ${g.types}, ${bytes}; ` +
    `${info.numLayers} layers, ${info.numHeads} heads; ${ACTIVATIONS[g.activations]}` +
    `${info.hasTokenizer ? '' : ' (its tokenizer is not read here: type token ids)'}. ` +
    'A file cannot be in a link: Copy link shares the last preset.'
  );
}
