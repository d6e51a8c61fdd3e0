// What <delta-rule-steps> shows for each of the four steps of a token: the two (d_k, d_v) matrices
// side by side, the step's formula, and its numbers (plain text: the widget writes textContent).
import { formatNumber } from '../figures/draw-util.js';

/** The steps, in order: name (the `step` attribute) and button label. */
export const STEPS = Object.freeze([
  { name: 'decay', label: '1 Decay' },
  { name: 'correct', label: '2 Correct' },
  { name: 'write', label: '3 Write' },
  { name: 'read', label: '4 Read' },
]);

const sub = (t) => String(t).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[d]);
const vec = (x) => `[${Array.from(x, (a) => formatNumber(a, 4)).join(', ')}]`;

// The write to come, k uᵀ; the read's terms q_i·S_ij/√d_k, whose columns sum to o_t.
function outer(k, u) {
  return Float64Array.from(
    { length: k.length * u.length },
    (_, n) => k[Math.floor(n / u.length)] * u[n % u.length],
  );
}
function readTerms(S, q, dv) {
  const scale = 1 / Math.sqrt(q.length);
  return S.map((x, n) => x * q[Math.floor(n / dv)] * scale);
}

/** The step's two matrices: [{ name, title, data (d_k·d_v, row-major) }, …]. */
export function stepPanels(s) {
  const w = s.walk,
    t = sub(s.t),
    prev = s.t > 0 ? sub(s.t - 1) : '';
  const S = (name, title, data) => ({ name, title, data });
  switch (s.step) {
    case 'decay':
      return [
        S('before', s.t > 0 ? `S after token ${s.t - 1} (S${prev})` : 'S before token 0 (zero)', w.before),
        S('decayed', `e^g${t} · S: decayed`, w.decayed),
      ];
    case 'correct':
      return [
        S('decayed', 'S decayed (S′)', w.decayed),
        S('write', `k${t} uᵀ: the write to come`, outer(s.k, w.correction)),
      ];
    case 'write':
      return [S('decayed', 'S decayed (S′)', w.decayed), S('after', `S′ + k${t} uᵀ = S${t}`, w.after)];
    default:
      return [
        S('after', `S${t}`, w.after),
        S('read', `q${t},i · S${t},ij / √d_k (columns sum to o${t})`, readTerms(w.after, s.q, s.dv)),
      ];
  }
}

// Another computation of o_t and its largest difference from the walk's, or nothing when absent.
function against(name, x, o) {
  if (!x) return [];
  const worst = Math.max(...Array.from(x, (a, j) => Math.abs(a - o[j])));
  return [
    [name, vec(x)],
    ['largest |difference|', worst.toExponential(2)],
  ];
}

/** The step's formula line and its numbers ([name, text] pairs). */
export function stepNumbers(s) {
  const w = s.walk,
    t = sub(s.t);
  const common = [
    [`β${t} (write strength)`, formatNumber(s.beta, 4)],
    [`g${t}, e^g${t} (decay)`, `${formatNumber(s.g, 4)}, ${formatNumber(w.decay, 4)}`],
  ];
  const formulas = {
    decay: `decay: S′ = e^g${t} · S${s.t > 0 ? sub(s.t - 1) : ''}  (every entry × ${formatNumber(w.decay, 4)})`,
    correct: `correct: u = β${t} (v${t} − S′ᵀk${t})  (what S′ predicted for k${t}, and the error)`,
    write: `write: S${t} = S′ + k${t} uᵀ  (rank-one: now S${t}ᵀk${t} = β v${t} + (1 − β) S′ᵀk${t})`,
    read: `read: o${t} = S${t}ᵀ q${t} / √d_k`,
  };
  const numbers = {
    decay: common,
    correct: [
      ...common,
      [`k${t} (L2-normalized)`, vec(s.k)],
      [`v${t}`, vec(s.v)],
      [`S′ᵀk${t} (predicted)`, vec(w.prediction)],
      [`u = β${t}(v${t} − S′ᵀk${t})`, vec(w.correction)],
    ],
    write: [...common, [`k${t}`, vec(s.k)], [`u`, vec(w.correction)]],
    read: [
      [`q${t} (L2-normalized)`, vec(s.q)],
      [`o${t} = S${t}ᵀq${t}/√d_k`, vec(w.o)],
      ...against(`Σ_s A[${s.t},s]·v_s (the library's effective attention)`, s.mixed, w.o),
      ...against(`o${t} as the library computed it (hook_o)`, s.captured, w.o),
    ],
  };
  return { formula: formulas[s.step], numbers: numbers[s.step] };
}
