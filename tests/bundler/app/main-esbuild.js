// The esbuild entry: esbuild does not copy `new URL(…, import.meta.url)` assets, so the build step
// copies the two .wasm files next to the bundle and init() is told where they are.
import { run } from './app.js';

await run({ wasmBaseUrl: new URL('./', import.meta.url) });
