// FNV-1a over the bytes of a Float32Array: the bits of a result, compared between the bundled page
// (app.js) and Node (tests/browser/bundler.test.mjs), one definition for both.
export function fnv1a(data) {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}
