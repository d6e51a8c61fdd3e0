// Registers tfjs-core's gradient functions (@tensorflow/tfjs-core/dist/register_all_gradients.js) in
// Node. The package's Node entry (dist/tf-core.node.js) has no gradients — the @tensorflow/tfjs
// union package or a bundler normally brings them — and that file is ES module code with
// extensionless imports in a CommonJS package, so Node cannot import it as it is. A module hook
// (node:module register) loads just that tree as ES modules, resolving './x' to './x.js'. The copy
// of tfjs-core it loads shares the engine and the gradient registry with the Node entry (tfjs-core
// keeps both on globalThis), so after this tf.grads and tf.variableGrads work on the wasm backend.
import { realpathSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Where Node really loads tfjs-core from (real path: node_modules may be a symlink).
const coreMain = realpathSync(createRequire(import.meta.url).resolve('@tensorflow/tfjs-core'));
const coreDist = pathToFileURL(path.dirname(coreMain) + path.sep).href;

const hooks = `
const coreDist = ${JSON.stringify(coreDist)};
export async function resolve(specifier, context, next) {
  if (context.parentURL?.startsWith(coreDist) && specifier.startsWith('.') && !specifier.endsWith('.js')) {
    return next(specifier + '.js', context);
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url.startsWith(coreDist) && !url.includes('tf-core')) {
    const r = await next(url, { ...context, format: 'module' });
    return { ...r, format: 'module', shortCircuit: true };
  }
  return next(url, context);
}`;

let done = null;

/** Idempotent; resolves once every gradient of tfjs-core is registered. */
export function registerTfjsGradients() {
  done ??= (async () => {
    register(`data:text/javascript,${encodeURIComponent(hooks)}`);
    await import(`${coreDist}register_all_gradients.js`);
  })();
  return done;
}
