// The import graph of src/js and web has no cycle and follows the folders' layering
// (scripts/check-imports.mjs); the checks find what they look for in planted graphs and module text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  FOLDER_IMPORTS,
  areaOf,
  findCycles,
  importGraph,
  importsOf,
  layeringProblems,
} from '../../scripts/check-imports.mjs';

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

describe('folder layering of src/js', () => {
  it('every import follows FOLDER_IMPORTS', () => {
    assert.deepEqual(layeringProblems(importGraph(ROOT)), []);
  });

  it('names an import against the layering, and a folder with no rule', () => {
    assert.equal(areaOf('src/js/index.js'), 'top');
    assert.equal(areaOf('src/js/formats/gguf.js'), 'formats');
    assert.equal(areaOf('web/widgets/model.js'), 'widgets');
    assert.equal(areaOf('web/widgets/figures/svg.js'), 'widgets/figures');
    assert.equal(areaOf('web/demo.js'), 'web');
    const graph = {
      'src/js/formats/gguf.js': ['src/js/pretrained/load.js', 'src/js/errors.js'],
      'src/js/newarea/x.js': ['src/js/errors.js'],
      'src/js/index.js': ['src/js/pretrained/load.js'],
    };
    assert.deepEqual(layeringProblems(graph), [
      'src/js/formats/gguf.js → src/js/pretrained/load.js: formats imports pretrained (allowed: top)',
      'src/js/newarea/x.js → src/js/errors.js: area newarea is not in FOLDER_IMPORTS',
    ]);
  });

  it('each folder of src/js and web/widgets has a README.md that names what its modules may import', () => {
    const folderOf = (area) => (area.startsWith('widgets/') ? `web/${area}` : `src/js/${area}`);
    for (const area of Object.keys(FOLDER_IMPORTS)) {
      if (['top', 'web', 'widgets', 'workers'].includes(area)) continue;
      const readme = readFileSync(join(ROOT, folderOf(area), 'README.md'), 'utf8');
      for (const other of FOLDER_IMPORTS[area].filter((a) => a !== 'top'))
        assert.ok(
          readme.includes(other.replace(/^widgets\//, '')),
          `${folderOf(area)}/README.md names ${other}`,
        );
    }
  });
});
