// What <attention-steps> says about each trace step: a title, a short tab label, the formula (TeX,
// our own strings only) and two plain sentences, filled in with the sizes of the current config.

const AXIS_WORDS = {
  B: ['sequence', 'sequences'],
  H: ['head', 'heads'],
  T_q: ['query token', 'query tokens'],
  T_k: ['key token', 'key tokens'],
  T: ['token', 'tokens'],
  d_k: ['number per head', 'numbers per head'],
  d_v: ['number per head', 'numbers per head'],
  E: ['number per token', 'numbers per token'],
  D: ['number per token', 'numbers per token'],
  d_model: ['number per token', 'numbers per token'],
  'H·d_v': ['number per token (all heads)', 'numbers per token (all heads)'],
};

/** "(B=1, H=4, T_q=6, d_k=16)" */
export function shapeSymbols(shape, axes) {
  return `(${shape.map((n, i) => `${axes[i] || `dim${i}`}=${n}`).join(', ')})`;
}

/** "1 sequence × 4 heads × 6 query tokens × 16 numbers per head" */
export function shapeWords(shape, axes) {
  return shape
    .map((n, i) => {
      const w = AXIS_WORDS[axes[i]] || (/^H.?d/.test(axes[i] || '') ? AXIS_WORDS['H·d_v'] : null);
      return `${n} ${w ? w[n === 1 ? 0 : 1] : axes[i] || 'values'}`;
    })
    .join(' × ');
}

const f3 = (x) => Number(x.toFixed(3)).toString();

/**
 * @param {string} name  trace step name
 * @param {object} k     { c: config, Tq, Tk, E, H, dk, pads }
 * @returns {{ title: string, short: string, tex: string, text: [string, string], kind: 'signed'|'probability'|'positive' }}
 */
export function stepInfo(name, k) {
  const info = { ...inputSteps(k), ...projectionSteps(k), ...scoreSteps(k), ...outputSteps(k) }[name];
  if (!info)
    return {
      title: name,
      short: name,
      tex: `\\text{${name.replace(/[^a-z0-9 _]/gi, '')}}`,
      text: ['An intermediate step of the pass.', ''],
      kind: 'signed',
    };
  const [title, short, tex, s1, s2] = info;
  const kind = name === 'weights' ? 'probability' : name === 'dropped' ? 'positive' : 'signed';
  return { title, short, tex, text: [s1, s2], kind };
}

// Each step's [title, short label, TeX, sentence, sentence], by group of the pass.

// The input: token embeddings and positions.
function inputSteps({ c, Tq, E }) {
  const base = c.base;
  return {
    input: [
      'Token embeddings',
      'embed',
      'X_{\\text{tok}}[t] = \\operatorname{embed}(\\text{token}_t) \\in \\mathbb{R}^{d_{\\text{model}}}',
      `Each of the ${Tq} tokens becomes a vector of d_model = ${E} numbers, looked up by its text.`,
      'These are seeded, untrained embeddings: the same word always gets the same vector, so repeated words start out identical.',
    ],
    positional:
      c.positional === 'learned'
        ? [
            'Positional encoding (learned)',
            'position',
            'P_t = W_{\\text{pos}}[t]',
            `Attention on its own ignores word order, so each position t gets its own vector of ${E} numbers from a table.`,
            'In a trained model that table is learned; here it is seeded, so it only tells positions apart.',
          ]
        : [
            'Positional encoding (sinusoidal)',
            'position',
            `P_{t,2i} = \\sin\\!\\Big(\\frac{t}{${base}^{2i/d_{\\text{model}}}}\\Big),\\quad P_{t,2i+1} = \\cos\\!\\Big(\\frac{t}{${base}^{2i/d_{\\text{model}}}}\\Big)`,
            `Attention on its own ignores word order, so position t gets a pattern of sines and cosines at ${Math.ceil(E / 2)} different frequencies (base ${base}).`,
            'Low dimensions change quickly from one position to the next; high dimensions change slowly.',
          ],
    x: [
      'Input X = embedding + position',
      'X',
      'X = X_{\\text{tok}} + P',
      'The position vector is added to the token vector, number by number.',
      'Now two copies of the same word at different places have different inputs.',
    ],
  };
}

// Queries, keys and values, and what modern models do to q and k before the scores.
function projectionSteps({ c, Tk, E, H, dk }) {
  const src = c.cross ? 'the source sentence' : 'the same sentence';
  return {
    q: [
      'Queries Q',
      'Q',
      'Q = X\\,W_Q^{\\top} + b_Q \\;\\longrightarrow\\; Q_h \\in \\mathbb{R}^{T_q \\times d_k}',
      'Each token’s vector times the query weights W_Q says what that token is looking for.',
      `The ${E} numbers are split into ${H} head${H > 1 ? 's' : ''} of d_k = ${dk}; each head searches on its own (pick one above).`,
    ],
    k: [
      'Keys K',
      'K',
      `K = ${c.cross ? 'M' : 'X'}\\,W_K^{\\top} + b_K \\;\\longrightarrow\\; K_h \\in \\mathbb{R}^{T_k \\times d_k}`,
      `Keys come from ${src} (${Tk} tokens), times W_K: what each token offers to the queries that come looking.`,
      'A query and a key match when their vectors point the same way.',
    ],
    v: [
      'Values V',
      'V',
      `V = ${c.cross ? 'M' : 'X'}\\,W_V^{\\top} + b_V \\;\\longrightarrow\\; V_h \\in \\mathbb{R}^{T_k \\times d_v}`,
      'A third projection, W_V, gives each token a value: the content passed on when it is attended to.',
      'Keys decide where attention goes; values are what it picks up.',
    ],
    q_normed: [
      'Normalised queries (q-norm)',
      'q-norm',
      '\\hat q_{t} = \\frac{q_t}{\\sqrt{\\operatorname{mean}(q_t^2) + \\varepsilon}} \\odot w_q',
      'Qwen3, Gemma 3 and OLMo 2 rescale each query (per head, or OLMo 2 across all heads) to unit root-mean-square, times a learned weight, before RoPE.',
      'It keeps the scores from growing with the size of the projections, which steadies training.',
    ],
    k_normed: [
      'Normalised keys (k-norm)',
      'k-norm',
      '\\hat k_{t} = \\frac{k_t}{\\sqrt{\\operatorname{mean}(k_t^2) + \\varepsilon}} \\odot w_k',
      'The keys get the same root-mean-square normalisation with their own learned weight.',
      'Queries and keys both normalised: a score is about direction, scaled by the learned weights.',
    ],
    q_rotated: [
      'Rotated queries (RoPE)',
      'RoPE q',
      "q'_{t,i} = q_{t,i}\\cos t\\theta_i - q_{t,i+d/2}\\sin t\\theta_i,\\quad \\theta_i = 10000^{-2i/d_k}",
      'Each pair of a query’s numbers is rotated by an angle that grows with its position t, faster for low i.',
      'Rotating queries and keys this way makes q·k depend only on how far apart the two tokens are.',
    ],
    k_rotated: [
      'Rotated keys (RoPE)',
      'RoPE k',
      "k'_{t,i} = k_{t,i}\\cos t\\theta_i - k_{t,i+d/2}\\sin t\\theta_i",
      'The keys are rotated by their own positions, the same way.',
      'No vector is added to the input: position lives only in these rotations.',
    ],
  };
}

// From q·k to the attention weights.
function scoreSteps(k) {
  const { c, Tq, Tk, dk } = k;
  const scaleTex = c.scaling
    ? c.temperature === 1
      ? `\\frac{S_h}{\\sqrt{d_k}} = \\frac{S_h}{\\sqrt{${dk}}}`
      : `\\frac{S_h}{\\tau\\sqrt{d_k}},\\quad \\tau = ${c.temperature}`
    : c.temperature === 1
      ? 'S_h \\quad (\\text{no scaling})'
      : `\\frac{S_h}{\\tau},\\quad \\tau = ${c.temperature}`;
  return {
    alibi: [
      'ALiBi bias',
      'ALiBi',
      'B_{h,ij} = -m_h\\,(i - j)\\ \\text{(causal; } -m_h|i - j| \\text{ otherwise)},\\qquad m_h = 2^{-8(h+1)/H}',
      'Each head subtracts a penalty that grows with the distance between query and key, with its own slope m_h (the cells above the diagonal are masked next).',
      'Heads with steep slopes look nearby; heads with gentle slopes look far. The bias is added to the scaled scores.',
    ],
    scores: [
      'Scores S = QKᵀ',
      'QKᵀ',
      'S_h = Q_h K_h^{\\top},\\qquad S_{ij} = q_i \\cdot k_j = \\sum_{d=1}^{d_k} q_{i,d}\\, k_{j,d}',
      `Each query is compared with every key by a dot product, giving a ${Tq} × ${Tk} table of scores per head.`,
      `Hover a cell to see the ${dk} products that add up to it.`,
    ],
    scaled: [
      c.scaling ? 'Scaled scores S / √d_k' : 'Scores (scaling off)',
      c.scaling ? '÷√dₖ' : 'scale',
      `S'_h = ${scaleTex}`,
      c.scaling
        ? `The scores are divided by √d_k = √${dk} ≈ ${f3(Math.sqrt(dk))}${c.temperature !== 1 ? ` and by the temperature ${c.temperature}` : ''}.`
        : `Scaling by √d_k is switched off${c.temperature !== 1 ? `; only the temperature ${c.temperature} divides the scores` : ''}.`,
      'Without it, dot products of long vectors grow large and the softmax saturates, putting nearly all weight on one key.',
    ],
    masked: [
      'Masked scores',
      'mask',
      "\\tilde S_{ij} = \\begin{cases} S'_{ij} & \\text{if } M_{ij} = 1 \\text{ (may attend)} \\\\ -\\infty & \\text{if } M_{ij} = 0 \\end{cases}",
      ...maskText(c, k.pads),
    ],
    weights: [
      'Softmax: attention weights A',
      'softmax',
      "A_{ij} = \\frac{e^{\\tilde S_{ij}}}{\\sum_{j'} e^{\\tilde S_{ij'}}},\\qquad \\sum_{j} A_{ij} = 1",
      'Softmax turns each row of scores into probabilities: e to the score, divided by the row’s total.',
      'Every row sums to 1 (see the Σ column); the larger a score, the larger its share.',
    ],
    dropped: [
      'Dropout on the weights',
      'dropout',
      `\\hat A = \\frac{A \\odot D}{1 - p},\\quad D_{ij} \\sim \\operatorname{Bernoulli}(1 - p),\\; p = ${c.dropout}`,
      `Dropout zeroes each weight with probability p = ${c.dropout} and scales the others by 1/(1 − p) ≈ ${f3(1 / (1 - c.dropout))}.`,
      'Rows no longer sum to exactly 1, but their expected value is unchanged; models do this only while training.',
    ],
  };
}

// From the weights to the layer's output.
function outputSteps({ E, H, dk }) {
  return {
    context: [
      'Weighted values A·V',
      '·V',
      'C_h = A_h V_h,\\qquad c_i = \\sum_j A_{ij}\\, v_j',
      'Each query’s new vector is the average of the value vectors, weighted by its row of attention.',
      'This is where information actually moves between tokens.',
    ],
    concat: [
      'Concatenate the heads',
      'concat',
      'C = \\big[\\, C_1 \\;\\; C_2 \\;\\cdots\\; C_H \\,\\big] \\in \\mathbb{R}^{T_q \\times H d_v}',
      `The ${H} heads’ outputs (${dk} numbers each) are placed side by side.`,
      `Each token is back to ${H} × ${dk} = ${H * dk} numbers.`,
    ],
    output: [
      'Output projection',
      'output',
      'Y = C\\,W_O^{\\top} + b_O',
      `A last projection, W_O, mixes the heads into d_model = ${E} numbers per token.`,
      'This is the output of multi-head attention: one new vector per query token.',
    ],
    residual: [
      'Residual connection',
      '+X',
      'R = X + Y',
      'The input X is added back to the attention output.',
      'The layer then only has to learn a change to each token, which keeps deep stacks trainable.',
    ],
    normalized: [
      'Layer normalisation',
      'LayerNorm',
      'Z = \\frac{R - \\mu}{\\sqrt{\\sigma^2 + \\varepsilon}} \\odot \\gamma + \\beta',
      'Each token’s vector is shifted to mean 0 and scaled to variance 1, then scaled by γ and shifted by β.',
      'It keeps the numbers in a steady range from one layer to the next.',
    ],
  };
}

function maskText(c, pads) {
  const tail = c.toggles.length
    ? ` Plus ${c.toggles.length} cell${c.toggles.length > 1 ? 's' : ''} you clicked.`
    : '';
  switch (c.mask) {
    case 'causal':
      return [
        'A causal mask sets every score above the diagonal to −∞: token i may look only at tokens 0 … i, never ahead.' +
          tail,
        'After the softmax those cells are exactly 0.',
      ];
    case 'padding':
      return [
        `The ${pads} padding token${pads === 1 ? '' : 's'} at the end ${pads === 1 ? 'is' : 'are'} masked as keys (−∞), so no query attends to ${pads === 1 ? 'it' : 'them'}.` +
          tail,
        'Their own rows still exist but carry no meaning; a model ignores them downstream.',
      ];
    case 'custom':
      return [
        `The ${c.toggles.length} cell${c.toggles.length === 1 ? '' : 's'} you clicked ${c.toggles.length === 1 ? 'is' : 'are'} set to −∞, so the softmax gives ${c.toggles.length === 1 ? 'it' : 'them'} exactly 0.`,
        'A row with every cell masked gets all-zero weights here (not NaN, and not the uniform average a −1e9 fill gives).',
      ];
    default:
      return [
        'No mask here: every query may look at every key.' + tail,
        'Masked cells would be set to −∞, so that the softmax gives them exactly 0.',
      ];
  }
}
