// The words of <query-explorer> beside its planes: the table of each key's score, scaled score and
// softmax weight with the output, and the sentence on where the attention goes. Both are made from
// what the element shows: { K, labels, d, result: { scores, scaled, weights, output } }.
import { h } from '../base-element.js';
import { exactNumber, formatNumber } from '../figures/draw-util.js';

/** The table's parts (thead, tbody, tfoot); `scaling`: whether the scores are divided by √d. */
export function weightsTable({ K, labels, d, result }, scaling) {
  const vec = (v) => `(${v.map((x) => formatNumber(x, 2)).join(', ')})`;
  const head = h(
    'tr',
    {},
    ...['key', 'k_j', 'q · k_j', scaling ? `÷ √${d}` : 'scale 1', 'weight (softmax)'].map((t) =>
      h('th', { scope: 'col', text: t }),
    ),
  );
  const rows = K.map((k, j) =>
    h(
      'tr',
      {},
      h('td', { text: labels[j] }),
      h('td', { text: vec(k) }),
      h('td', { text: formatNumber(result.scores[j], 3), title: exactNumber(result.scores[j]) }),
      h('td', { text: formatNumber(result.scaled[j], 3), title: exactNumber(result.scaled[j]) }),
      h(
        'td',
        { class: 'w', title: exactNumber(result.weights[j]) },
        h('span', { class: 'wbar', style: `width:${(result.weights[j] * 100).toFixed(1)}%;max-width:60%` }),
        h('span', { text: result.weights[j].toFixed(4) }),
      ),
    ),
  );
  const sum = result.weights.reduce((a, b) => a + b, 0);
  return [
    h('thead', {}, head),
    h('tbody', {}, ...rows),
    h(
      'tfoot',
      {},
      h(
        'tr',
        {},
        h('td', { text: 'output' }),
        h('td', { text: vec(result.output) }),
        h('td'),
        h('td', { text: 'Σ' }),
        h('td', { class: 'w', text: sum.toFixed(4) }),
      ),
    ),
  ];
}

/** The readout: the key with most of the attention, and the output as the weighted sum of the values. */
export function readoutText({ labels, result }) {
  const top = result.weights.indexOf(Math.max(...result.weights));
  return (
    `Most of the attention (${formatNumber(result.weights[top], 3)}) goes to “${labels[top]}”. ` +
    `Output = ${result.weights.map((w, j) => `${formatNumber(w, 2)}·v(${labels[j]})`).join(' + ')} = (${result.output.map((x) => formatNumber(x, 2)).join(', ')}).`
  );
}
