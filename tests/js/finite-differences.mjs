// Shared by the backward tests (sdpa-backward and softmax-layernorm-backward .test.mjs): central finite
// differences in float64 and the named tolerances of the float32 gradients against them.

// Named tolerances (absolute), float32 core vs the float64 finite-difference reference (whose own
// error is ~1e-8 at step 1e-4: O(h²) truncation plus 1e-16/h rounding).
const kFdStep = 1e-4;
export const kSdpaGradTol = 5e-6; // SDPA gradients of O(1) inputs
export const kSoftmaxGradTol = 1e-6; // one row's softmax backward
export const kLnGradTol = 5e-6; // LayerNorm gradients (rstd ~1 for N(0, 1) rows)
export const kDropoutRatioTol = 1e-5; // dropped ÷ weights vs 0 or 1/(1 − p)

// Central differences of loss(arrays) with respect to every element of arrays[which] (Float64Arrays).
export function finiteDifferences(loss, arrays, which) {
  const x = arrays[which];
  const grad = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i];
    x[i] = keep + kFdStep;
    const plus = loss(arrays);
    x[i] = keep - kFdStep;
    const minus = loss(arrays);
    x[i] = keep;
    grad[i] = (plus - minus) / (2 * kFdStep);
  }
  return grad;
}
