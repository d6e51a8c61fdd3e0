// The import graph of src/js and web has no cycle (scripts/check-imports.mjs), and the check finds
// one when there is: a planted graph, and real module text with static, re-export and dynamic imports.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findCycles, importGraph, importsOf } from '../../scripts/check-imports.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('import graph', () => {
  it('src/js and web import each other in no cycle', () => {
    const graph = importGraph(ROOT);
    assert.ok(Object.keys(graph).length > 100, 'the graph holds the modules');
    assert.ok(graph['web/demo.js'].includes('web/demo-store.js'), 'edges are resolved to files');
    assert.deepEqual(
      findCycles(graph).map((c) => c.join(' → ')),
      [],
    );
  });

  it('finds a planted cycle and names its path; a self-import is one too', () => {
    const graph = { a: ['b'], b: ['c', 'd'], c: ['a'], d: [], e: ['e'] };
    assert.deepEqual(findCycles(graph), [
      ['a', 'b', 'c', 'a'],
      ['e', 'e'],
    ]);
    assert.deepEqual(findCycles({ a: ['b'], b: ['c'], c: [] }), []);
  });

  it('reads static imports, re-exports and literal dynamic imports, not packages', () => {
    const text = [
      "import { x } from './x.js';",
      "export { y } from '../y.js';",
      "export * from './z.js';",
      "import 'node:fs';",
      "import t from 'typescript';",
      "const lazy = () => import('./lazy.js');",
      'const named = (n) => import(n);',
    ].join('\n');
    assert.deepEqual(importsOf(text), ['./x.js', '../y.js', './z.js', './lazy.js']);
  });
});
