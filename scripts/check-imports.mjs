// The import graph of the hand-written JavaScript (src/js and web, vendored code aside):
//   1. has no cycle: data flows one way (docs/architecture.md), so each module can be read knowing
//      only what it imports;
//   2. follows the folders' layering (FOLDER_IMPORTS, each folder's README.md says the same): a
//      module of an area (a folder of src/js, of web/widgets, web/workers, the pages) imports only
//      the areas listed for it; src/js/index.js (the wiring) imports any.
// Static imports, re-exports and dynamic import('…') with a literal path all count. Run by
// tests/js/import-cycles.test.mjs; by hand:
//
//   node scripts/check-imports.mjs     prints each cycle and each import against the layering, exits 1 if any
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';

export const GRAPH_ROOTS = ['src/js', 'web'];

/**
 * Area → the areas its modules may import, bottom-up. An area is a folder of src/js ('top': the files
 * directly in src/js), 'web', 'vendor' (src/js/vendor, copied at build time) or 'dist' (the build).
 */
export const FOLDER_IMPORTS = {
  top: ['top'],
  runtime: ['top', 'dist'],
  formats: ['top'],
  tokenizers: ['top', 'vendor'],
  architectures: ['top'],
  attention: ['top', 'runtime'],
  interp: ['top'],
  tiny: ['top', 'runtime', 'formats', 'interp'],
  hub: ['top'],
  pretrained: ['top', 'runtime', 'formats', 'tokenizers', 'architectures', 'interp', 'vendor', 'hub'],
  // web/: the widgets see the library only through its entry (web/widgets/runtime.js); figures/ (the
  // display lists, their painters and accessible twins) knows no widget; a widget area sees the
  // shared base (web/widgets/*.js), figures/ and, for a widget with a worker, workers/.
  'widgets/figures': [],
  widgets: ['widgets/figures', 'top', 'vendor'],
  'widgets/attention': ['widgets', 'widgets/figures'],
  'widgets/positions': ['widgets', 'widgets/figures'],
  'widgets/models': ['widgets', 'widgets/figures', 'workers'],
  'widgets/interp': ['widgets', 'widgets/figures', 'workers'],
  // The workers run the library in their own instance; the demo's model worker reads a GGUF header
  // (formats/gguf.js) to tell its parts before loading.
  workers: ['top', 'formats'],
  // The pages (demo, tutorial) and the widgets' entry (web/widgets.js).
  web: [
    'widgets',
    'widgets/figures',
    'widgets/attention',
    'widgets/positions',
    'widgets/models',
    'widgets/interp',
    'workers',
    'top',
    'formats',
    'vendor',
  ],
};
const WIRING = 'src/js/index.js'; // the public entry: re-exports and wiring, may import every area

/** The area of a file path relative to the root (see FOLDER_IMPORTS), or undefined outside them. */
export function areaOf(path) {
  if (path.startsWith('web/vendor/') || path.startsWith('src/js/vendor/')) return 'vendor';
  if (path.startsWith('dist/')) return 'dist';
  if (path.startsWith('web/widgets/')) {
    const rest = path.slice('web/widgets/'.length);
    return rest.includes('/') ? `widgets/${rest.slice(0, rest.indexOf('/'))}` : 'widgets';
  }
  if (path.startsWith('web/workers/')) return 'workers';
  if (path.startsWith('web/')) return 'web';
  if (!path.startsWith('src/js/')) return undefined;
  const rest = path.slice('src/js/'.length);
  return rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : 'top';
}

/** Each import of the graph against FOLDER_IMPORTS: ["a.js → b.js: area x imports y (allowed: …)"]. */
export function layeringProblems(graph) {
  const problems = [];
  for (const [file, targets] of Object.entries(graph)) {
    if (file === WIRING) continue;
    const from = areaOf(file);
    const allowed = FOLDER_IMPORTS[from];
    for (const target of targets) {
      const to = areaOf(target);
      if (to === from) continue;
      if (!allowed) problems.push(`${file} → ${target}: area ${from} is not in FOLDER_IMPORTS`);
      else if (!allowed.includes(to))
        problems.push(`${file} → ${target}: ${from} imports ${to} (allowed: ${allowed.join(', ')})`);
    }
  }
  return problems;
}
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
  const graph = importGraph(join(dirname(fileURLToPath(import.meta.url)), '..'));
  const cycles = findCycles(graph);
  for (const c of cycles) console.error(`import cycle: ${c.join(' → ')}`);
  const layering = layeringProblems(graph);
  for (const p of layering) console.error(`import against the layering: ${p}`);
  if (cycles.length || layering.length) process.exit(1);
  console.log(
    `check-imports: no import cycle in ${GRAPH_ROOTS.join(', ')}; every import follows the folders' layering`,
  );
}
