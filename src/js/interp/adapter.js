// The interpretability adapter: what logitAttribution and patch (interp/attribution.js,
// interp/patch.js) ask of a model, implemented once per model class, so each tool has one path and
// no model's math is written again in JS (the core's forward returns every activation they read).
//
// An adapter (model._interp()) is
//   { L, H (the widest layer's heads), E, d (head dim), vocab, causal, mlp (whether the blocks have an MLP),
//     heads(l) → layer l's query heads (0: a token mixer without heads, LFM2's short convolution; the
//       tools' (L, H) results are NaN past a layer's heads; a DeltaNet layer's value heads);
//       zDim(l) → the size of each of its heads' z (d; a DeltaNet layer's d_v; d is the widest);
//       kind(l) → its mixer's kind (model.layers[l].kind: 'attention', 'conv', 'delta'); mixerHook(l) → the hook of such a layer's
//       mixer output before any post-norm (its one component in the attributions), null for attention;
//     forward(ids (b·t), b, t, hooks) → the core's forward (src/wasm/bindings_interp.h: traceLayers,
//       hiddenStates (L + 1, Hugging Face's order), mlpOutputs, startLayer, startResidual, deltaLayer,
//       attnDelta, logitsRow), with the logits before any final soft-capping;
//     finalSoftcap (the final logit soft-cap the probability metrics apply; 0 = none);
//     gradients(ids (b·t), b, t, options) → the core's metric_gradients (src/wasm/bindings_gradients.h:
//       metric, position, token, against, startEmbedding, attention, activations → values, gradHidden,
//       gradZ, gradMlp, gradAttention, hidden, z, mlpBranch);
//     outProj(l) → the attention output projection's rows W_O (E, H·d); outBias(l) → its bias (E) or null;
//     normAfter(l, 'attn' | 'mlp') → the norm to freeze after that sublayer's output, or null:
//       { spec, branch } (branch: on the sublayer's output, OLMo 2's and Gemma's post-norms, x += norm(f(x));
//       else on the stream, a post-norm TinyTransformer's x = norm(x + f(x)));
//     branchScale(l) → the scale of layer l's branches as they are added to the stream (Granite's
//       residual_multiplier; 1 elsewhere), after any post-norm;
//     finalNorm() → the norm before the head, or null;
//     unembed(token) → { row (E): the unembedding row (÷ Granite's logits_scaling: the logits'
//       own map), bias: the head's bias there (0 without one) };
//     embedding(id) → { token (E): the token's embedding row as the stream gets it, positionsAdded
//       (whether hidden state 0 adds position vectors to it: GPT-2, a learned/sinusoidal TinyTransformer) };
//     attention(l) → what decides layer l's scores (qkAttribution, interp/qk.js): { kvHeads, window
//       (0 = none), scale (as the core applies it), rope: { dims, invFreq (dims/2, float64) } | null
//       (the `half` pairing (m, m + dims/2), after the q/k norm), alibi: slopes (H) | null,
//       queryTemperature(t) → the factor q at position t is multiplied by after RoPE (Ministral 3),
//       or undefined (none); params() (the weights as the core computes with them) → { inputNorm (the block's pre-norm on the
//       stream, or null), q, k: { weight (rows · d, E) row-major, bias (rows · d) | null }, qNorm, kNorm:
//       { weight, perHead, eps } | null (RMSNorm after the bias) } }.
// A norm spec is { kind: 'layer' | 'rms', weight, bias?, eps }.
import { AttentionError, check } from '../errors.js';
import { QK_NORM } from '../constants.js';

// The score scale the core uses by default: 1/√d in float32 (1.0f / sqrtf(d)).
const defaultScale = (d) => Math.fround(1 / Math.fround(Math.sqrt(d)));

// θ_m = base^(−2m/dims) per pair m, as the core's RoPE computes them (double).
const ropeFreqs = (base, dims) =>
  Float64Array.from({ length: dims / 2 }, (_, m) => base ** ((-2 * m) / dims));

// The forward of the interpretability tools: the logits before any final soft-capping (the quantity the
// parts add up to, and what patching compares).
const hooked = (handle) => (ids, b, t, hooks) =>
  check(handle.forward(ids, b, t, { ...hooks, preCapLogits: true }));

/** A TinyTransformer's adapter: its weights by state-dict name (one stateDict() copy, when first read). */
export function tinyInterp(model) {
  const handle = model._live();
  const cfg = model.config;
  const E = cfg.dModel,
    H = cfg.numHeads;
  let dict = null;
  const w = (name) => (dict ??= model.stateDict())[name].data;
  const ln = (name) => ({ kind: 'layer', weight: w(`${name}.weight`), bias: w(`${name}.bias`), eps: 1e-5 });
  return {
    L: cfg.numLayers,
    H,
    heads: () => H,
    kind: () => 'attention',
    zDim: () => E / H,
    mixerHook: () => null,
    E,
    d: E / H,
    vocab: cfg.vocabSize,
    causal: cfg.causal,
    mlp: cfg.mlp,
    finalSoftcap: 0, // no final soft-cap
    forward: hooked(handle),
    gradients: (ids, b, t, o) => check(handle.metricGradients(ids, b, t, o)),
    outProj: (l) => w(`blocks.${l}.attn.out_proj.weight`),
    outBias: (l) => w(`blocks.${l}.attn.out_proj.bias`),
    // post-norm: ln1 after the attention's residual add, ln2 after the MLP's (none without an MLP)
    normAfter: (l, sublayer) =>
      cfg.norm === 'post' && (sublayer === 'attn' || cfg.mlp)
        ? { spec: ln(`blocks.${l}.${sublayer === 'attn' ? 'ln1' : 'ln2'}`), branch: false }
        : null,
    branchScale: () => 1,
    finalNorm: () => (cfg.norm === 'pre' ? ln('ln_f') : null),
    unembed: (token) => ({
      row: w('head.weight').subarray(token * E, (token + 1) * E),
      bias: w('head.bias')[token],
    }),
    embedding: (id) => ({
      token: w('tok_emb.weight').subarray(id * E, (id + 1) * E),
      positionsAdded: cfg.positional === 'learned' || cfg.positional === 'sinusoidal',
    }),
    attention: (l) => tinyAttention(model, w, ln, l),
  };
}

// Layer l's score inputs of a TinyTransformer: in_proj_weight [q; k; v] (separate q/k/v_proj_weight
// with grouped-query heads), in_proj_bias [q; k; v]; ln1 before the attention in a pre-norm model.
function tinyAttention(model, w, ln, l) {
  const cfg = model.config;
  const E = cfg.dModel,
    d = E / cfg.numHeads,
    kvw = cfg.numKVHeads * d;
  const p = `blocks.${l}.attn.`;
  const fused = cfg.numKVHeads === cfg.numHeads;
  return {
    kvHeads: cfg.numKVHeads,
    window: cfg.window ?? 0,
    scale: defaultScale(d),
    rope: cfg.positional === 'rope' ? { dims: d, invFreq: ropeFreqs(10000, d) } : null,
    alibi:
      cfg.positional === 'alibi' ? check(model._rt.requireCore()._alibiSlopes(cfg.numHeads)).result : null,
    params: () => {
      const bias = w(`${p}in_proj_bias`);
      return {
        inputNorm: cfg.norm === 'pre' ? ln(`blocks.${l}.ln1`) : null,
        q: {
          weight: fused ? w(`${p}in_proj_weight`).subarray(0, E * E) : w(`${p}q_proj_weight`),
          bias: bias.subarray(0, E),
        },
        k: {
          weight: fused ? w(`${p}in_proj_weight`).subarray(E * E, 2 * E * E) : w(`${p}k_proj_weight`),
          bias: bias.subarray(E, E + kvw),
        },
        qNorm: null,
        kNorm: null,
      };
    },
  };
}

// The tensors of a pretrained model that attribution and patching read, as { role, layer } keys of
// the core (handle.readRows), null where the model has none: the core lists which it holds.
function pretrainedTensors(handle) {
  const roles = new Set(handle.expected().map((t) => t.role));
  const key = (role, layer = -1) => (roles.has(role) ? { role, layer } : null);
  return {
    outProj: (l) => key('o', l),
    outBias: (l) => key('o_bias', l),
    // OLMo 2's and Gemma's post-norms: after the attention, after the MLP
    post1: (l) => key('post_attn_norm', l),
    post2: (l) => key('post_mlp_norm', l),
    unembed: key('unembed') ?? key('embed'),
    finalNorm: key('final_norm'),
    finalNormBias: key('final_norm_bias'), // LayerNorm (GPT-2); RMSNorm has none
    embed: key('embed'),
    positions: key('positions'), // GPT-2's learned positions, added to the stream
    // qkAttribution: the block's pre-norm, q and k (fused [q; k; v] or apart), their biases and norms
    attnNorm: (l) => key('attn_norm', l),
    attnNormBias: (l) => key('attn_norm_bias', l),
    qkv: (l) => key('qkv', l),
    qkvBias: (l) => key('qkv_bias', l),
    q: (l) => key('q', l),
    k: (l) => key('k', l),
    qBias: (l) => key('q_bias', l),
    kBias: (l) => key('k_bias', l),
    qNorm: (l) => key('q_norm', l),
    kNorm: (l) => key('k_norm', l),
  };
}

// What the adapter below does not model (Gemma 4): each tool decomposes the stream into attention
// heads and MLPs of one head size, so a model with any of these is refused, by name, rather than
// decomposed wrongly.
function notModelled(core) {
  const missing = [];
  if (core.layerHeadDim?.length || core.layerKvHeads?.length) missing.push('per-layer head sizes');
  if (core.layerKvFrom?.some((from) => from >= 0)) missing.push('keys and values shared across layers');
  if (core.perLayerWidth > 0) missing.push('per-layer inputs');
  if (core.layerScale) missing.push('layer output scales (the whole stream scaled after each layer)');
  if (core.vNorm) missing.push('the value norm');
  return missing;
}

/** A PretrainedModel's adapter: its weights read back from the heap by role (float32 rows). */
export function pretrainedInterp(model) {
  const handle = model._live();
  const core = model._core;
  const missing = notModelled(core);
  if (missing.length > 0)
    throw new AttentionError(
      'INVALID_ARGUMENT',
      `the interpretability tools (logitAttribution, qkAttribution, patch, attributionPatch, gradients) do not yet model ${model.architecture}'s ${missing.join(', ')}`,
    );
  const E = core.hidden;
  const names = pretrainedTensors(handle);
  const rows = (key, first = 0, count = 1) => check(handle.readRows(key.role, key.layer, first, count)).data;
  const rms = (key) => ({ kind: 'rms', weight: rows(key), eps: core.normEps });
  return {
    L: core.layers,
    H: Math.max(...model.layers.map((s) => s.heads)),
    heads: (l) => model.layers[l].heads,
    kind: (l) => model.layers[l].kind,
    // a short convolution's output (conv.hook_result), one component where attention has a head each
    mixerHook: (l) => (model.layers[l].kind === 'conv' ? `blocks.${l}.conv.hook_result` : null),
    E,
    d: Math.max(...model.layers.map((s, l) => zDimOf(core, s, l))),
    zDim: (l) => zDimOf(core, model.layers[l], l),
    vocab: core.vocabSize,
    causal: true,
    mlp: true,
    forward: hooked(handle),
    gradients: (ids, b, t, o) => check(handle.metricGradients(ids, b, t, o)),
    finalSoftcap: core.finalSoftcap ?? 0, // Gemma 2's final_logit_softcapping (the probability metrics)
    // a DeltaNet layer's W_out (E, H_v·d_v): its value heads' z through it is its output
    outProj: (l) =>
      rows(model.layers[l].kind === 'delta' ? { role: 'linear_out', layer: l } : names.outProj(l), 0, E),
    outBias: (l) => {
      const key = model.layers[l].kind === 'delta' ? null : names.outBias(l);
      return key ? rows(key) : null;
    },
    // x += norm(attn(x)); x += norm(mlp(x)): each frozen at its branch's own output
    normAfter: (l, sublayer) =>
      core.postNorms
        ? { spec: rms(sublayer === 'attn' ? names.post1(l) : names.post2(l)), branch: true }
        : null,
    branchScale: () => core.residualScale ?? 1, // Granite's residual_multiplier (float32)
    finalNorm: () =>
      names.finalNormBias
        ? { kind: 'layer', weight: rows(names.finalNorm), bias: rows(names.finalNormBias), eps: core.normEps }
        : rms(names.finalNorm),
    unembed: (token) => {
      const row = rows(names.unembed, token),
        s = core.logitsScaling ?? 1; // Granite: logits ÷ logits_scaling
      return { row: s === 1 ? row : Float64Array.from(row, (v) => v / s), bias: 0 };
    },
    embedding: (id) => ({
      token: rows(names.embed, id).map((v) => Math.fround(v * (core.embedScale ?? 1))), // Gemma: × √hidden
      positionsAdded: names.positions !== null,
    }),
    attention: (l) => pretrainedAttention(model, names, rows, l),
  };
}

// The size of each head's z in layer l (summary: model.layers[l]): a DeltaNet layer's value heads'
// d_v, an attention layer's head size, 0 for a layer without heads.
function zDimOf(core, summary, l) {
  if (summary.kind === 'delta') return summary.valueDim;
  return summary.heads > 0 ? core.layerHeadDim?.[l] || core.headDim : 0;
}

// Layer l's score inputs of a PretrainedModel, as the core builds its attention (pretrained_load.cpp:
// make_attention): the layer's RoPE base (Gemma 3's sliding layers: their own, unscaled) or the
// scaled inverse frequencies; the attention scale (Gemma: query_pre_attn_scalar^−1/2).
function pretrainedAttention(model, names, rows, l) {
  const core = model._core;
  const d = core.headDim,
    summary = model.layers[l],
    dims = core.rotaryDims || d;
  return {
    kvHeads: core.kvHeads,
    window: summary.window,
    scale: core.attentionScale > 0 ? Math.fround(core.attentionScale) : defaultScale(d),
    rope: summary.rope
      ? {
          dims,
          invFreq: summary.ropeScaled
            ? Float64Array.from(core.ropeInvFreq)
            : ropeFreqs(summary.ropeTheta, dims),
          scale: summary.ropeScaled ? (core.ropeAttentionFactor ?? 1) : 1, // LongRoPE: cos, sin × it
        }
      : null,
    alibi: null,
    // Ministral 3 (llama_4_scaling_beta): 1 + β·ln(1 + ⌊t / floor⌋), on the layers with RoPE
    queryTemperature:
      summary.rope && core.queryTemperatureBeta
        ? (t) => 1 + core.queryTemperatureBeta * Math.log(1 + Math.floor(t / core.queryTemperatureFloor))
        : undefined,
    params: () => pretrainedParams(model, names, rows, l),
  };
}

// The pre-norm, q and k rows (a fused [q; k; v]'s rows [0, H·d) and [H·d, (H + Hkv)·d), or q and k
// apart), their biases and q/k norms, read back from the core as it computes with them.
function pretrainedParams(model, names, rows, l) {
  const core = model._core;
  const d = core.headDim,
    qw = core.heads * d,
    kw = core.kvHeads * d;
  const fused = names.qkv(l);
  const fusedBias = names.qkvBias(l) ? rows(names.qkvBias(l)) : null;
  const q = { weight: fused ? rows(fused, 0, qw) : rows(names.q(l), 0, qw) };
  const k = { weight: fused ? rows(fused, qw, kw) : rows(names.k(l), 0, kw) };
  q.bias = fusedBias ? fusedBias.subarray(0, qw) : names.qBias(l) ? rows(names.qBias(l)) : null;
  k.bias = fusedBias ? fusedBias.subarray(qw, qw + kw) : names.kBias(l) ? rows(names.kBias(l)) : null;
  const perHead = core.qkNorm === QK_NORM.perHead;
  const norm = (key) => ({ weight: rows(key), perHead, eps: core.normEps });
  let inputNorm = null;
  if (names.attnNorm(l)) {
    // GPT-2's LayerNorm, the Llama layout's RMSNorm; none without pre-norms (OLMo 2)
    const bias = names.attnNormBias(l) ? rows(names.attnNormBias(l)) : null;
    inputNorm = { kind: bias ? 'layer' : 'rms', weight: rows(names.attnNorm(l)), eps: core.normEps };
    if (bias) inputNorm.bias = bias;
  }
  return {
    inputNorm,
    q,
    k,
    qNorm: core.qkNorm ? norm(names.qNorm(l)) : null,
    kNorm: core.qkNorm ? norm(names.kNorm(l)) : null,
  };
}
