// Prepended (--extern-pre-js, before node_fetch_shim.js) to the threaded ES module only (built with
// -DATTN_THREADS=ON; docs/threads.md). Emscripten 3.1.6's pthreads glue runs its Node branch
// (worker_threads, fs) with `require` and `__dirname`, which an ES module does not have: define them
// from import.meta.url. process.getBuiltinModule (Node >= 20.16) keeps this free of a top-level await.
var require, __dirname;
if (typeof process == 'object' && process.versions && process.versions.node) {
  require = process.getBuiltinModule('node:module').createRequire(import.meta.url);
  __dirname = require('node:path').dirname(require('node:url').fileURLToPath(import.meta.url));
}
