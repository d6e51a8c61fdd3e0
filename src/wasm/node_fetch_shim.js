// Prepended (--extern-pre-js) to the Emscripten ES module. Only under Node: Emscripten 3.1.6's web
// loader fetch()es the .wasm URL built from import.meta.url, which Node's fetch cannot do for file:
// URLs. Serve those from disk; everything else goes to the real fetch. Browsers are untouched.
var fetch = globalThis.fetch;
if (typeof process == 'object' && process.versions && process.versions.node) {
  // Not a literal import (bundlers building for browsers would try to resolve it; this branch never
  // runs there), and imported on first use rather than with a top-level await, which bundles in
  // non-module formats (Vite's default worker format, iife) cannot hold.
  const fsModule = 'node:fs/promises';
  const net = globalThis.fetch;
  fetch = async (url, init) => {
    const u = new URL(url, import.meta.url);
    if (u.protocol !== 'file:') return net(url, init);
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule);
    return new Response(await readFile(u), { headers: { 'Content-Type': 'application/wasm' } });
  };
}
