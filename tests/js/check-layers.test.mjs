// scripts/check-layers.mjs (npm test's first section): the tree passes, and each kind of wrong
// include is caught — a layer reaching up, Emscripten below the bindings, Eigen in src/, an include
// that does not name its layer.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { checkFile, checkTree } from '../../scripts/check-layers.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('scripts/check-layers.mjs', () => {
  it('src/ follows the layer direction today', () => {
    assert.deepEqual(checkTree(root), []);
  });

  it('allows a layer its own includes, those below it, and the standard library', () => {
    assert.deepEqual(
      checkFile(
        'train',
        '#include <vector>\n#include "kernels/kernels.h"\n#include "model/layers.h"\n#include "train/adamw.h"',
      ),
      [],
    );
    assert.deepEqual(checkFile('wasm', '#include <emscripten/bind.h>\n#include "train/trainer.h"'), []);
  });

  it('refuses an include up the layers', () => {
    const cases = [
      ['kernels', 'core/status.h'],
      ['core', 'model/layers.h'],
      ['core', 'train/adamw.h'],
      ['model', 'train/tasks.h'],
      ['train', 'wasm/binding_util.h'],
      ['core', 'wasm/fast_path.h'],
    ];
    for (const [layer, path] of cases) {
      const problems = checkFile(layer, `// x\n#include "${path}"\n`);
      assert.equal(problems.length, 1, `${layer} -> ${path}`);
      assert.equal(problems[0].line, 2);
    }
  });

  it('refuses Emscripten outside src/wasm, Eigen anywhere in src/, and layer-less includes', () => {
    for (const layer of ['kernels', 'core', 'model', 'train']) {
      assert.equal(checkFile(layer, '#include <emscripten/val.h>').length, 1);
      assert.equal(checkFile(layer, '#include <emscripten.h>').length, 1);
    }
    for (const layer of ['core', 'wasm'])
      assert.match(checkFile(layer, '#include <Eigen/Core>')[0].message, /Eigen/);
    assert.match(checkFile('core', '  #  include "status.h"')[0].message, /name its layer/);
    assert.match(checkFile('core', '#include "tests/cpp/reference.h"')[0].message, /name its layer/);
  });
});
