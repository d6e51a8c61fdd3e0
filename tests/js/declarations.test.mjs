// The hand-written declarations cover the real modules: every runtime export of the package's entry
// points ('attention-wasm' = src/js/index.js, 'attention-wasm/widgets' = web/widgets.js) is declared
// in their .d.ts, every value the .d.ts declares exists at runtime, and every declaration file the
// entry points reach is in the npm tarball. The check is a generated .ts file type-checked by the
// pinned tsc in a temporary consumer folder whose node_modules/attention-wasm links to this project,
// so the names resolve through package.json "exports" exactly as a user's import does.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';

const ROOT = realpathSync(fileURLToPath(new URL('../../', import.meta.url)));
const TSC = join(ROOT, 'node_modules/.bin/tsc');

/** The compiler options of tests/js/types/tsconfig.json (strict, nodenext, the DOM for the widgets). */
const COMPILER_OPTIONS = {
  strict: true,
  noEmit: true,
  target: 'es2022',
  module: 'nodenext',
  moduleResolution: 'nodenext',
  lib: ['es2022', 'dom'],
  types: [],
  skipLibCheck: false,
};

/** The names a module exports, from its source (web/widgets.js cannot be imported in Node). */
function exportedNames(source) {
  const names = [];
  const bind = (pattern) => {
    if (pattern.type === 'Identifier') names.push(pattern.name);
    else if (pattern.type === 'ObjectPattern') pattern.properties.forEach((p) => bind(p.value ?? p.argument));
    else if (pattern.type === 'ArrayPattern') pattern.elements.filter(Boolean).forEach(bind);
    else if (pattern.type === 'AssignmentPattern') bind(pattern.left);
    else if (pattern.type === 'RestElement') bind(pattern.argument);
  };
  for (const node of parse(source, { ecmaVersion: 'latest', sourceType: 'module' }).body) {
    if (node.type === 'ExportAllDeclaration' || node.type === 'ExportDefaultDeclaration')
      throw new Error(`${node.type} is not handled here: list its names explicitly`);
    if (node.type !== 'ExportNamedDeclaration') continue;
    for (const s of node.specifiers) names.push(s.exported.name ?? s.exported.value);
    const d = node.declaration;
    if (d?.type === 'VariableDeclaration') d.declarations.forEach((v) => bind(v.id));
    else if (d) names.push(d.id.name);
  }
  return names;
}

/**
 * A .ts file that names each runtime export (`typeof mod.NAME`: an error when undeclared) and
 * fails to compile when the module's declared values (`keyof typeof mod`) include one that is not
 * among them.
 */
function consumerSource(entries) {
  const lines = [];
  for (const [i, { specifier, names }] of entries.entries()) {
    lines.push(`import * as m${i} from '${specifier}';`);
    for (const name of names) lines.push(`export type T${i}_${name} = typeof m${i}.${name};`);
    const known = names.map((n) => JSON.stringify(n)).join(' | ') || 'never';
    lines.push(
      `type Extra${i} = Exclude<keyof typeof m${i}, ${known}>;`,
      `export const noExtra${i}: [Extra${i}] extends [never] ? true : { declaredButNotAtRuntime: Extra${i} } = true;`,
    );
  }
  return lines.join('\n') + '\n';
}

let work;

/** Type-checks consumerSource(entries) in the consumer folder; { status, output, files }. */
function typeCheck(entries) {
  writeFileSync(join(work, 'consumer.ts'), consumerSource(entries));
  const r = spawnSync(TSC, ['-p', work, '--listFiles'], { cwd: work, encoding: 'utf8' });
  const lines = `${r.stdout}${r.stderr}`.split('\n');
  const files = lines
    .map((l) => l.trim())
    .filter(
      (l) => l.endsWith('.d.ts') && l.startsWith(ROOT + sep) && !l.includes(`${sep}node_modules${sep}`),
    );
  const output = lines.filter((l) => /error TS\d+/.test(l)).join('\n');
  return { status: r.status, output, files };
}

let entries;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'attention-wasm-declarations-'));
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(ROOT, join(work, 'node_modules', 'attention-wasm'), 'dir');
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: ['consumer.ts'] }, null, 2),
  );
  const core = Object.keys(await import('../../src/js/index.js'));
  const widgets = exportedNames(readFileSync(join(ROOT, 'web/widgets.js'), 'utf8'));
  entries = [
    { specifier: 'attention-wasm', names: core.sort() },
    { specifier: 'attention-wasm/widgets', names: widgets.sort() },
  ];
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('declarations match the runtime exports', () => {
  it('both entry points export something (the export lists were read)', () => {
    assert.ok(entries[0].names.includes('init') && entries[0].names.includes('PRETRAINED_CONFIG_KEYS'));
    assert.ok(entries[1].names.includes('ELEMENTS') && entries[1].names.includes('AttentionSteps'));
  });

  it('every runtime export is declared, and every declared value exists at runtime', () => {
    const r = typeCheck(entries);
    assert.equal(r.status, 0, `the declarations and the runtime exports differ:\n${r.output}`);
  });

  it('the check fails for an undeclared runtime export and for a declared value missing at runtime', () => {
    const [core, widgets] = entries;
    const r = typeCheck([
      { specifier: core.specifier, names: [...core.names.filter((n) => n !== 'softmax'), 'notDeclared'] },
      { specifier: widgets.specifier, names: widgets.names.filter((n) => n !== 'ELEMENTS') },
    ]);
    assert.notEqual(r.status, 0);
    assert.match(r.output, /notDeclared/);
    assert.match(r.output, /declaredButNotAtRuntime: "softmax"/);
    assert.match(r.output, /declaredButNotAtRuntime: "ELEMENTS"/);
  });

  it('the npm tarball ships every declaration file the entry points reach', () => {
    const { files } = typeCheck(entries);
    const declared = files.map((f) => relative(ROOT, f).split(sep).join('/'));
    assert.ok(
      declared.includes('src/js/index.d.ts') && declared.includes('web/widgets.d.ts'),
      declared.join('\n'),
    );
    const [info] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const packed = new Set(info.files.map((f) => f.path));
    const missing = declared.filter((f) => !packed.has(f));
    assert.deepEqual(
      missing,
      [],
      `declaration files not in the tarball (package.json "files"): ${missing.join(', ')}`,
    );
  });
});
