// The two tables scripts/gen-constants.mjs reads from C++ source rather than from an enum:
// - the weight types: src/kernels/weight_types.h's rows (one row per ggml type, ggml's type_traits),
//   written as GGML_TYPE (every row) and WEIGHT_FORMAT (the rows the core computes with: name → id);
// - the tensor roles: src/model/pretrained_roles.cpp's names (kRoleNames, indexed by TensorRole),
//   checked against the TensorRole enum of src/model/pretrained.h, written as TENSOR_ROLE.
// Each reader accepts only the literal form it documents and throws on anything else, naming it.

export const WEIGHT_TYPES = 'src/kernels/weight_types.h';
export const ROLE_NAMES = 'src/model/pretrained_roles.cpp';
export const ROLE_ENUM = 'src/model/pretrained.h';

const stripComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

// {id, "name", elements, bytes, dequantized, dequantize, exact, int8, activations, {offset, offset}},
const ROW =
  /^\{(\d+), "(\w+)", (\d+), (\d+), (true|false), (\w+), (\w+), (\w+), (\w+), \{(-?\d+), (-?\d+)\}\},$/;

/** [{ id, name, blockElements, blockBytes, dequantized, int8 }] of the kTypes rows, in id order. */
export function parseWeightTypes(text) {
  const table = /GgmlTypeInfo kTypes\[\] = \{\n([\s\S]*?)\n\};/.exec(text);
  if (!table) throw new Error(`${WEIGHT_TYPES}: no "GgmlTypeInfo kTypes[] = {" … "};" table`);
  const rows = [];
  for (const line of stripComments(table[1]).split('\n')) {
    const item = line.trim();
    if (!item) continue;
    const m = ROW.exec(item);
    if (!m)
      throw new Error(
        `${WEIGHT_TYPES}: "${item}" is not a row ` +
          '{id, "name", elements, bytes, dequantized, dequantize, exact, int8, activations, {offset, offset}},',
      );
    const row = {
      id: Number(m[1]),
      name: m[2],
      blockElements: Number(m[3]),
      blockBytes: Number(m[4]),
      dequantized: m[5] === 'true',
      int8: m[8] !== 'nullptr',
    };
    if (rows.length && rows.at(-1).id >= row.id)
      throw new Error(`${WEIGHT_TYPES}: ${row.name} (id ${row.id}) is not after ${rows.at(-1).name}`);
    if (rows.some((t) => t.name === row.name)) throw new Error(`${WEIGHT_TYPES}: ${row.name} appears twice`);
    rows.push(row);
  }
  if (rows.length === 0) throw new Error(`${WEIGHT_TYPES}: the table has no rows`);
  return rows;
}

/** The lines of constants.js's GGML_TYPE and WEIGHT_FORMAT; read(path) gives a file's text. */
export function weightTypeConstants(read) {
  const types = parseWeightTypes(read(WEIGHT_TYPES));
  const row = (t) =>
    `  ${t.name}: type(${t.id}, '${t.name}', ${t.blockElements}, ${t.blockBytes}, ${t.dequantized}, ${t.int8}),`;
  return [
    '',
    '/**',
    " * Every ggml tensor type a GGUF file may hold, by ggml's name, in id order (gaps: ids ggml removed):",
    ' * elements and bytes per block, whether the core computes with it (dequantized: it is a',
    ' * WEIGHT_FORMAT) and whether it has an int8 product. attn::kernels::type_table::kTypes',
    ` * (${WEIGHT_TYPES}).`,
    ' */',
    'const type = (id, name, blockElements, blockBytes, dequantized, int8) =>',
    '  Object.freeze({ id, name, blockElements, blockBytes, dequantized, int8 });',
    'export const GGML_TYPE = Object.freeze({',
    ...types.map(row),
    '});',
    '',
    '/** The weight formats the core keeps: the GGML_TYPE rows it computes with, name → ggml type id. attn::WeightFormat (src/core/stored_weight.h). */',
    'export const WEIGHT_FORMAT = Object.freeze({',
    ...types.filter((t) => t.dequantized).map((t) => `  ${t.name}: ${t.id},`),
    '});',
  ];
}

/** The registry spelling of a TensorRole enumerator's name: QBias → q_bias, GateUp → gate_up. */
export const roleSpelling = (name) => name.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();

/** The role names of kRoleNames in TensorRole order, checked against the enum (kCount last). */
export function parseRoles(namesText, enumText) {
  const list = /kRoleNames\[\] = \{([^}]*)\}/.exec(stripComments(namesText));
  if (!list) throw new Error(`${ROLE_NAMES}: no "kRoleNames[] = { … }" list`);
  const names = list[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const m = /^"([a-z0-9_]+)"$/.exec(item);
      if (!m) throw new Error(`${ROLE_NAMES}: ${item} is not a role name ("lower_snake")`);
      return m[1];
    });
  const found = /enum\s+class\s+TensorRole\s*\{([^}]*)\}/.exec(stripComments(enumText));
  if (!found) throw new Error(`${ROLE_ENUM}: no enum class TensorRole`);
  const items = found[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.at(-1) !== 'kCount') throw new Error(`${ROLE_ENUM}: TensorRole does not end with kCount`);
  const enumerators = items.slice(0, -1).map((item) => {
    const m = /^k([A-Z]\w*)$/.exec(item);
    if (!m) throw new Error(`${ROLE_ENUM}: TensorRole's "${item}" is not a plain kName`);
    return roleSpelling(m[1]);
  });
  if (enumerators.join() !== names.join())
    throw new Error(
      `${ROLE_NAMES}'s kRoleNames (${names.join(', ')}) are not TensorRole's enumerators in order ` +
        `(${enumerators.join(', ')})`,
    );
  return names;
}

/** The lines of constants.js's TENSOR_ROLE; read(path) gives a file's text. */
export function rolesConstants(read) {
  const names = parseRoles(read(ROLE_NAMES), read(ROLE_ENUM));
  return [
    '',
    "/** The core's tensor roles, by role_name's spelling, in TensorRole order (name → attn::TensorRole). kRoleNames (src/model/pretrained_roles.cpp). */",
    'export const TENSOR_ROLE = Object.freeze({',
    ...names.map((name, i) => `  ${name}: ${i},`),
    '});',
  ];
}
