// Which files of a repository loadPretrained({ hub }) reads: a GGUF file (by name or quantization, the
// parts of a split file together) or the safetensors folder (config, weights or their shards with the
// index, tokenizer, generation config, chat template).
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const kSplit = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;
// A quantization in a file name, as llama.cpp's tools write them: Q4_K_M, Q8_0, IQ4_XS, F16, BF16, …
const kQuant = /(?:^|[-._])((?:I?Q\d+(?:_[A-Z0-9]+)*)|BF16|F16|F32)$/i;

/** The quantization a GGUF file's name states (upper case), or null. */
export function quantOf(path) {
  const base = path
    .split('/')
    .at(-1)
    .replace(kSplit, '$1')
    .replace(/\.gguf$/i, '');
  return base.match(kQuant)?.[1].toUpperCase() ?? null;
}

// The GGUF models of a listing: one per file, split parts grouped under their shared name.
function ggufModels(files) {
  const models = new Map();
  for (const f of files) {
    if (!/\.gguf$/i.test(f.path)) continue;
    const split = f.path.match(kSplit);
    const name = split ? `${split[1]}.gguf` : f.path;
    if (!models.has(name)) models.set(name, { name, quant: quantOf(f.path), parts: [], count: 1 });
    const m = models.get(name);
    m.parts.push(f);
    if (split) m.count = Number(split[3]);
  }
  for (const m of models.values()) {
    m.parts.sort((a, b) => (a.path < b.path ? -1 : 1));
    if (m.parts.length !== m.count)
      throw invalid(
        `${m.name}: ${m.parts.length} of the ${m.count} parts of this split GGUF file are listed`,
      );
  }
  return [...models.values()];
}

// Whether a GGUF model is the asked one: its name (with or without folders, a split file by any
// part's name or the shared one) or its quantization.
function matches(m, file) {
  const names = [m.name, ...m.parts.map((p) => p.path)];
  if (names.some((n) => n === file || n.split('/').at(-1) === file)) return true;
  return m.quant !== null && m.quant === file.toUpperCase();
}

function pickGGUF(models, file, repo) {
  const present = () => {
    const quants = [...new Set(models.map((m) => m.quant ?? m.name))];
    return quants.length ? `it has: ${quants.join(', ')}` : 'it has no GGUF file';
  };
  const found = models.filter((m) => matches(m, file));
  if (found.length === 0)
    throw new AttentionError('NOT_FOUND', `${repo} has no GGUF file ${describe(file)}; ${present()}`);
  if (found.length > 1)
    throw invalid(
      `${repo} has ${found.length} GGUF files of ${describe(file)}: name one (${found.map((m) => m.name).join(', ')})`,
    );
  return { kind: 'gguf', files: found[0].parts };
}

// The safetensors folder at the repository's root, or null when it has no config.json.
function pickFolder(byPath, repo) {
  const config = byPath.get('config.json');
  if (!config) return null;
  const index = byPath.get('model.safetensors.index.json');
  const single = byPath.get('model.safetensors');
  if (!single && !index) {
    const other = ['pytorch_model.bin', 'model.bin', 'tf_model.h5', 'flax_model.msgpack'].find((n) =>
      byPath.has(n),
    );
    throw invalid(
      other
        ? `${repo} has its weights as ${other}, which is not read: only safetensors (or a GGUF file)`
        : `${repo} has config.json but no model.safetensors or model.safetensors.index.json`,
    );
  }
  const optional = [
    'tokenizer.json',
    'tokenizer_config.json',
    'generation_config.json',
    'chat_template.jinja',
  ];
  return {
    kind: 'folder',
    config,
    weights: single ?? null,
    index: single ? null : index,
    extra: Object.fromEntries(optional.filter((n) => byPath.has(n)).map((n) => [n, byPath.get(n)])),
  };
}

/**
 * The files to read: { kind: 'gguf', files (the parts in order) } or { kind: 'folder', config,
 * weights | index, extra: { name: file } } (the index's shards are picked once it is read: shardFiles).
 */
export function pickFiles(files, file, repo) {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const models = ggufModels(files);
  if (file !== undefined) return pickGGUF(models, file, repo);
  const folder = pickFolder(byPath, repo);
  if (folder) return folder;
  if (models.length === 1) return { kind: 'gguf', files: models[0].parts };
  if (models.length > 1)
    throw invalid(
      `${repo} has ${models.length} GGUF files: choose one with loadPretrained({ file }) — ${models.map((m) => m.quant ?? m.name).join(', ')}`,
    );
  throw new AttentionError(
    'NOT_FOUND',
    `${repo} has neither config.json with safetensors weights nor a GGUF file`,
  );
}

/** The shard files a safetensors index names, each listed in the repository. */
export function shardFiles(index, files, repo) {
  const map = index?.weight_map;
  if (map === null || typeof map !== 'object')
    throw invalid(`${repo}: model.safetensors.index.json has no weight_map`);
  const byPath = new Map(files.map((f) => [f.path, f]));
  return [...new Set(Object.values(map))].map((name) => {
    const f = typeof name === 'string' ? byPath.get(name) : undefined;
    if (!f)
      throw new AttentionError(
        'NOT_FOUND',
        `${repo}: the shard ${describe(name)} of the index is not in the repository`,
      );
    return f;
  });
}
