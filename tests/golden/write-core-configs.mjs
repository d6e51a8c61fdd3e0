// What the native tests need of every pretrained fixture, computed by the JS and committed in
// tests/golden/pretrained/<fixture>/:
// - core-config.json: the object the JS passes to the C++ PretrainedModel (src/model/pretrained.h's
//   PretrainedConfig, in the binding's names) computed from the fixture's config.json;
// - tensor-roles.json: every tensor the core lists for that config (its one role list,
//   src/model/pretrained_roles.cpp, read through the built module), named by the family registry
//   (src/js/architectures/), in the core's load order: { name (as model.safetensors spells it, with the prefix that file uses),
//   fileNames (every name a file may give it), role (the core's role name), layer (-1: global),
//   transposed (stored (in, out), as GPT-2's Conv1D) }.
// The native Catch2 suite (tests/cpp/test_pretrained_families.cpp) builds and loads every family from
// them without JS and without a copy of the Hugging Face names; tests/js/family-fixtures.test.mjs
// checks the committed files against what the JS computes today.
//
// Run after changing a fixture, the config mapping or a family's tensor names:
//   node tests/golden/write-core-configs.mjs
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { coreConfig } from '../../src/js/pretrained/config.js';
import { fileNames, storedTransposed, tensorName } from '../../src/js/architectures/index.js';
import createAttentionModule from '../../dist/attention_core.mjs';

const module = await createAttentionModule();

/** [{ role, layer, shape }] of every tensor core config `core` needs, in load order: the core's list. */
export function coreTensorRoles(core) {
  const handle = new module.PretrainedHandle();
  try {
    const st = handle.init({ ...core, memoryLimit: 2 ** 52 });
    if (st.code !== 0) throw new Error(st.message);
    return handle.expected().map(({ role, layer, shape }) => ({ role, layer, shape: Array.from(shape) }));
  } finally {
    handle.delete();
  }
}

export const PRETRAINED_DIR = new URL('./pretrained/', import.meta.url);

/** Every fixture folder of tests/golden/pretrained, sorted by name. */
export function fixtureNames() {
  return readdirSync(PRETRAINED_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

const readJson = (fixture, file) =>
  JSON.parse(readFileSync(new URL(`${fixture}/${file}`, PRETRAINED_DIR), 'utf8'));

/** The core config the JS computes from a fixture's config file (config.json by default). */
export function computedCoreConfig(fixture, configFile = 'config.json') {
  return coreConfig(readJson(fixture, configFile)).core;
}

/** The committed core-config.json of a fixture, parsed. */
export function committedCoreConfig(fixture) {
  return readJson(fixture, 'core-config.json');
}

/** The text core-config.json holds: two-space JSON (numbers as JS prints them: exact doubles). */
export function coreConfigText(core) {
  return `${JSON.stringify(core, null, 2)}\n`;
}

// The tensor names of a safetensors file's header (8-byte little-endian length, then JSON).
function safetensorsNames(fixture, file) {
  const bytes = readFileSync(new URL(`${fixture}/${file}`, PRETRAINED_DIR));
  const length = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8'));
  return new Set(Object.keys(header).filter((name) => name !== '__metadata__'));
}

/** The core's tensor roles of a fixture, named by the registry (tensor-roles.json's entries). */
export function computedTensorRoles(fixture) {
  const config = readJson(fixture, 'config.json');
  const { core, family, names: wrapped } = coreConfig(config);
  const inFile = safetensorsNames(fixture, 'model.safetensors');
  return coreTensorRoles(core).map(({ role, layer }) => {
    const names = wrapped(tensorName(family, role, layer)).flatMap((n) => fileNames(family, n));
    const name = names.find((n) => inFile.has(n));
    if (name === undefined) throw new Error(`${fixture}/model.safetensors has none of ${names.join(', ')}`);
    return { name, fileNames: names, role, layer, transposed: storedTransposed(family, role) };
  });
}

/** The committed tensor-roles.json of a fixture, parsed. */
export function committedTensorRoles(fixture) {
  return readJson(fixture, 'tensor-roles.json');
}

/** The text tensor-roles.json holds: a JSON array, one tensor a line. */
export function tensorRolesText(roles) {
  return `[\n${roles.map((r) => `  ${JSON.stringify(r)}`).join(',\n')}\n]\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const fixture of fixtureNames()) {
    const text = coreConfigText(computedCoreConfig(fixture));
    writeFileSync(new URL(`${fixture}/core-config.json`, PRETRAINED_DIR), text);
    console.log(`wrote ${fixture}/core-config.json`);
    writeFileSync(
      new URL(`${fixture}/tensor-roles.json`, PRETRAINED_DIR),
      tensorRolesText(computedTensorRoles(fixture)),
    );
    console.log(`wrote ${fixture}/tensor-roles.json`);
  }
}
