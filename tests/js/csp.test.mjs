// The module runs where a strict Content-Security-Policy forbids string evaluation: a child Node
// process with --disallow-code-generation-from-strings (the Node analogue of a page whose
// script-src lacks 'unsafe-eval') loads src/js/index.js, calls init(), and runs a forward, a
// multi-head forward and a training step. The module is linked with -sDYNAMIC_EXECUTION=0
// (cmake/emscripten.cmake); the default Embind build builds its invokers with `new Function` and
// fails here with "EvalError: Code generation from strings disallowed" — so this test catches any
// eval that comes back (a flag dropped, a new Emscripten feature, a dependency).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const index = pathToFileURL(
  join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'js', 'index.js'),
).href;

const child = `
const attn = await import(${JSON.stringify(index)});
await attn.init();
const { Tensor } = attn;
const q = attn.seededNormal([1, 4, 8], 1), k = attn.seededNormal([1, 4, 8], 2), v = attn.seededNormal([1, 4, 8], 3);
const r = attn.scaledDotProductAttention(q, k, v, { causal: true });
if (!r.output.data.every(Number.isFinite)) throw new Error('sdpa output not finite');
const mha = new attn.MultiHeadAttention({ embedDim: 64, numHeads: 4, seed: 7 });
const m = mha.forward(attn.seededNormal([1, 16, 64], 4), null, null, { trace: true });
if (m.output.shape.join() !== '1,16,64' || !m.trace.length) throw new Error('mha forward');
mha.dispose();
const task = attn.createTask('reverse', { length: 3, seed: 2 });
const model = new attn.TinyTransformer({ vocabSize: task.vocabSize, maxLength: task.sequenceLength, dModel: 16, numHeads: 2, numLayers: 1, seed: 1 });
const trainer = new attn.Trainer(model, { lr: 3e-3 });
const { ids, targets } = task.batch(4);
const step = trainer.step(ids, targets);
if (!Number.isFinite(step.loss)) throw new Error('loss not finite');
trainer.dispose(); model.dispose(); task.dispose();
console.log('OK', attn.kernelVariant());
`;

test('the module loads and runs under node --disallow-code-generation-from-strings', () => {
  // process.execArgv passes --experimental-wasm-relaxed-simd on when the suite runs on that build.
  const p = spawnSync(
    process.execPath,
    [...process.execArgv, '--disallow-code-generation-from-strings', '--input-type=module', '-e', child],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(p.stderr, '', 'nothing on stderr');
  assert.equal(p.status, 0, `exit status (stderr: ${p.stderr})`);
  assert.match(p.stdout.trim(), /^OK /);
  console.log(`child: ${p.stdout.trim()}`);
});

test('the child really forbids string evaluation (the test can fail)', () => {
  const p = spawnSync(
    process.execPath,
    [
      '--disallow-code-generation-from-strings',
      '--input-type=module',
      '-e',
      'try { new Function("return 1")(); console.log("eval ran") } catch (e) { console.log(e.name) }',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(p.stdout.trim(), 'EvalError');
});
