// Which files open as a GGUF model (llama.cpp's format, docs/gguf.md) and the words the demo
// describes one with. Here, beside the model worker, because both it and the page (web/demo-gguf.js)
// use them, and the package ships web/workers/ whole.

/** Whether a file name is a GGUF file's (or a part of a split one: …-00001-of-00003.gguf). */
export const isGGUF = (name) => /\.gguf$/i.test(name);

/**
 * Whether files of these names open as a GGUF model: there is a .gguf file (or the parts of a split
 * one) and no safetensors weights (a checkpoint folder holding both opens its safetensors).
 */
export const opensAsGGUF = (names) => names.some(isGGUF) && !names.some((n) => /\.safetensors$/i.test(n));

/** A byte count for people: "152 kB", "1.2 MB", "2019 MB". */
export const mb = (bytes) =>
  bytes < 1e6 ? `${Math.round(bytes / 1e3)} kB` : `${(bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0)} MB`;

/** "Q4_K ×97, Q6_K ×17, F32 ×65": each tensor type with its count, the most used first. */
export function typeCounts(typeNames) {
  const counts = new Map();
  for (const t of typeNames) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([t, n]) => `${t} ×${n}`)
    .join(', ');
}
