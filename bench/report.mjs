// Markdown tables of a benchmark run (printed to the console and written to bench/results.md).
import { formatBytes, formatErr, formatMs, formatRatio } from './harness.mjs';

const MEMORY_KIND = { heap: 'heap', malloc: 'malloc +', rss: 'RSS +', arrays: 'arrays' };

function memoryCell(m) {
  if (!m || m.bytes == null) return '–';
  return `${MEMORY_KIND[m.kind]} ${formatBytes(m.bytes)}`;
}

function timeCell(r) {
  if (r.status !== 'ok') return r.status === 'skipped' ? 'skipped' : r.status === 'error' ? 'ERROR' : 'n/a';
  const runs = r.extrapolatedFrom ? `×${r.extrapolatedFrom.factor}` : `N=${r.runs}`;
  return `${formatMs(r.medianMs)} (${runs})`;
}

function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The per-shape table: one row per contender, plus footnotes for skipped/extrapolated rows. */
export function shapeSection(s) {
  const ours = s.byGroup.ours;
  const rows = s.results.map((r) => [
    r.name,
    timeCell(r),
    r.status === 'ok' ? r.gflops.toFixed(r.gflops < 10 ? 2 : 1) : '–',
    r.status === 'ok' ? memoryCell(r.memory) : '–',
    r.status === 'ok' ? formatErr(r.err) + (r.errOk ? '' : ' ✗') : '–',
    r.status === 'ok' && ours?.status === 'ok' && r !== ours ? formatRatio(r.medianMs / ours.medianMs) : '–',
  ]);
  const notes = s.results.filter((r) => r.note).map((r) => `- ${r.name}: ${r.note}`);
  return [
    `### ${s.shape.label}`,
    '',
    `${(s.flops / 1e9).toFixed(s.flops < 1e9 ? 4 : 2)} GFLOP per forward; error reference: ${s.refNote}.`,
    '',
    table(
      ['contender', 'time (median)', 'GFLOP/s', 'peak memory', 'max abs err', 'ours (SIMD128) is faster by'],
      rows,
    ),
    '',
    ...notes,
    ...(s.extraNotes ?? []).map((n) => `- ${n}`),
  ].join('\n');
}

function ok(r) {
  return r && r.status === 'ok' ? r : null;
}

/** Speedup of ours (SIMD128, needWeights false) over a contender, or null. */
export function speedup(s, group) {
  const ours = ok(s.byGroup.ours);
  const other = ok(s.byGroup[group]);
  return ours && other ? other.medianMs / ours.medianMs : null;
}

/** Best onnxruntime-web row of a shape (plain ops vs fused Attention). */
export function bestOrt(s) {
  const candidates = [ok(s.byGroup['ort-plain']), ok(s.byGroup['ort-fused'])].filter(Boolean);
  return candidates.sort((a, b) => a.medianMs - b.medianMs)[0] ?? null;
}

const BUILDS = [
  ['ours', 'SIMD128'],
  ['ours-relaxed', 'relaxed SIMD'],
];

export function summarySection(sections) {
  const rows = sections.map((s) => {
    const ort = bestOrt(s);
    const tfjs = ok(s.byGroup.tfjs);
    const scalar = ok(s.byGroup['ours-scalar']);
    const builds = BUILDS.map(([group]) => ok(s.byGroup[group]));
    const ratio = (ours, other) => (ours && other ? formatRatio(other.medianMs / ours.medianMs) : '–');
    return [
      s.shape.label,
      ...builds.map((b) => (b ? formatMs(b.medianMs) : '–')),
      ort ? `${formatMs(ort.medianMs)} (${ort.short})` : '–',
      tfjs ? formatMs(tfjs.medianMs) : '–',
      ...builds.map((b) => ratio(b, ort)),
      ...builds.map((b) => ratio(b, tfjs)),
      ratio(builds[0], scalar),
    ];
  });
  return table(
    [
      'shape',
      'ours SIMD128',
      'ours relaxed SIMD',
      'onnxruntime-web (best)',
      'tfjs-wasm',
      'SIMD128 vs ORT-web',
      'relaxed vs ORT-web',
      'SIMD128 vs tfjs',
      'relaxed vs tfjs',
      'SIMD128 vs scalar',
    ],
    rows,
  );
}

// One target against one of our builds: [measured text, met].
function checkTarget(s, t, group) {
  const ours = ok(s.byGroup[group]);
  if (t.kind === 'ratio') {
    const other = t.vs === 'ort' ? bestOrt(s) : ok(s.byGroup[t.vs]);
    const measured = ours && other ? other.medianMs / ours.medianMs : null;
    return [formatRatio(measured), measured != null && measured >= t.min];
  }
  const bytes = ours?.memory?.bytes; // t.kind === 'heap'
  return [bytes != null ? `heap ${formatBytes(bytes)}` : '–', bytes != null && bytes < t.maxBytes];
}

/** The targets, checked against this run, for each of our two SIMD builds. */
export function targetsSection(sections) {
  const rows = [];
  for (const s of sections) {
    for (const t of s.shape.targets ?? []) {
      const cells = BUILDS.flatMap(([group]) => {
        const [measured, met] = checkTarget(s, t, group);
        return [measured, met ? '✓ met' : '✗ missed'];
      });
      rows.push([s.shape.short, t.label, ...cells]);
    }
  }
  return table(['shape', 'target', 'SIMD128 build', '', 'relaxed-SIMD build', ''], rows);
}

export function fullReport({ header, sections, extra = [], notes }) {
  // A run of the training section alone (--sections train) has no MHA tables.
  const mha = !sections.length
    ? []
    : [
        '## Summary (all ratios from this one run; > 1× means ours is faster)',
        '',
        summarySection(sections),
        '',
        '## Targets (issue 4)',
        '',
        targetsSection(sections),
        '',
        '## Per shape',
        '',
        sections.map(shapeSection).join('\n\n'),
        '',
      ];
  return [
    '# attention-wasm benchmark results',
    '',
    ...header,
    '',
    ...mha,
    ...extra.flatMap((markdown) => [markdown, '']),
    ...(notes.length ? ['## Notes', '', ...notes.map((n) => `- ${n}`), ''] : []),
  ].join('\n');
}
