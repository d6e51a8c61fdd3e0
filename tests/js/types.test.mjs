// The TypeScript type test: the files of tests/js/types (usage.ts, mha.ts, model.ts, widgets.ts) must
// compile under `strict` against the project's hand-written declarations (src/js/index.d.ts and
// web/widgets.d.ts with the area files they re-export), resolved as the package 'attention-wasm'.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = 'node_modules/.bin/tsc';

const tsc = (...args) =>
  spawnSync(TSC, ['-p', 'tests/js/types', '--noEmit', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('TypeScript declarations', () => {
  it("'attention-wasm' and 'attention-wasm/widgets' resolve to src/js/index.d.ts and web/widgets.d.ts", () => {
    const r = tsc('--listFiles');
    const files = r.stdout.split('\n').map((l) => l.trim());
    for (const entry of ['/src/js/index.d.ts', '/web/widgets.d.ts'])
      assert.ok(
        files.some((f) => f.endsWith(entry)),
        `${entry} not among the compiled files:\n${r.stdout}${r.stderr}`,
      );
  });

  it('tsc -p tests/js/types --noEmit exits 0 (every @ts-expect-error is a real error)', () => {
    const r = tsc();
    assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
  });
});
