// model.layers[l] (PretrainedModel.layers): what each layer of a pretrained model is, from the core
// config — its token mixer's kind (softmax attention, LFM2's short convolution or Qwen3.5's gated
// DeltaNet), heads, window and RoPE.
import { PRETRAINED_ARCH, MIXER_KIND } from '../constants.js';

// Layer l's attention as the core runs it (src/model/pretrained.h): its window, whether and with
// which base it rotates q and k, its q/k norm and score soft-capping.
export function layerSummary(core, l) {
  if (core.layerMixer?.[l] === MIXER_KIND.SHORT_CONV) return convSummary(core);
  if (core.layerMixer?.[l] === MIXER_KIND.DELTA_NET) return deltaSummary(core, l);
  const window = core.layerWindow?.[l] ?? 0;
  const rope = core.arch !== PRETRAINED_ARCH.GPT2 && (core.layerRope ? core.layerRope[l] === 1 : true);
  const local = rope && window > 0 && core.localRopeTheta > 0;
  return Object.freeze({
    kind: 'attention',
    heads: core.heads,
    kvHeads: core.layerKvHeads?.[l] || core.kvHeads, // per layer where the config gives them (Gemma 4)
    headDim: core.layerHeadDim?.[l] || core.headDim,
    kvFrom: (core.layerKvFrom?.[l] ?? -1) >= 0 ? core.layerKvFrom[l] : l, // an earlier layer: K/V shared
    window,
    rope,
    ropeTheta: rope ? (local ? core.localRopeTheta : core.ropeTheta) : null,
    ropeScaled: rope && !local && Boolean(core.ropeInvFreq),
    qkNorm: Boolean(core.qkNorm),
    softcap: core.attnSoftcap ?? 0,
  });
}

// A short-convolution layer (LFM2): no heads (the interpretability tools' (L, H) results hold NaN
// for it); its forward "attention" is one (T, T) channel-mean mixing map, banded by the kernel.
function convSummary(core) {
  return Object.freeze({
    kind: 'conv',
    heads: 0,
    kvHeads: 0,
    headDim: 0,
    kernel: core.convKernel,
    kvFrom: null,
    window: core.convKernel,
    rope: false,
    ropeTheta: null,
    ropeScaled: false,
    qkNorm: false,
    softcap: 0,
  });
}

// A gated DeltaNet layer (Qwen3.5, src/model/delta_net.h): its value heads (the effective
// attention's maps, numbered as the file stores them), key heads and sizes.
function deltaSummary(core, l) {
  return Object.freeze({
    kind: 'delta',
    heads: core.linearVHeads,
    kvHeads: core.linearKHeads,
    headDim: core.linearKDim,
    valueDim: core.linearVDim,
    convKernel: core.linearConvKernel,
    valueHeadOrder: core.linearLayout === 1 ? 'tiled' : 'grouped', // a qwen35 GGUF file's: tiled
    kvFrom: l,
    window: 0,
    rope: false,
  });
}
