// AttentionError: every failure of the library, with a stable string `.code`.
import { STATUS_CODE } from './constants.js';

/** Status codes of the C++ core (attn::StatusCode, generated into constants.js), by number. */
const CORE_CODES = Object.fromEntries(Object.entries(STATUS_CODE).map(([name, code]) => [code, name]));

export class AttentionError extends Error {
  /**
   * @param {string} code one of the codes listed in index.d.ts
   * @param {string} message names the problem, e.g. "numHeads 3 does not divide embedDim 64"
   */
  constructor(code, message) {
    super(message);
    this.name = 'AttentionError';
    this.code = code;
  }
}

/** Throws the AttentionError of a binding result `{ code, message }` unless code is 0. */
export function check(result) {
  if (result.code !== 0) {
    throw new AttentionError(CORE_CODES[result.code] ?? 'UNKNOWN', result.message);
  }
  return result;
}
