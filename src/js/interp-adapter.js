// The interpretability adapter: what logitAttribution and patch (interp-attribution.js,
// interp-patch.js) ask of a model, implemented once per model class, so each tool has one path and
// no model's math is written again in JS (the core's forward returns every activation they read).
//
// An adapter (model._interp()) is
//   { L, H, E, d (head dim), vocab, causal, mlp (whether the blocks have an MLP),
//     forward(ids (b·t), b, t, hooks) → the core's forward (src/wasm/bindings_interp.h: traceLayers,
//       hiddenStates (L + 1, Hugging Face's order), mlpOutputs, startLayer, startResidual, deltaLayer,
//       attnDelta, logitsRow), with the logits before any final soft-capping;
//     outProj(l) → the attention output projection's rows W_O (E, H·d); outBias(l) → its bias (E) or null;
//     normAfter(l, 'attn' | 'mlp') → the norm to freeze after that sublayer's output, or null:
//       { spec, branch } (branch: on the sublayer's output, OLMo 2's and Gemma's post-norms, x += norm(f(x));
//       else on the stream, a post-norm TinyTransformer's x = norm(x + f(x)));
//     finalNorm() → the norm before the head, or null;
//     unembed(token) → { row (E): the unembedding row, bias: the head's bias there (0 without one) } }.
// A norm spec is { kind: 'layer' | 'rms', weight, bias?, eps }.
import { check } from './errors.js';

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
    E,
    d: E / H,
    vocab: cfg.vocabSize,
    causal: cfg.causal,
    mlp: cfg.mlp,
    forward: hooked(handle),
    outProj: (l) => w(`blocks.${l}.attn.out_proj.weight`),
    outBias: (l) => w(`blocks.${l}.attn.out_proj.bias`),
    // post-norm: ln1 after the attention's residual add, ln2 after the MLP's (none without an MLP)
    normAfter: (l, sublayer) =>
      cfg.norm === 'post' && (sublayer === 'attn' || cfg.mlp)
        ? { spec: ln(`blocks.${l}.${sublayer === 'attn' ? 'ln1' : 'ln2'}`), branch: false }
        : null,
    finalNorm: () => (cfg.norm === 'pre' ? ln('ln_f') : null),
    unembed: (token) => ({
      row: w('head.weight').subarray(token * E, (token + 1) * E),
      bias: w('head.bias')[token],
    }),
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
  };
}

/** A PretrainedModel's adapter: its weights read back from the heap by role (float32 rows). */
export function pretrainedInterp(model) {
  const handle = model._live();
  const core = model._core;
  const E = core.hidden;
  const names = pretrainedTensors(handle);
  const rows = (key, first = 0, count = 1) => check(handle.readRows(key.role, key.layer, first, count)).data;
  const rms = (key) => ({ kind: 'rms', weight: rows(key), eps: core.normEps });
  return {
    L: core.layers,
    H: core.heads,
    E,
    d: core.headDim,
    vocab: core.vocabSize,
    causal: true,
    mlp: true,
    forward: hooked(handle),
    outProj: (l) => rows(names.outProj(l), 0, E),
    outBias: (l) => {
      const key = names.outBias(l);
      return key ? rows(key) : null;
    },
    // x += norm(attn(x)); x += norm(mlp(x)): each frozen at its branch's own output
    normAfter: (l, sublayer) =>
      core.postNorms
        ? { spec: rms(sublayer === 'attn' ? names.post1(l) : names.post2(l)), branch: true }
        : null,
    finalNorm: () =>
      names.finalNormBias
        ? { kind: 'layer', weight: rows(names.finalNorm), bias: rows(names.finalNormBias), eps: core.normEps }
        : rms(names.finalNorm),
    unembed: (token) => ({ row: rows(names.unembed, token), bias: 0 }),
  };
}
