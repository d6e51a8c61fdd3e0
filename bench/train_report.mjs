// Markdown of the training-step section (bench/train.mjs), printed and appended to bench/results.md.
import { formatMs, formatRatio } from './harness.mjs';
import { OPTIMIZER, kBatch, kSeqLen, kVocab } from './train_setup.mjs';

function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const ok = (r) => (r && r.status === 'ok' ? r : null);
const byKey = (size, key) => ok(size.results.find((r) => r.key === key));
const pct = (x) => (x == null ? '–' : `${(100 * x).toFixed(0)}%`);

function sizeRows(size, peak) {
  const tfjs = byKey(size, 'tfjs');
  return size.results.map((r) => {
    if (r.status !== 'ok')
      return [`${size.dModel}`, r.name, r.status === 'error' ? 'ERROR' : r.status, '–', '–', '–', '–', '–'];
    const agree = r.agree ? `${r.agree.worst.toExponential(1)}${r.agree.ok ? '' : ' ✗'}` : 'reference';
    return [
      `${size.dModel}`,
      r.name,
      `${formatMs(r.medianMs)} (N=${r.runs})`,
      (1000 / r.medianMs).toFixed(r.medianMs > 100 ? 2 : 1),
      r.gflops.toFixed(r.gflops < 10 ? 2 : 1),
      tfjs && r !== tfjs ? formatRatio(tfjs.medianMs / r.medianMs) : '–',
      peak ? pct(r.gflops / peak.gflops) : '–',
      agree,
    ];
  });
}

// The issue's training targets, all for the relaxed-SIMD build.
function targets({ sizes, peak, reverse }) {
  const rows = [];
  for (const s of sizes) {
    const ours = byKey(s, 'ours-relaxed');
    const tfjs = byKey(s, 'tfjs');
    const ratio = ours && tfjs ? tfjs.medianMs / ours.medianMs : null;
    rows.push([
      `≥ 10× tfjs-backend-wasm steps/s, d = ${s.dModel}`,
      formatRatio(ratio),
      ratio == null ? '–' : ratio >= 10 ? '✓ met' : '✗ missed',
    ]);
  }
  const big = sizes.find((s) => s.dModel === 128);
  if (big) {
    const ours = byKey(big, 'ours-relaxed');
    const share = ours && peak ? ours.gflops / peak.gflops : null;
    rows.push([
      '≥ 50% of the measured FMA peak over the whole step, d = 128',
      pct(share),
      share == null ? '–' : share >= 0.5 ? '✓ met' : '✗ missed',
    ]);
  }
  if (reverse.status === 'ok') {
    const m = reverse.median;
    rows.push([
      'reverse to 99% sequence accuracy within 2 s (Node)',
      m.reached ? `${m.seconds.toFixed(2)} s` : 'not reached',
      m.reached && m.seconds <= 2 ? '✓ met' : '✗ missed',
    ]);
  } else {
    rows.push(['reverse to 99% sequence accuracy within 2 s (Node)', '–', reverse.note]);
  }
  return table(['target (relaxed-SIMD build)', 'measured', ''], rows);
}

function reverseLines(reverse) {
  if (reverse.status !== 'ok') return [`Reverse to 99%: ${reverse.note}.`];
  const c = reverse.config;
  const each = reverse.runs.map(
    (r) =>
      `seed ${r.seed}: ${r.reached ? `${r.seconds.toFixed(2)} s, ${r.steps} steps (steps alone ${r.stepSeconds.toFixed(2)} s)` : `not reached in ${r.steps} steps / ${r.seconds.toFixed(1)} s (${(100 * r.accuracy).toFixed(1)}%)`}`,
  );
  return [
    `**reverse: seconds of training in Node to reach 99% sequence accuracy** (ours, relaxed SIMD; d ${c.dModel}, ` +
      `${c.numHeads} heads, ${c.numLayers} layers, batch ${c.batch}, lr ${c.optimizer.lr}, clipGradNorm ${c.optimizer.clipGradNorm}, ` +
      `weightDecay ${c.optimizer.weightDecay}; evaluate(${c.evaluate.batches} batches) every ${c.evalEvery} steps, its time included): ` +
      `median ${reverse.median.reached ? `${reverse.median.seconds.toFixed(2)} s` : 'not reached'} — ${each.join('; ')}.`,
  ];
}

export function trainReport({ peak, sizes, reverse, smoke }) {
  const p = peak.relaxed;
  const o = OPTIMIZER;
  const rows = sizes.flatMap((s) => sizeRows(s, p));
  const notes = sizes.flatMap((s) => [
    // A missing build or API is listed once, under the report's Notes.
    ...s.results.filter((r) => r.note && !r.missing).map((r) => `- d = ${s.dModel}, ${r.name}: ${r.note}`),
    ...s.notes.map((n) => `- d = ${s.dModel}: ${n}`),
  ]);
  return [
    '## Training step: TinyTransformer forward + backward + AdamW (one thread)',
    '',
    `Reverse task (length 8, V = ${kVocab}), batch ${kBatch} × T ${kSeqLen}; 4 heads, 2 pre-LN layers, MLP 4·d (GELU, erf), ` +
      `learned positions; AdamW lr ${o.lr}, betas (${o.betas.join(', ')}), eps ${o.eps}, weight decay ${o.weightDecay} on every ` +
      `parameter, clip_grad_norm ${o.clipGradNorm}. Every contender starts from the same weights and trains on the same batches.` +
      (smoke ? ' Smoke run: 2 steps per contender, no warm-up.' : ''),
    '',
    `GFLOP/s = 6 · parameters · tokens (${kBatch * kSeqLen}) per step / median step time: ` +
      sizes
        .map((s) => `d = ${s.dModel}: ${s.params} parameters, ${(s.flops / 1e9).toFixed(3)} GFLOP`)
        .join('; ') +
      '.',
    `Peak of this machine (fma_peak.mjs, 12 independent chains; the better of a measurement before and after the contenders): f32x4.relaxed_madd ${p ? `**${p.gflops.toFixed(1)} GFLOP/s**` : 'n/a (relaxed SIMD off)'}, ` +
      `f32x4.mul + f32x4.add ${peak.simd128.gflops.toFixed(1)} GFLOP/s. "% of FMA peak" = GFLOP/s / the relaxed_madd peak.`,
    '',
    table(
      [
        'd',
        'contender',
        'time per step (median)',
        'steps/s',
        'GFLOP/s',
        'faster than tfjs by',
        '% of FMA peak',
        'steps 1–2 vs reference (max rel. diff)',
      ],
      rows,
    ),
    '',
    ...notes,
    '',
    ...reverseLines(reverse),
    '',
    '### Targets (training)',
    '',
    targets({ sizes, peak: p, reverse }),
  ].join('\n');
}
