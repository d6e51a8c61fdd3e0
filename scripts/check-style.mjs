// The house style, checked by tools (CONTRIBUTING.md), run first by `npm test` and `npm run test:quick`:
//   1. JavaScript and TypeScript declarations are formatted by prettier (pinned; .prettierrc.json);
//   2. C++ is formatted by clang-format (.clang-format: `clang-format --dry-run --Werror`);
//   3. no source file (src, web, bench, scripts, tools) is over MAX_FILE_LINES lines, nor a test file;
//   4. no function in those sources is over MAX_FUNCTION_LINES lines (JS: acorn's syntax tree; C++: a
//      brace count over the sources with comments, strings and preprocessor lines removed);
//   5. no test reads a clock (performance.now, Date.now, hrtime, long-task observers): a test asserts
//      what the code computes, never how long it took (times are benchmark numbers, bench/);
//   6. no code file names an issue number (the word issue, a hash and digits; or digits after "(#"): a comment says why, the tracker says when;
//   7. whole classes in web/ (widgets, workers, the pages): no access to another object's `_field`
//      (`x._name` where x is not `this`; scripts/private-access.mjs).
// There is no list of exceptions. `--fix` formats (prettier --write, clang-format -i) before checking.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';
import { cppFunctions } from './cpp-functions.mjs';
import { privateAccesses } from './private-access.mjs';

export const MAX_FILE_LINES = 450;
export const MAX_FUNCTION_LINES = 80;

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--root DIR` checks another tree (tests/js/check-style.test.mjs plants problems in a scratch repo).
const rootFlag = process.argv.indexOf('--root');
const root = rootFlag > 0 ? process.argv[rootFlag + 1] : repo;
const SOURCE_DIRS = ['src', 'web', 'bench', 'scripts', 'tools'];
const TEST_DIRS = ['tests'];
const JS = /\.(m|c)?js$|\.ts$/;
const CPP = /\.(cpp|h)$/;
const CLOCK = /\bperformance\.now\(|\bDate\.now\(|\bprocess\.hrtime|\bconsole\.time\(|['"]longtask['"]/;
const ISSUE_REFERENCE = /\bissues? #\d+|\(#\d+[,)]/i;

/** Tracked and new (not ignored) files under the given folders; vendored and generated files are ignored. */
function listFiles(dirs) {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...dirs], {
    cwd: root,
    encoding: 'utf8',
  });
  // Deleted but not yet committed files are still in git's index: only what is on disk is checked.
  return out
    .split('\n')
    .filter((f) => f && (JS.test(f) || CPP.test(f)) && !/\/vendor\/|^tests\/golden\//.test(f))
    .filter((f) => existsSync(join(root, f)));
}

function lineCount(text) {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** Every function of a JS file with its line span (methods, arrows with a block body, declarations). */
function jsFunctions(text, file) {
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const found = [];
  const visit = (node, name) => {
    if (!node || typeof node.type !== 'string') return;
    const isFunction = /Function/.test(node.type) && node.body?.type === 'BlockStatement';
    if (isFunction) {
      const label = node.id?.name ?? name ?? '(anonymous)';
      found.push({
        name: label,
        lines: node.loc.end.line - node.loc.start.line + 1,
        line: node.loc.start.line,
      });
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'loc') continue;
      const childName = node.key?.name ?? node.id?.name ?? (key === 'value' ? name : undefined);
      if (Array.isArray(child)) child.forEach((c) => visit(c, childName));
      else if (child && typeof child === 'object') visit(child, childName);
    }
  };
  try {
    visit(ast);
  } catch (e) {
    throw new Error(`${file}: ${e.message}`);
  }
  return found;
}

function checkSizes(files, problems, { functions }) {
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = lineCount(text);
    const issue = ISSUE_REFERENCE.exec(text);
    if (issue)
      problems.push(`${file}:${lineCount(text.slice(0, issue.index + 1))}: names an issue ("${issue[0]}")`);
    if (lines > MAX_FILE_LINES) problems.push(`${file}: ${lines} lines (at most ${MAX_FILE_LINES})`);
    const clock = CLOCK.exec(text);
    if (!functions && clock) {
      problems.push(
        `${file}:${lineCount(text.slice(0, clock.index + 1))}: a test reads a clock ("${clock[0]}")`,
      );
    }
    if (!functions || file.endsWith('.d.ts')) continue;
    let list = [];
    if (CPP.test(file)) list = cppFunctions(text);
    else if (!file.endsWith('.ts')) {
      try {
        list = jsFunctions(text, file);
      } catch (e) {
        problems.push(`${file}: cannot be parsed: ${e.message}`);
      }
    }
    for (const f of list) {
      if (f.lines > MAX_FUNCTION_LINES) {
        problems.push(
          `${file}:${f.line}: function ${f.name} is ${f.lines} lines (at most ${MAX_FUNCTION_LINES})`,
        );
      }
    }
  }
}

// Rule 7: the product code of web/ reads only its own objects' _fields.
function checkPrivateAccess(files, problems) {
  for (const file of files) {
    if (!file.startsWith('web/') || !/\.m?js$/.test(file)) continue;
    let found = [];
    try {
      found = privateAccesses(readFileSync(join(root, file), 'utf8'));
    } catch (e) {
      problems.push(`${file}: cannot be parsed: ${e.message}`);
    }
    for (const { line, text } of found)
      problems.push(`${file}:${line}: reads another object's private field (${text.replace(/\s+/g, ' ')})`);
  }
}

function run(cmd, args) {
  try {
    execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return '';
  } catch (e) {
    return `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message;
  }
}

function main() {
  const fix = process.argv.includes('--fix');
  const sources = listFiles(SOURCE_DIRS);
  const tests = listFiles(TEST_DIRS);
  const all = [...sources, ...tests];
  const jsFiles = all.filter((f) => JS.test(f));
  const cppFiles = all.filter((f) => CPP.test(f));
  const prettier = join(repo, 'node_modules', '.bin', 'prettier');
  if (fix) {
    run(prettier, ['--write', '--log-level', 'warn', ...jsFiles]); // the root's own config
    run('clang-format', ['-i', ...cppFiles]);
  }
  const problems = [];
  const config = ['--config', join(root, '.prettierrc.json'), '--ignore-path', join(root, '.prettierignore')];
  const unformatted = jsFiles.length ? run(prettier, ['--list-different', ...config, ...jsFiles]) : '';
  if (unformatted) problems.push(`not formatted by prettier (npm run format):\n${unformatted}`);
  const cppDiff = cppFiles.length ? run('clang-format', ['--dry-run', '--Werror', ...cppFiles]) : '';
  if (cppDiff) problems.push(`not formatted by clang-format (npm run format):\n${cppDiff.slice(0, 4000)}`);
  checkSizes(sources, problems, { functions: true });
  checkSizes(tests, problems, { functions: false });
  checkPrivateAccess(sources, problems);
  if (problems.length) {
    console.error(`check-style: ${problems.length} problem(s)\n${problems.join('\n')}`);
    process.exit(1);
  }
  console.log(
    `check-style: ${jsFiles.length} JS/TS and ${cppFiles.length} C++ files formatted; ` +
      `files <= ${MAX_FILE_LINES} lines, functions <= ${MAX_FUNCTION_LINES} lines`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
