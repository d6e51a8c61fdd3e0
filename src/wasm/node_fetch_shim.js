// Prepended (--extern-pre-js) to the Emscripten ES module. Only under Node: Emscripten 3.1.6's web
// loader fetch()es the .wasm URL built from import.meta.url, which Node's fetch cannot do for file:
// URLs. Serve those from disk; everything else goes to the real fetch. Browsers are untouched.
var fetch = globalThis.fetch;
if (typeof process == 'object' && process.versions && process.versions.node) {
  // Not a literal import: bundlers building for browsers (esbuild, Vite) would try to resolve it,
  // and this branch never runs there.
  const fsModule = 'node:fs/promises';
  const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule);
  const net = globalThis.fetch;
  fetch = async (url, init) => {
    const u = new URL(url, import.meta.url);
    return u.protocol !== 'file:'
      ? net(url, init)
      : new Response(await readFile(u), { headers: { 'Content-Type': 'application/wasm' } });
  };
}
