// The benchmark problem (inputs + PyTorch-layout weights), its FLOP count, a naive float32 JS
// multi-head attention (the "naive JS" contender) and a float64 reference that can evaluate any
// subset of output rows (so even T = 16 384 gets an independent reference in seconds).
//
// MHA as torch.nn.MultiheadAttention (batch_first, self-attention, bias, no mask):
//   q/k/v = x·W{q,k,v}ᵀ + b   (B, T, E);  per head h: softmax(q_h·k_hᵀ/√dk)·v_h  (T, dk);
//   concat (B, T, E);  y = concat·Woᵀ + bo  (B, T, E)

/** Deterministic uniform [0, 1) generator (mulberry32), so every contender sees the same data. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uniformArray(n, bound, rand) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * bound;
  return a;
}

/**
 * A benchmark problem. x (B, T, E) ~ U(-1, 1); weights xavier-uniform-like U(±√(6/(fan_in+fan_out)))
 * and small biases, in PyTorch layout: inProjWeight (3E, E), inProjBias (3E), outProjWeight (E, E),
 * outProjBias (E).
 */
export function makeProblem({ B, T, E, H }, seed = 1234) {
  const rand = mulberry32(seed);
  const weights = {
    inProjWeight: uniformArray(3 * E * E, Math.sqrt(6 / (E + 3 * E)), rand),
    inProjBias: uniformArray(3 * E, 0.1, rand),
    outProjWeight: uniformArray(E * E, Math.sqrt(6 / (2 * E)), rand),
    outProjBias: uniformArray(E, 0.1, rand),
  };
  return { B, T, E, H, x: uniformArray(B * T * E, 1, rand), weights };
}

/** 2·M·N·K per matmul: 3 input projections + out-projection (2·BT·E·E each) + QKᵀ + weights·V. */
export function mhaFlops({ B, T, E }) {
  return 4 * 2 * B * T * E * E + 2 * 2 * B * T * T * E;
}

// ---- naive float32 JS (the contender) -----------------------------------------------------------

// y (rows, N) = x (rows, K) · W[wOff.., (N, K)]ᵀ + b[bOff..]: the textbook row-times-row loop.
function linear(x, rows, K, W, wOff, b, bOff, N) {
  const y = new Float32Array(rows * N);
  for (let r = 0; r < rows; r++) {
    for (let n = 0; n < N; n++) {
      let s = b[bOff + n];
      const w = wOff + n * K;
      for (let k = 0; k < K; k++) s += x[r * K + k] * W[w + k];
      y[r * N + n] = s;
    }
  }
  return y;
}

/**
 * Naive MHA in float32 typed arrays and plain loops. `batches` limits the work to the first
 * `batches` batch items (used to time the tutorial shape without waiting minutes).
 * Returns { output (batches, T, E), allocatedBytes }.
 */
export function naiveMha(p, batches = p.B) {
  const { T, E, H, weights: w } = p;
  const dk = E / H;
  const rows = batches * T;
  const x = p.x.subarray(0, rows * E); // (batches, T, E)
  // 1. projections, (batches·T, E) each
  const q = linear(x, rows, E, w.inProjWeight, 0, w.inProjBias, 0, E);
  const k = linear(x, rows, E, w.inProjWeight, E * E, w.inProjBias, E, E);
  const v = linear(x, rows, E, w.inProjWeight, 2 * E * E, w.inProjBias, 2 * E, E);
  const concat = new Float32Array(rows * E); // (batches, T, H·dk)
  const s = new Float32Array(T); // one row of scores (T)
  const scale = 1 / Math.sqrt(dk);
  for (let b = 0; b < batches; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < T; i++) {
        // 2. scores row i = q_i·K_hᵀ · scale, then a stable softmax
        const qi = (b * T + i) * E + h * dk;
        let max = -Infinity;
        for (let j = 0; j < T; j++) {
          const kj = (b * T + j) * E + h * dk;
          let dot = 0;
          for (let d = 0; d < dk; d++) dot += q[qi + d] * k[kj + d];
          s[j] = dot * scale;
          if (s[j] > max) max = s[j];
        }
        let sum = 0;
        for (let j = 0; j < T; j++) {
          s[j] = Math.exp(s[j] - max);
          sum += s[j];
        }
        // 3. context row = Σ_j p_j · v_j, written straight into its head's slot of concat
        for (let j = 0; j < T; j++) {
          const pj = s[j] / sum;
          const vj = (b * T + j) * E + h * dk;
          for (let d = 0; d < dk; d++) concat[qi + d] += pj * v[vj + d];
        }
      }
    }
  }
  // 4. output projection
  const output = linear(concat, rows, E, w.outProjWeight, 0, w.outProjBias, 0, E);
  const allocatedBytes = 4 * (q.length + k.length + v.length + concat.length + s.length + output.length);
  return { output, allocatedBytes };
}

// ---- float64 reference on selected rows ---------------------------------------------------------

// One projected row in float64: out (N) = x_row (K) · W[wOff.., (N, K)]ᵀ + b[bOff..].
// Four partial sums only to keep the 4.3 GFLOP of T = 16 384 key/value projections to seconds.
function linearRow64(xRow, K, W, wOff, b, bOff, N, out, outOff) {
  for (let n = 0; n < N; n++) {
    const w = wOff + n * K;
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0;
    let k = 0;
    for (; k + 3 < K; k += 4) {
      s0 += xRow[k] * W[w + k];
      s1 += xRow[k + 1] * W[w + k + 1];
      s2 += xRow[k + 2] * W[w + k + 2];
      s3 += xRow[k + 3] * W[w + k + 3];
    }
    for (; k < K; k++) s0 += xRow[k] * W[w + k];
    out[outOff + n] = b[bOff + n] + (s0 + s1 + (s2 + s3));
  }
}

/**
 * Float64 reference output for the (b, t) rows listed in `rows` (an array of [b, t]).
 * Keys/values are projected for every token of the batch items involved; queries only for the
 * listed rows, so cost is O(#batches·T·E² + #rows·T·E). Returns Float64Array (rows.length, E).
 */
export function referenceRows(p, rows) {
  const { T, E } = p;
  const w = Object.fromEntries(Object.entries(p.weights).map(([k, a]) => [k, Float64Array.from(a)]));
  const xRow = (b, t) => Float64Array.from(p.x.subarray((b * T + t) * E, (b * T + t + 1) * E));
  const out = new Float64Array(rows.length * E);
  const byBatch = new Map(); // b → indices into rows
  rows.forEach(([b], r) => byBatch.set(b, [...(byBatch.get(b) ?? []), r]));
  for (const [b, members] of byBatch) {
    // 1. keys and values of the whole sequence, (T, E) each
    const k = new Float64Array(T * E);
    const v = new Float64Array(T * E);
    for (let t = 0; t < T; t++) {
      const x = xRow(b, t);
      linearRow64(x, E, w.inProjWeight, E * E, w.inProjBias, E, E, k, t * E);
      linearRow64(x, E, w.inProjWeight, 2 * E * E, w.inProjBias, 2 * E, E, v, t * E);
    }
    // 2. queries of the selected rows only, (R, E)
    const R = members.length;
    const q = new Float64Array(R * E);
    members.forEach((r, i) =>
      linearRow64(xRow(b, rows[r][1]), E, w.inProjWeight, 0, w.inProjBias, 0, E, q, i * E),
    );
    // 3. attention, concat (R, E); 4. output projection
    const concat = attendRows64(p, q, R, k, v);
    for (let i = 0; i < R; i++) {
      linearRow64(
        concat.subarray(i * E, (i + 1) * E),
        E,
        w.outProjWeight,
        0,
        w.outProjBias,
        0,
        E,
        out,
        members[i] * E,
      );
    }
  }
  return out;
}

// softmax(q_h·k_hᵀ/√dk)·v_h for R query rows of one sequence: q (R, E), k/v (T, E) → concat (R, E).
// Loops run key-major (j outermost) so each key/value row is read once for all R queries.
function attendRows64({ T, E, H }, q, R, k, v) {
  const dk = E / H;
  const scale = 1 / Math.sqrt(dk);
  const s = new Float64Array(R * H * T); // scores (R, H, T)
  for (let j = 0; j < T; j++) {
    for (let i = 0; i < R; i++) {
      for (let h = 0; h < H; h++) {
        let dot = 0;
        for (let d = 0; d < dk; d++) dot += q[i * E + h * dk + d] * k[j * E + h * dk + d];
        s[(i * H + h) * T + j] = dot * scale;
      }
    }
  }
  const inv = new Float64Array(R * H); // 1 / Σ exp, per (row, head)
  for (let rh = 0; rh < R * H; rh++) {
    const row = s.subarray(rh * T, (rh + 1) * T);
    let max = -Infinity;
    for (let j = 0; j < T; j++) if (row[j] > max) max = row[j];
    let sum = 0;
    for (let j = 0; j < T; j++) sum += row[j] = Math.exp(row[j] - max);
    inv[rh] = 1 / sum;
  }
  const concat = new Float64Array(R * E);
  for (let j = 0; j < T; j++) {
    for (let i = 0; i < R; i++) {
      for (let h = 0; h < H; h++) {
        const pj = s[(i * H + h) * T + j] * inv[i * H + h];
        for (let d = 0; d < dk; d++) concat[i * E + h * dk + d] += pj * v[j * E + h * dk + d];
      }
    }
  }
  return concat;
}

/** Max |out[row] − ref[row]| over the selected rows; out is (B, T, E) float32. */
export function maxAbsErrorOnRows(p, out, rows, ref) {
  const { T, E } = p;
  let err = 0;
  for (let r = 0; r < rows.length; r++) {
    const [b, t] = rows[r];
    for (let e = 0; e < E; e++) {
      const d = Math.abs(out[(b * T + t) * E + e] - ref[r * E + e]);
      if (Number.isNaN(d)) return NaN; // a NaN output is never "close"
      if (d > err) err = d;
    }
  }
  return err;
}

/** Rows used for the reference: every row for small problems, else an even sample. */
export function sampleRows({ B, T }, maxRows) {
  const total = B * T;
  const rows = [];
  if (total <= maxRows) {
    for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) rows.push([b, t]);
    return rows;
  }
  // Spread over a few batch items (first, middle, last) and over positions within each.
  const batches = [...new Set([0, B >> 1, B - 1])];
  const perBatch = Math.ceil(maxRows / batches.length);
  for (const b of batches) {
    for (let i = 0; i < perBatch && i < T; i++)
      rows.push([b, Math.floor((i * (T - 1)) / Math.max(1, perBatch - 1))]);
  }
  return rows;
}
