// scripts/check-style.mjs fails on each thing the house style forbids: planted one at a time in a
// scratch git repository that otherwise follows the style, each must make the check exit 1 and be
// named; the clean tree passes.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cppFunctions } from '../../scripts/cpp-functions.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-style.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'attn-style-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const body = (n) => Array.from({ length: n }, (_, i) => `  total += ${i};`).join('\n');
const jsFunction = (lines) =>
  `export function f() {\n  let total = 0;\n${body(lines - 4)}\n  return total;\n}\n`;

/** A scratch repository with the project's formatter settings and the given files; the check's result. */
function check(files) {
  const dir = mkdtempSync(join(scratch, 'repo-'));
  for (const name of ['.prettierrc.json', '.prettierignore', '.clang-format']) {
    copyFileSync(join(ROOT, name), join(dir, name));
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  const r = spawnSync(process.execPath, [SCRIPT, '--root', dir], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const CLEAN = {
  'src/js/a.js': jsFunction(20),
  'src/core/a.cpp': 'int f(int x) {\n  return x + 1;\n}\n',
  'tests/js/a.test.mjs': "import assert from 'node:assert/strict';\n\nassert.equal(1, 1);\n",
};

describe('scripts/check-style.mjs', () => {
  it('passes a tree that follows the style', () => {
    const r = check(CLEAN);
    assert.equal(r.status, 0, r.out);
  });
  it("fails on web/ code that reads another object's _field, not on this._field", () => {
    const own = 'export class A {\n  constructor() {\n    this._x = 1;\n  }\n}\n';
    assert.equal(check({ ...CLEAN, 'web/widgets/a.js': own }).status, 0);
    const r = check({ ...CLEAN, 'web/widgets/b.js': 'export const peek = (el) => el._x;\n' });
    assert.equal(r.status, 1);
    assert.match(r.out, /web\/widgets\/b\.js:1: reads another object's private field \(el\._x\)/);
  });
  it('fails on JavaScript prettier would change', () => {
    const r = check({ ...CLEAN, 'web/b.js': 'export const x = {a:1}\n' });
    assert.equal(r.status, 1);
    assert.match(r.out, /not formatted by prettier[\s\S]*web\/b\.js/);
  });
  it('fails on C++ clang-format would change', () => {
    const r = check({ ...CLEAN, 'src/core/b.cpp': 'int g( int x ){return x;}\n' });
    assert.equal(r.status, 1);
    assert.match(r.out, /src\/core\/b\.cpp.*clang-format/);
  });
  it('fails on a source file over 450 lines and a test file over 450 lines', () => {
    const long = Array.from({ length: 451 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';
    const r = check({ ...CLEAN, 'bench/long.mjs': long, 'tests/js/long.test.mjs': long });
    assert.equal(r.status, 1);
    assert.match(r.out, /bench\/long\.mjs: 451 lines/);
    assert.match(r.out, /tests\/js\/long\.test\.mjs: 451 lines/);
  });
  it('fails on a JavaScript function over 80 lines, not on one of 80', () => {
    assert.equal(check({ ...CLEAN, 'scripts/ok.mjs': jsFunction(80) }).status, 0);
    const r = check({ ...CLEAN, 'scripts/big.mjs': jsFunction(81) });
    assert.equal(r.status, 1);
    assert.match(r.out, /scripts\/big\.mjs:1: function f is 81 lines/);
  });
  it('fails on a C++ function over 80 lines', () => {
    const cpp = `int big(int x) {\n${Array.from({ length: 80 }, () => '  x += 1;').join('\n')}\n  return x;\n}\n`;
    const r = check({ ...CLEAN, 'src/model/big.cpp': cpp });
    assert.equal(r.status, 1);
    assert.match(r.out, /src\/model\/big\.cpp:1: function big is 83 lines/);
  });
  it('fails on a test that reads a clock (a timed assertion)', () => {
    const clock = ['performance', 'now()'].join('.'); // spelled apart so this file reads no clock
    const timed =
      `import assert from 'node:assert/strict';\n\nconst t0 = ${clock};\n` +
      `assert.ok(${clock} - t0 < 100);\n`;
    const r = check({ ...CLEAN, 'tests/browser/timed.test.mjs': timed });
    assert.equal(r.status, 1);
    assert.match(r.out, /timed\.test\.mjs:3: a test reads a clock/);
  });
  it('fails on a comment that names an issue number', () => {
    const reference = ['issue', '#26'].join(' '); // spelled apart so this file names no issue
    const r = check({ ...CLEAN, 'src/js/c.js': `// Threads (${reference}).\nexport const c = 1;\n` });
    assert.equal(r.status, 1);
    assert.match(r.out, /src\/js\/c\.js:1: names an issue/);
  });
});

describe('the C++ function counter (scripts/cpp-functions.mjs)', () => {
  it('finds free functions, members, constructors with initializer lists; not classes or namespaces', () => {
    const src = [
      'namespace a {', // 1
      'struct S {', // 2
      '  S(int x) : x_(x), y_{2} {', // 3
      '    x_ += 1;',
      '  }', // 5
      '  int get() const { return x_; }', // 6
      '  int x_, y_;',
      '};',
      'std::vector<int> S::make(const std::string& s) {', // 9
      '  auto f = [&](int v) { return v + 1; };',
      '  const char* brace = "{";',
      '  return {f(1)};',
      '}', // 13
      '}  // namespace a',
    ].join('\n');
    const found = cppFunctions(src).map((f) => [f.name, f.line, f.lines]);
    assert.deepEqual(found, [
      ['S', 3, 3],
      ['get', 6, 1],
      ['S::make', 9, 5],
    ]);
  });
});
