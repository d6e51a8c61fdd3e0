// The data of <kv-cache-stepper>: one decoding session — a seeded MultiHeadAttention, its KV cache,
// the seeded input sequence x and every step made so far. It owns the module and the cache (dispose()
// frees both); the element holds one session per attribute set and draws what it reports.
import { attn } from '../runtime.js';

export class KvCacheSession {
  #mha;
  #cache;
  #steps = []; // per step: { output: Float32Array(E), weights: Float32Array(H·t), keys: Float32Array(Hkv·t·dk), diff }

  /** The identity of a settings object: sessions with equal keys are the same module and x. */
  static keyOf({ E, H, Hkv, rope, T, seed }) {
    return `${E}|${H}|${Hkv}|${rope}|${T}|${seed}`;
  }

  /**
   * A session for the settings { E, H, Hkv, rope, T, seed }, with an empty cache. Throws the library's
   * error when they make no valid module (numKVHeads not dividing numHeads, say), holding nothing.
   */
  constructor({ E, H, Hkv, rope, T, seed }) {
    let mha = null;
    try {
      mha = new attn.MultiHeadAttention({ embedDim: E, numHeads: H, numKVHeads: Hkv, rope, seed });
      this.#cache = mha.createCache({ maxLength: T });
    } catch (e) {
      mha?.dispose();
      throw e;
    }
    this.#mha = mha;
    /**
     * The settings, read-only for collaborators: { key, E, H, Hkv, T, dk, rope, seed, x } (x: the
     * input sequence, Float32Array (T, E) row-major).
     */
    this.config = Object.freeze({
      key: KvCacheSession.keyOf({ E, H, Hkv, rope, T, seed }),
      E,
      H,
      Hkv,
      T,
      dk: E / H,
      rope,
      seed,
      x: Float32Array.from(attn.seededNormal([1, T, E], seed + 1).data),
    });
  }

  /** Frees the module and the cache; the session is unusable afterwards. */
  dispose() {
    this.#cache?.dispose();
    this.#mha?.dispose();
    this.#cache = null;
    this.#mha = null;
    this.#steps = [];
  }

  /** Tokens in the cache now. */
  get length() {
    return this.#cache ? this.#cache.length : 0;
  }

  /** Steps made since the last reset. */
  get stepCount() {
    return this.#steps.length;
  }

  /** The last step ({ output, weights, keys, diff }; the caller must not change them), or undefined. */
  get lastStep() {
    return this.#steps.at(-1);
  }

  /** Every stepped output row so far, (length, E) row-major. */
  get outputs() {
    const E = this.config.E;
    const out = new Float32Array(this.#steps.length * E);
    this.#steps.forEach((st, t) => out.set(st.output, t * E));
    return out;
  }

  /** Max |stepped − full| over every row so far (0 before the first step). */
  get maxDifference() {
    return this.#steps.reduce((m, st) => Math.max(m, st.diff), 0);
  }

  /** The keys cached for K/V head g after the last step: (t, d_k) row-major. */
  headKeys(g) {
    const n = this.#steps.length * this.config.dk;
    return this.#steps.at(-1).keys.slice(g * n, (g + 1) * n);
  }

  /**
   * Feeds the next row of x through the cache (only that row is projected; its key and value are
   * appended; its query attends over every cached key). Returns { position, output, weights, diff }
   * (weights (H, t); diff: max |output − the same row of one full causal forward over the prefix),
   * or null when x is used up.
   */
  step() {
    const s = this.config,
      t = this.#cache.length;
    if (t >= s.T) return null;
    const row = new attn.Tensor(s.x.slice(t * s.E, (t + 1) * s.E), [1, 1, s.E]);
    const r = this.#mha.forward(row, null, null, {
      cache: this.#cache,
      causal: true,
      averageWeights: false,
      trace: true,
    });
    const output = Float32Array.from(r.output.data); // (1, 1, E)
    const weights = Float32Array.from(r.weights.data); // (1, H, 1, t + 1)
    const k = r.trace.find((st) => st.name === (s.rope ? 'k_rotated' : 'k'));
    const keys = Float32Array.from(k.data); // (1, H_kv, t + 1, d_k): what the cache holds
    const full = this.fullOutput(); // (t + 1, E)
    let diff = 0;
    for (let i = 0; i < s.E; i++) diff = Math.max(diff, Math.abs(output[i] - full[t * s.E + i]));
    this.#steps.push({ output, weights, keys, diff });
    return { position: t, output, weights, diff };
  }

  /** Empties the cache (cache.reset()): the next step feeds token 0 again. */
  reset() {
    this.#cache?.reset();
    this.#steps = [];
  }

  /** One full causal forward (no cache) over the first `length` rows of x: its output, (length, E). */
  fullOutput() {
    const s = this.config,
      t = this.length;
    if (!t) return new Float32Array(0);
    const prefix = new attn.Tensor(s.x.slice(0, t * s.E), [1, t, s.E]);
    return Float32Array.from(
      this.#mha.forward(prefix, null, null, { causal: true, needWeights: false }).output.data,
    );
  }
}
