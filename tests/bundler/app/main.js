// The Vite entry (and webpack's): init() finds both .wasm files through the package's own
// `new URL('…', import.meta.url)` literals, which these bundlers copy into the output.
import { run } from './app.js';

await run();
