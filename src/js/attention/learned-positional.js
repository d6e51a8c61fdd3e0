// The learned positional encoding: a (maxLength, dModel) table in the wasm heap, seeded ~N(0, 1)
// like nn.Embedding. The class lives here over a wrapper copy `rt` (runtime.js); mha.js's mhaApi(rt)
// gives each copy of index.js its own subclass.
import { check } from '../errors.js';
import { checkInt, checkOptions, checkSeed } from '../options.js';
import { Handle } from '../runtime/runtime.js';
import { asFloatTensor, fromCore } from '../tensor.js';

export class LearnedPositionalEncodingBase extends Handle {
  /** @param {{ maxLength: number, dModel: number, seed?: number }} options */
  constructor(rt, options = {}) {
    const {
      maxLength,
      dModel,
      seed = 0,
    } = checkOptions(options, ['maxLength', 'dModel', 'seed'], 'LearnedPositionalEncoding option');
    checkInt(maxLength, 'maxLength');
    checkInt(dModel, 'dModel');
    super(
      rt,
      rt.newHandle('LearnedPEHandle', (h) => h.init(maxLength, dModel, checkSeed(seed, 'seed'))),
    );
    this.maxLength = maxLength;
    this.dModel = dModel;
  }

  /** The first `length` rows of the table: (length, dModel). */
  encode(length) {
    return fromCore(check(this._live().encode(checkInt(length, 'length'))).result);
  }

  /** A copy of the whole table (maxLength, dModel). */
  get table() {
    return fromCore(this._live().table());
  }

  setTable(table) {
    const handle = this._live();
    const t = asFloatTensor(table, 'table');
    this._rt.checkInputBytes('setTable', [t]);
    check(handle.setTable(t));
  }
}
