// Timing policy and number formatting shared by the benchmark.

export const kMinRuns = 3;
export const kMaxRuns = 2000;

export const kMinWarmupMs = 250;

/**
 * Times `run` (async, returns the output).
 *   1. Warm-up (JIT, wasm tier-up, allocator growth): calls until max(10% of the budget,
 *      kMinWarmupMs) is spent, at least one call; a single call longer than 5% of the budget ends it.
 *   2. Timed calls until the budget is spent, at least `minRuns`, at most kMaxRuns.
 * With `fixedRuns` (shapes that take seconds per call, warmed elsewhere): no warm-up, exactly that
 * many calls. Returns { medianMs, runs, warmup, output }.
 */
export async function measure(run, { budgetMs, minRuns = kMinRuns, fixedRuns = 0 }) {
  let output = null;
  let warmup = 0;
  const warmupMs = Math.max(0.1 * budgetMs, kMinWarmupMs);
  for (
    let spent = 0, last = 0;
    !fixedRuns && (warmup === 0 || (spent < warmupMs && last < 0.05 * budgetMs));
  ) {
    const t0 = performance.now();
    output = await run();
    last = performance.now() - t0;
    spent += last;
    warmup++;
  }
  const times = []; // (runs) milliseconds
  const want = fixedRuns || kMaxRuns;
  for (let spent = 0; times.length < want && (fixedRuns || spent < budgetMs || times.length < minRuns);) {
    const t0 = performance.now();
    output = await run();
    const dt = performance.now() - t0;
    times.push(dt);
    spent += dt;
  }
  return { medianMs: median(times), runs: times.length, warmup, output };
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[n >> 1] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/** "0.048 ms" → shown as µs below 1 ms, s above 10 s. */
export function formatMs(ms) {
  if (ms == null) return '–';
  if (ms < 1) return `${(ms * 1000).toFixed(ms < 0.1 ? 1 : 0)} µs`;
  if (ms < 10_000) return `${ms.toFixed(ms < 10 ? 2 : ms < 100 ? 1 : 0)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatBytes(bytes) {
  if (bytes == null) return '–';
  if (bytes < 1 << 20) return `${(bytes / 1024).toFixed(0)} KiB`;
  if (bytes < 1 << 30) return `${(bytes / (1 << 20)).toFixed(bytes < 10 << 20 ? 1 : 0)} MiB`;
  return `${(bytes / (1 << 30)).toFixed(2)} GiB`;
}

export function formatRatio(r) {
  if (r == null || !Number.isFinite(r)) return '–';
  return `${r.toFixed(r < 10 ? 2 : 1)}×`;
}

export function formatErr(e) {
  if (e == null) return '–';
  if (Number.isNaN(e)) return 'NaN';
  return e.toExponential(1);
}
