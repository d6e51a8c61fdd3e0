// The core config of every pretrained fixture, committed as tests/golden/pretrained/<fixture>/core-config.json:
// the object the JS passes to the C++ PretrainedModel (src/model/pretrained.h's PretrainedConfig, in the
// binding's names) computed from the fixture's config.json. The native Catch2 suite
// (tests/cpp/test_pretrained_families.cpp) builds every family from it without JS;
// tests/js/family-fixtures.test.mjs checks the committed files against what the JS computes today.
//
// Run after changing a fixture or the config mapping: node tests/golden/write-core-configs.mjs
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { coreConfig } from '../../src/js/pretrained-config.js';

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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const fixture of fixtureNames()) {
    const text = coreConfigText(computedCoreConfig(fixture));
    writeFileSync(new URL(`${fixture}/core-config.json`, PRETRAINED_DIR), text);
    console.log(`wrote ${fixture}/core-config.json`);
  }
}
