// model.layers[l] (PretrainedModel, pretrained.js): each layer as the core runs it (src/model/pretrained.h).
import { PRETRAINED_ARCH } from '../constants.js';

// MixerKind::kDeltaNet (src/model/blocks.h): a gated DeltaNet layer (src/model/delta_net.h).
const DELTA_NET_MIXER = 2;

// A DeltaNet layer: its value heads (the effective attention's maps), key heads and sizes.
function deltaSummary(core, l) {
  return Object.freeze({
    kind: 'delta',
    heads: core.linearVHeads,
    kvHeads: core.linearKHeads,
    headDim: core.linearKDim,
    valueDim: core.linearVDim,
    convKernel: core.linearConvKernel,
    kvFrom: l,
    window: 0,
    rope: false,
  });
}

// Layer l's attention as the core runs it (src/model/pretrained.h): its window, whether and with
// which base it rotates q and k, its q/k norm and score soft-capping.
export function layerSummary(core, l) {
  if (core.layerMixer?.[l] === DELTA_NET_MIXER) return deltaSummary(core, l);
  const window = core.layerWindow?.[l] ?? 0;
  const rope = core.arch !== PRETRAINED_ARCH.GPT2 && (core.layerRope ? core.layerRope[l] === 1 : true);
  const local = rope && window > 0 && core.localRopeTheta > 0;
  return Object.freeze({
    kind: 'attention',
    heads: core.heads,
    kvHeads: core.kvHeads,
    headDim: core.headDim,
    kvFrom: l,
    window,
    rope,
    ropeTheta: rope ? (local ? core.localRopeTheta : core.ropeTheta) : null,
    ropeScaled: rope && !local && Boolean(core.ropeInvFreq),
    qkNorm: Boolean(core.qkNorm),
    softcap: core.attnSoftcap ?? 0,
  });
}
