// Deterministic token embeddings: the same token text (and seed) always gives the same vector, so
// repeated words share an embedding, as a real embedding table would. The vector is
// seededNormal([dModel], tokenSeed(token, seed)), about N(0, 1) per component.
import { attn } from './runtime.js';

const encoder = new TextEncoder();

/**
 * 32-bit FNV-1a over the UTF-8 bytes of `token`, then over the 4 little-endian bytes of `seed`.
 * @param {string} token
 * @param {number} seed  unsigned 32-bit
 * @returns {number} unsigned 32-bit
 */
export function tokenSeed(token, seed) {
  let h = 0x811c9dc5;
  const step = (byte) => {
    h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  };
  for (const b of encoder.encode(token)) step(b);
  const s = seed >>> 0;
  for (let i = 0; i < 4; i++) step((s >>> (8 * i)) & 0xff);
  return h >>> 0;
}

// (token, dModel, seed) -> Float32Array(dModel); bounded, cleared when it grows past the limit.
const cache = new Map();
const CACHE_LIMIT = 4096;

/** One token's embedding vector (a fresh copy). */
export function tokenVector(token, dModel, seed) {
  const key = `${dModel}|${seed}|${token}`;
  let v = cache.get(key);
  if (!v) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    v = Float32Array.from(attn.seededNormal([dModel], tokenSeed(token, seed)).data);
    cache.set(key, v);
  }
  return v.slice();
}

/**
 * Embeds a token list.
 * @returns {Float32Array} (T, dModel) row-major
 */
export function embedTokens(tokens, dModel, seed) {
  const out = new Float32Array(tokens.length * dModel); // (T, dModel) row-major
  tokens.forEach((t, i) => out.set(tokenVector(t, dModel, seed), i * dModel));
  return out;
}
