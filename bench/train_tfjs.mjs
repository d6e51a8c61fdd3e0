// The tfjs-backend-wasm contender of the training-step benchmark: TinyTransformer (pre-LN, learned
// positions, causal MHA, GELU-erf MLP) and AdamW written with tfjs-core ops, gradients by
// tf.variableGrads. Written for the wasm backend:
//   - the embedding is a one-hot (B·T, V) × (V, d) matMul: the backend has no gather gradient
//     (UnsortedSegmentSum is not a wasm kernel);
//   - linear layers are tf.fused.matMul with bias (one XNNPACK GEMM; it has its own gradient) over
//     weights stored transposed, (in, out): with transposeB: true, tfjs-backend-wasm 4.22 adds the
//     bias wrongly (every row after the first gets bias[1]: [[1,2],[3,4]]·I + [10,20] → [[11,22],[23,24]]);
//   - AdamW is torch.optim.AdamW's single-tensor update with clip_grad_norm_ before it, all as
//     tensor ops (no per-step read-back except the loss and the norm, which every contender returns).
import { kBatch, kSeqLen, parameterShapes } from './train_setup.mjs';

const kLnEps = 1e-5;
const kMasked = -1e9; // additive causal mask: exp underflows to exactly 0, like −∞, without ∞ − ∞

/**
 * @param tf tfjs-core with the wasm backend ready (peers.mjs loadTfjs)
 * @param config modelConfig(d); weights: initialWeights(); optimizer: OPTIMIZER
 * @returns {{ step(batch): { loss, gradNorm }, dispose() }}
 */
export function createTfjsTrainer(tf, config, weights, optimizer) {
  const V = config.vocabSize;
  const B = kBatch;
  const T = kSeqLen;
  const p = createParameters(tf, config, weights);
  const names = Object.keys(p);
  const varList = names.map((n) => p[n]);
  const model = createModel(tf, config, p);
  const adamw = createAdamW(tf, p, names, optimizer);

  return {
    /** One step on { ids, targets } (Int32Array B·T each): inputs in, loss and norm out. */
    step(batch) {
      const [oneHotIds, targetWeights] = encodeBatch(batch, V);
      const out = tf.tidy(() => {
        const x = tf.tensor2d(oneHotIds, [B * T, V]);
        const w = tf.tensor2d(targetWeights, [B * T, V]);
        const { value, grads } = tf.variableGrads(() => model.loss(x, w), varList);
        return tf.stack([value, adamw.update(grads)]);
      });
      const [lossValue, gradNorm] = out.dataSync();
      out.dispose();
      return { loss: lossValue, gradNorm };
    },
    numTensors: () => tf.memory().numTensors,
    dispose() {
      tf.dispose([...varList, ...adamw.state, ...model.constants]);
    },
  };
}

// The trainable variables, by state-dict name; linear weights stored transposed, (in, out).
function createParameters(tf, config, weights) {
  const p = {};
  for (const [name, shape] of parameterShapes(config)) {
    const t = isLinearWeight(name) ? [shape[1], shape[0]] : shape;
    const data = isLinearWeight(name)
      ? transpose(weights[name].data, shape[0], shape[1])
      : weights[name].data;
    p[name] = tf.tidy(() => tf.variable(tf.tensor(data, t)));
  }
  return p;
}

// The forward pass as tfjs ops over the variables p: loss(oneHotIds, targetWeights), and the
// constant tensors it holds (disposed with the trainer).
function createModel(tf, config, p) {
  const { dModel: d, numHeads: H, numLayers: L } = config;
  const B = kBatch;
  const T = kSeqLen;
  const dk = d / H;
  const causal = tf.tensor2d(causalMask(T), [T, T]);
  const scale = tf.scalar(1 / Math.sqrt(dk));

  const linear = (x, prefix, weight = `${prefix}.weight`, bias = `${prefix}.bias`) =>
    tf.fused.matMul({ a: x, b: p[weight], bias: p[bias] });
  const layerNorm = (x, prefix) => {
    const xc = tf.sub(x, tf.mean(x, -1, true));
    const inv = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), kLnEps));
    return tf.add(tf.mul(tf.mul(xc, inv), p[`${prefix}.weight`]), p[`${prefix}.bias`]);
  };
  const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
  const heads = (t) => tf.reshape(tf.transpose(tf.reshape(t, [B, T, H, dk]), [0, 2, 1, 3]), [B * H, T, dk]);

  // nn.MultiheadAttention, self-attention with the causal mask, on (B·T, d).
  function attention(h, prefix) {
    const qkv = linear(h, prefix, `${prefix}.in_proj_weight`, `${prefix}.in_proj_bias`); // (B·T, 3d)
    const [q, k, val] = tf.split(qkv, 3, 1).map(heads);
    const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), scale), causal); // (B·H, T, T)
    const context = tf.matMul(tf.softmax(scores), val); // (B·H, T, dk)
    const merged = tf.reshape(tf.transpose(tf.reshape(context, [B, H, T, dk]), [0, 2, 1, 3]), [B * T, d]);
    return linear(merged, `${prefix}.out_proj`);
  }

  // Mean cross-entropy over the scored targets: targetWeights is one-hot / (number scored).
  function loss(oneHotIds, targetWeights) {
    const tok = tf.matMul(oneHotIds, p['tok_emb.weight']); // (B·T, d)
    const pos =
      p['pos_emb.weight'].shape[0] === T
        ? p['pos_emb.weight']
        : tf.slice(p['pos_emb.weight'], [0, 0], [T, d]);
    let x = tf.reshape(tf.add(tf.reshape(tok, [B, T, d]), pos), [B * T, d]);
    for (let i = 0; i < L; i++) {
      const b = `blocks.${i}`;
      x = tf.add(x, attention(layerNorm(x, `${b}.ln1`), `${b}.attn`));
      x = tf.add(x, linear(gelu(linear(layerNorm(x, `${b}.ln2`), `${b}.mlp.fc1`)), `${b}.mlp.fc2`));
    }
    const logits = linear(layerNorm(x, 'ln_f'), 'head');
    return tf.neg(tf.sum(tf.mul(targetWeights, tf.logSoftmax(logits))));
  }

  return { loss, constants: [causal, scale] };
}

// AdamW over the variables p (in the order of `names`): update(byVariable) applies one step and
// returns the gradient norm; state holds its moment variables (disposed with the trainer).
function createAdamW(tf, p, names, optimizer) {
  const zeros = () => names.map((n) => tf.tidy(() => tf.variable(tf.zerosLike(p[n]), false)));
  const m = zeros(); // AdamW's exp_avg
  const v = zeros(); // exp_avg_sq
  let steps = 0;

  // clip_grad_norm_ then torch's _single_tensor_adamw: p·(1 − lr·wd); m, v moments;
  // p −= lr/bc1 · m / (√v / √bc2 + eps). Returns the (unclipped) norm as a scalar tensor.
  function update(byVariable) {
    const grads = Object.fromEntries(names.map((n) => [n, byVariable[p[n].name]])); // keyed by variable name
    const {
      lr,
      betas: [b1, b2],
      eps,
      weightDecay,
      clipGradNorm,
    } = optimizer;
    steps++;
    const bc1 = 1 - b1 ** steps;
    const bc2 = 1 - b2 ** steps;
    const norm = tf.sqrt(tf.addN(names.map((n) => tf.sum(tf.square(grads[n])))));
    const clip = clipGradNorm > 0 ? tf.minimum(tf.div(clipGradNorm, tf.add(norm, 1e-6)), 1) : tf.scalar(1);
    names.forEach((n, i) => {
      const g = tf.mul(grads[n], clip);
      const mi = tf.add(tf.mul(m[i], b1), tf.mul(g, 1 - b1));
      const vi = tf.add(tf.mul(v[i], b2), tf.mul(tf.square(g), 1 - b2));
      const denom = tf.add(tf.div(tf.sqrt(vi), Math.sqrt(bc2)), eps);
      const decayed = tf.mul(p[n], 1 - lr * weightDecay);
      p[n].assign(tf.sub(decayed, tf.mul(tf.div(mi, denom), lr / bc1)));
      m[i].assign(mi);
      v[i].assign(vi);
    });
    return norm;
  }

  return { update, state: [...m, ...v] };
}

// Linear weights are (out, in) in the state dict and (in, out) here.
function isLinearWeight(name) {
  return (
    name !== 'tok_emb.weight' &&
    name !== 'pos_emb.weight' &&
    /(in_proj_weight|proj\.weight|fc\d\.weight|head\.weight)$/.test(name)
  );
}

function transpose(data, rows, cols) {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}

function causalMask(T) {
  const mask = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) mask[i * T + j] = kMasked;
  return mask;
}

// (B·T, V) one-hot ids and one-hot targets divided by the number of scored targets (−100: a zero row).
function encodeBatch({ ids, targets }, V) {
  const oneHotIds = new Float32Array(ids.length * V);
  const weights = new Float32Array(ids.length * V);
  let scored = 0;
  for (let i = 0; i < ids.length; i++) {
    oneHotIds[i * V + ids[i]] = 1;
    if (targets[i] >= 0) scored++;
  }
  for (let i = 0; i < ids.length; i++) if (targets[i] >= 0) weights[i * V + targets[i]] = 1 / scored;
  return [oneHotIds, weights];
}
