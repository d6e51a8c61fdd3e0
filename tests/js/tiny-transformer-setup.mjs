// Shared by the TinyTransformer tests (tiny-transformer, tiny-transformer-config and
// tiny-transformer-errors .test.mjs): the small configuration they build their models from.

export const small = { vocabSize: 11, maxLength: 6, dModel: 8, numHeads: 2, numLayers: 3, seed: 3 };
