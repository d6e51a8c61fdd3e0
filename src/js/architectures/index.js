// The family registry: one module per supported architecture, holding everything the library knows
// about it — its config.json key table with transformers' class defaults, how its config maps to
// the core's config (src/model/pretrained.h's PretrainedConfig), its Hugging Face tensor names by
// role and file layout, and its GGUF part (gguf-layout.js: llama.cpp's names, keys and fixes). Code elsewhere asks the registry and never branches on a family's name.
// Adding a family that needs no new math: a module here, its line in FAMILIES, a fixture (see
// CONTRIBUTING.md).
import gpt2 from './gpt2.js';
import llama from './llama.js';
import qwen2 from './qwen2.js';
import qwen3 from './qwen3.js';
import mistral from './mistral.js';
import smollm3 from './smollm3.js';
import olmo2 from './olmo2.js';
import gemma2 from './gemma2.js';
import gemma3 from './gemma3.js';
import phi3 from './phi3.js';
import granite from './granite.js';
import ministral3 from './ministral3.js';
import lfm2 from './lfm2.js';
import qwen3_5 from './qwen3_5.js';
import gemma4 from './gemma4.js';

/** The families, in the docs' order. */
export const FAMILIES = Object.freeze([
  gpt2,
  llama,
  qwen2,
  qwen3,
  mistral,
  smollm3,
  olmo2,
  gemma2,
  gemma3,
  phi3,
  granite,
  ministral3,
  lfm2,
  qwen3_5,
  gemma4,
]);

/** The supported architectures (config.json's architectures[0]). */
export const ARCHITECTURES = Object.freeze(FAMILIES.map((f) => f.architecture));

/** Each architecture's key table: { modelType, implemented, inert, defaultOnly } (PRETRAINED_CONFIG_KEYS). */
export const CONFIG_KEYS = Object.fromEntries(FAMILIES.map((f) => [f.architecture, f.keys]));

const byArchitecture = new Map(FAMILIES.map((f) => [f.architecture, f]));

/** Architectures refused by name, each with why: { architecture: reason } (a family's `refuses`). */
export const REFUSED_ARCHITECTURES = Object.freeze(
  Object.assign({}, ...FAMILIES.map((f) => f.refuses ?? {})),
);

/** The registry entry of a supported architecture, or undefined. */
export function familyOf(architecture) {
  return byArchitecture.get(architecture);
}

/** The Hugging Face name (without a file prefix) of a role's tensor, `layer` -1 for a global one. */
export function tensorName(family, role, layer = -1) {
  const t = family.tensors;
  const name = layer < 0 ? t.global[role] : t.perLayer[role];
  if (name === undefined) throw new Error(`${family.architecture} has no tensor of role "${role}"`);
  return layer < 0 ? name : `${t.layer}${layer}.${name}`;
}

/** The names a file may give a tensor: the family's prefixes (GPT-2: with or without "transformer."). */
export function fileNames(family, name) {
  return family.tensors.prefixes.map((p) => p + name);
}

/**
 * The shape a role's tensor has in the family's files, from the core's: reversed where stored (in,
 * out), or as the family's `tensors.fileShapes[role]` gives it (Qwen3.5's conv1d: (C, 1, K)).
 */
export function fileShape(family, role, shape) {
  const core = Array.from(shape);
  const reshape = family.tensors.fileShapes?.[role];
  if (reshape) return reshape(core);
  return storedTransposed(family, role) ? core.reverse() : core;
}

/** Whether a role's matrix is stored (in, out) in the family's files (GPT-2's Conv1D). */
export function storedTransposed(family, role) {
  return family.tensors.transposed.includes(role);
}

const byGGUFName = new Map(FAMILIES.flatMap((f) => (f.gguf ? f.gguf.names.map((n) => [n, f]) : [])));

/** GGUF general.architecture names refused by name, each with why (a family's `refusesGGUF`). */
export const REFUSED_GGUF_ARCHITECTURES = Object.freeze(
  Object.assign({}, ...FAMILIES.map((f) => f.refusesGGUF ?? {})),
);

/** The general.architecture names of GGUF files the registry reads, in the docs' order. */
export const GGUF_ARCHITECTURES = Object.freeze([...byGGUFName.keys()]);

/** The registry entry a GGUF file's general.architecture names, or undefined. */
export function familyOfGGUF(name) {
  return byGGUFName.get(name);
}

/** llama.cpp's name of a role's tensor in a GGUF file of `family`, `layer` -1 for a global one. */
export function ggufTensorName(family, role, layer = -1) {
  const t = family.gguf.tensors;
  const name = layer < 0 ? t.global[role] : t.perLayer[role];
  if (name === undefined) throw new Error(`${family.architecture} has no GGUF tensor of role "${role}"`);
  return layer < 0 ? name : `${t.layer}${layer}.${name}`;
}
