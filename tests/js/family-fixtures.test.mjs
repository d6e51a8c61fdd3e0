// Each pretrained fixture's committed core config (tests/golden/pretrained/<fixture>/core-config.json,
// what the native Catch2 suite builds its model from) equals the one the JS computes from config.json
// today, from both config layouts where the fixture has two. Fixtures are listed from the directory:
// a new folder without core-config.json fails here (write it with node tests/golden/write-core-configs.mjs).
// The same for tensor-roles.json: the file name, role, layer and layout of every tensor the family
// registry maps, the native tests' only source of the Hugging Face names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import {
  PRETRAINED_DIR,
  committedCoreConfig,
  committedTensorRoles,
  computedCoreConfig,
  computedTensorRoles,
  coreConfigText,
  fixtureNames,
  tensorRolesText,
} from '../golden/write-core-configs.mjs';

const fixtures = fixtureNames();

describe('the pretrained fixtures: committed core configs', () => {
  it('lists the fixture folders from the directory', () => {
    assert.ok(fixtures.length > 0, 'no fixture folder in tests/golden/pretrained');
  });

  for (const fixture of fixtures) {
    it(`${fixture}: core-config.json is the core config the JS computes from config.json`, () => {
      const file = new URL(`${fixture}/core-config.json`, PRETRAINED_DIR);
      assert.ok(existsSync(file), `${fixture}/core-config.json is missing`);
      const computed = computedCoreConfig(fixture);
      assert.deepEqual(committedCoreConfig(fixture), computed);
      // Byte for byte what the writer writes: no hand edits, every double exact.
      assert.equal(readFileSync(file, 'utf8'), coreConfigText(computed));
    });

    it(`${fixture}: tensor-roles.json is what the registry maps for the config`, () => {
      const file = new URL(`${fixture}/tensor-roles.json`, PRETRAINED_DIR);
      assert.ok(existsSync(file), `${fixture}/tensor-roles.json is missing`);
      const computed = computedTensorRoles(fixture);
      assert.deepEqual(committedTensorRoles(fixture), computed);
      assert.equal(readFileSync(file, 'utf8'), tensorRolesText(computed));
      // Each tensor has its own file name (no two roles read the same tensor).
      const names = new Set(computed.map((t) => t.name));
      assert.equal(names.size, computed.length);
    });

    if (existsSync(new URL(`${fixture}/config.transformers5.json`, PRETRAINED_DIR))) {
      it(`${fixture}: the transformers 5 layout gives the same core config`, () => {
        assert.deepEqual(
          computedCoreConfig(fixture, 'config.transformers5.json'),
          committedCoreConfig(fixture),
        );
      });
    }
  }
});
