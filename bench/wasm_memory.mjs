// Finds the WebAssembly.Memory of each runtime we load, so the benchmark can report every wasm
// contender's heap size the same way (bytes of linear memory; it only ever grows, so after a run
// it is that instance's high-water mark).
//
// Call installMemoryProbe() before any runtime is instantiated, then wrap each runtime's loading in
// captureMemory(label, loadFn): every memory exported or imported by a module instantiated while
// loadFn runs is recorded under that label. Nothing else about instantiation changes.

const captured = new Map(); // label → WebAssembly.Memory[]
let currentLabel = null;
let installed = false;

function record(instance, imports) {
  if (!currentLabel) return;
  const found = [];
  for (const value of Object.values(instance?.exports ?? {})) {
    if (value instanceof WebAssembly.Memory) found.push(value);
  }
  // Threaded Emscripten builds (onnxruntime-web) import a shared memory instead of exporting one.
  for (const ns of Object.values(imports ?? {})) {
    for (const value of Object.values(ns ?? {})) {
      if (value instanceof WebAssembly.Memory) found.push(value);
    }
  }
  const list = captured.get(currentLabel) ?? [];
  for (const m of found) if (!list.includes(m)) list.push(m);
  captured.set(currentLabel, list);
}

export function installMemoryProbe() {
  if (installed) return;
  installed = true;
  const { instantiate, instantiateStreaming } = WebAssembly;
  WebAssembly.instantiate = async function (source, imports) {
    const result = await instantiate.call(this, source, imports);
    record(result instanceof WebAssembly.Instance ? result : result.instance, imports);
    return result;
  };
  if (instantiateStreaming) {
    WebAssembly.instantiateStreaming = async function (source, imports) {
      const result = await instantiateStreaming.call(this, source, imports);
      record(result.instance, imports);
      return result;
    };
  }
}

/** Runs `load` with instantiations attributed to `label`; returns load's result. */
export async function captureMemory(label, load) {
  const previous = currentLabel;
  currentLabel = label;
  try {
    return await load();
  } finally {
    currentLabel = previous;
  }
}

/** Total linear-memory bytes of the instances recorded under `label`, or null if none. */
export function heapBytes(label) {
  const list = captured.get(label);
  if (!list || list.length === 0) return null;
  return list.reduce((sum, m) => sum + m.buffer.byteLength, 0);
}
