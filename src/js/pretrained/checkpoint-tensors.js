// The tensors a checkpoint of a config.json holds, as the core lists them: the core's one role list
// (src/model/pretrained_roles.cpp, through a PretrainedHandle that loads nothing) named by the
// family's registry module: [name, shape] in the file's layout, sorted by name as safetensors writers do.
import { coreConfig } from './config.js';
import { fileShape, tensorName } from '../architectures/index.js';

// The handle only lists the tensors: no weight is allocated, so no memory limit applies to it.
const kListingLimit = 2 ** 52;

/** The memory limit of a handle that only lists tensors (PretrainedHandle.init's `memoryLimit`). */
export const LISTING_LIMIT = kListingLimit;

/**
 * [name, shape] of a core's tensor list (PretrainedHandle.expected()) named by `family` (a multimodal
 * checkpoint's names: `names(name)[0]`, transformers 5's), sorted by name.
 */
export function namedTensors(family, expected, names = (n) => [n]) {
  return expected
    .map(({ role, layer, shape }) => [
      names(tensorName(family, role, layer))[0],
      fileShape(family, role, shape),
    ])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** [name, shape] of every tensor a checkpoint of `config` (a parsed config.json) holds (after init()). */
export function checkpointTensors(rt, config) {
  const { core, family, names } = coreConfig(config);
  const handle = rt.newHandle('PretrainedHandle', (h) => h.init({ ...core, memoryLimit: kListingLimit }));
  try {
    return namedTensors(family, handle.expected(), names);
  } finally {
    handle.delete();
  }
}
