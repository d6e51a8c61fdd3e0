// Whole classes (CONTRIBUTING.md): an object's `_fields` are its own. A member access `x._name` whose
// object is not `this` reads or writes another object's private state; check-style.mjs refuses it in
// the product code of web/ (widgets, workers, demo, tutorial). A helper takes what it needs as
// arguments, or is a small class with state of its own; a key of outside data that starts with an
// underscore (config.json's `_name_or_path`) is read as `config['_name_or_path']`.
//
//   node scripts/private-access.mjs FILE…     prints each access as file:line: text, exits 1 if any
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';

/** The private accesses of one module's source: [{ line, text }]. */
export function privateAccesses(source) {
  const ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const found = [];
  (function visit(node) {
    if (!node || typeof node.type !== 'string') return;
    const isPrivate =
      node.type === 'MemberExpression' &&
      !node.computed &&
      node.property.type === 'Identifier' &&
      /^_[A-Za-z0-9]/.test(node.property.name) &&
      node.object.type !== 'ThisExpression';
    if (isPrivate) found.push({ line: node.loc.start.line, text: source.slice(node.start, node.end) });
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === 'object') visit(value);
    }
  })(ast);
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let count = 0;
  for (const file of process.argv.slice(2)) {
    for (const { line, text } of privateAccesses(readFileSync(file, 'utf8'))) {
      console.log(`${file}:${line}: ${text.replace(/\s+/g, ' ')}`);
      count++;
    }
  }
  if (count) {
    console.error(`private-access: ${count} access(es) to another object's _field`);
    process.exit(1);
  }
}
