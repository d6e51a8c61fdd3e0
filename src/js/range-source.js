// A file read by byte ranges that is neither bytes in memory nor a Blob: a Hugging Face Hub file read
// over HTTP or from a cache (src/js/hub/). The readers (formats/gguf.js, pretrained/files.js) take it
// as they take a Blob, so the Hub's files go through the same loading path as the reader's own files.
const kRange = Symbol('attention-wasm range source');

/** A range source: { name, size, read(begin, end) → Promise<Uint8Array> of those bytes }. */
export function rangeSource({ name, size, read }) {
  return Object.freeze({ [kRange]: true, name, size, read });
}

export const isRangeSource = (value) => value != null && value[kRange] === true;
