// The import graph of the hand-written JavaScript (src/js and web, vendored code aside) has no cycle:
// data flows one way (docs/architecture.md), so each module can be read knowing only what it imports.
// Static imports, re-exports and dynamic import('…') with a literal path all count. Run by
// tests/js/import-cycles.test.mjs; by hand:
//
//   node scripts/check-imports.mjs     prints each cycle as a → b → … → a, exits 1 if any
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';

export const GRAPH_ROOTS = ['src/js', 'web'];
const SKIP = new Set(['vendor', 'node_modules']);

function jsFiles(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP.has(name)) jsFiles(path, out);
    } else if (/\.m?js$/.test(name)) out.push(path);
  }
  return out;
}

/** The relative module paths a module's source names (static, re-export, literal dynamic import). */
export function importsOf(text) {
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
  const found = [];
  (function visit(node) {
    if (!node || typeof node.type !== 'string') return;
    const isImport = ['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration'].includes(
      node.type,
    );
    if (isImport && node.source) found.push(node.source.value);
    if (node.type === 'ImportExpression' && node.source.type === 'Literal') found.push(node.source.value);
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === 'object') visit(value);
    }
  })(ast);
  return found.filter((spec) => typeof spec === 'string' && spec.startsWith('.'));
}

/** { file (relative to root): [files it imports] } over GRAPH_ROOTS. */
export function importGraph(root) {
  const graph = {};
  for (const base of GRAPH_ROOTS) {
    for (const file of jsFiles(join(root, base))) {
      const targets = importsOf(readFileSync(file, 'utf8'))
        .map((spec) => resolve(dirname(file), spec))
        .filter((path) => existsSync(path))
        .map((path) => relative(root, path));
      graph[relative(root, file)] = targets;
    }
  }
  return graph;
}

/** Every cycle of a graph, one per strongly connected component: [a, b, …, a]. */
export function findCycles(graph) {
  const index = new Map(),
    low = new Map(),
    stack = [],
    onStack = new Set(),
    cycles = [];
  let next = 0;
  function connect(v) {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph[v] ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph[v] ?? []).includes(v)) cycles.push(cyclePath(graph, component));
  }
  for (const v of Object.keys(graph)) if (!index.has(v)) connect(v);
  return cycles;
}

// The shortest closed path from the component's first file back to itself (breadth first), for the
// message: [start, …, start].
function cyclePath(graph, component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  const cameFrom = new Map();
  const queue = [start];
  while (queue.length && !cameFrom.has(start)) {
    const v = queue.shift();
    for (const w of graph[v] ?? []) {
      if (!members.has(w) || cameFrom.has(w)) continue;
      cameFrom.set(w, v);
      queue.push(w);
    }
  }
  const back = [start];
  for (let v = cameFrom.get(start); v !== start; v = cameFrom.get(v)) back.push(v);
  return [...back, start].reverse();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cycles = findCycles(importGraph(join(dirname(fileURLToPath(import.meta.url)), '..')));
  for (const c of cycles) console.error(`import cycle: ${c.join(' → ')}`);
  if (cycles.length) process.exit(1);
  console.log(`check-imports: no import cycle in ${GRAPH_ROOTS.join(', ')}`);
}
