// Shared by the MultiHeadAttention.backward tests (mha-backward, mha-backward-pytorch and
// mha-backward-errors .test.mjs): named tolerances and the helpers that build modules and compare gradients.

import { Tensor, MultiHeadAttention, seededNormal } from '../../src/js/index.js';
import { FIXTURE_TOL } from './close.js';

// Finite differences: step in double, error ~1e-8 (O(h²) truncation + 1e-16/h rounding).
export const kFdStep = 1e-4;
// |core − reference| ≤ abs + rel·|reference|: float32 gradients are sums of a few dozen products of
// magnitude ~1 (a few ulps each), as the C++ test (tests/cpp/test_multi_head_backward.cpp) bounds them.
export const kGradTol = { abs: 5e-5, rel: 1e-4 };
export const kForwardTol = 1e-5; // the float32 forward against the float64 reference (checks the reference)
export const kFixtureTol = FIXTURE_TOL; // against PyTorch: 1e-5 absolute + 1e-4 relative
export const kStructuralZeroTol = 1e-5; // the key third of in_proj_bias: exactly 0, both sides are rounding noise
export const kDropoutRatioTol = 1e-5; // trace `dropped` ÷ `weights` vs 0 or 1/(1 − p)

// A module with every parameter random: the seeded init has zero biases and unit LayerNorm weights,
// which would hide bugs in their gradients.
export function randomModule(config, seed) {
  const mha = new MultiHeadAttention({ ...config, seed });
  const stateDict = {};
  let s = 1000 * seed;
  for (const [name, t] of Object.entries(mha.stateDict())) {
    const shift = name === 'layer_norm.weight' ? 1 : 0;
    stateDict[name] = new Tensor(
      seededNormal(t.shape, s++).data.map((v) => 0.5 * v + shift),
      t.shape,
    );
  }
  return mha.loadStateDict(stateDict);
}

export const E6 = { embedDim: 6, numHeads: 2 };

export const bools = (n, off) => Uint8Array.from({ length: n }, (_, i) => (off(i) ? 0 : 1));
