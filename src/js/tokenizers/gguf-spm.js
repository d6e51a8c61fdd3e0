// llama.cpp's own SentencePiece tokenizer (llama-vocab.cpp: llm_tokenizer_spm_session, the SPM
// branch of llama_vocab::impl::tokenize, token_to_piece and detokenize) for a GGUF "llama" vocab,
// with the interface the library uses of the vendored @huggingface/tokenizers Tokenizer objects
// (encode(text, { add_special_tokens }) → { ids, tokens, attention_mask }, decode(ids, options),
// token_to_id, id_to_token, get_vocab).

// llama.cpp's token types (tokenizer.ggml.token_type).
const TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 };
const SPACE = '\u2581';
const utf8 = new TextEncoder();
const byteLength = (s) => utf8.encode(s).length;
// The text as UTF-8 bytes would carry it to llama.cpp (a lone surrogate becomes U+FFFD).
const wellFormed = (s) => (typeof s.toWellFormed === 'function' ? s.toWellFormed() : s);
// C's isspace, which llama.cpp's rstrip uses.
const isSpace = (c) => c === ' ' || (c >= '\t' && c <= '\r');

// A max-heap of bigrams in llama.cpp's order (llm_bigram_spm::comparator): the higher score
// first, then the smaller left index (the leftmost pair).
class BigramQueue {
  constructor() {
    this.items = [];
  }

  get size() {
    return this.items.length;
  }

  static before(a, b) {
    return a.score > b.score || (a.score === b.score && a.left < b.left);
  }

  push(item) {
    const h = this.items;
    h.push(item);
    for (let i = h.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!BigramQueue.before(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  pop() {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0) return top;
    h[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && BigramQueue.before(h[l], h[m])) m = l;
      if (r < h.length && BigramQueue.before(h[r], h[m])) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
    return top;
  }
}

/**
 * A GGUF "llama" vocab's tokenizer, as llama.cpp runs it. `tokens`, `scores`, `types` (token types,
 * with the texts llama.cpp takes for control tokens already typed CONTROL), `bos`/`eos` (ids or
 * null), `addBos`/`addEos`/`addSpacePrefix` (the file's flags, llama.cpp's defaults applied),
 * `rstrip` (ids of the special tokens whose following spaces are dropped, Phi-3's).
 */
export class SpmTokenizer {
  constructor({ tokens, scores, types, bos, eos, addBos, addEos, addSpacePrefix, rstrip = [] }) {
    this.vocab = tokens;
    this.scores = scores;
    this.types = types;
    this.tokens_to_ids = new Map(tokens.map((t, i) => [t, i]));
    Object.assign(this, { bos, eos, addBos, addEos, addSpacePrefix });
    this.rstrip = new Set(rstrip);
    this.unk = types.indexOf(TYPE.UNKNOWN);
    // llama.cpp's cache_special_tokens: control, user-defined and unknown tokens, the longest
    // (in UTF-8 bytes) first; those of one length in id order.
    const special = [];
    types.forEach((t, id) => {
      if (t === TYPE.CONTROL || t === TYPE.USER_DEFINED || t === TYPE.UNKNOWN)
        special.push({ id, text: tokens[id], bytes: byteLength(tokens[id]) });
    });
    this.specials = special.sort((a, b) => b.bytes - a.bytes || a.id - b.id);
  }

  /** { ids, tokens, attention_mask } of `text`, BOS/EOS added per the file's flags unless add_special_tokens is false. */
  encode(text, { add_special_tokens = true } = {}) {
    const ids = [];
    if (add_special_tokens && this.addBos) ids.push(this.bos);
    // a space before the first fragment, and before each fragment after a special token
    let prevSpecial = true;
    for (const fragment of this._partition(wellFormed(String(text)))) {
      if (typeof fragment === 'number') {
        ids.push(fragment);
        prevSpecial = true;
      } else {
        const raw = (this.addSpacePrefix && prevSpecial ? ' ' : '') + fragment;
        this._session(raw.replaceAll(' ', SPACE), ids);
        prevSpecial = false;
      }
    }
    if (add_special_tokens && this.addEos) ids.push(this.eos);
    return { ids, tokens: ids.map((id) => this.vocab[id]), attention_mask: ids.map(() => 1) };
  }

  /** The tokens' texts (no BOS/EOS added). */
  tokenize(text) {
    return this.encode(text, { add_special_tokens: false }).tokens;
  }

  // llama.cpp's tokenizer_st_partition: each special token in turn (the longest first) splits every
  // text fragment at each of its occurrences. Returns strings (text) and numbers (token ids).
  _partition(text) {
    let fragments = text.length ? [text] : [];
    for (const { id, text: special } of this.specials) {
      const next = [];
      for (const fragment of fragments) {
        if (typeof fragment === 'number' || !fragment.includes(special)) {
          next.push(fragment);
          continue;
        }
        const parts = fragment.split(special);
        parts.forEach((part, i) => {
          let rest = part;
          if (i > 0) {
            next.push(id);
            if (this.rstrip.has(id)) while (rest.length && isSpace(rest[0])) rest = rest.slice(1);
          }
          if (rest.length) next.push(rest);
        });
      }
      fragments = next;
    }
    return fragments;
  }

  // llm_tokenizer_spm_session::tokenize: the symbols are the text's characters; the adjacent pairs
  // whose joined text is a vocab piece wait in a queue by the piece's score (ties: the leftmost);
  // the best is merged and its new neighbours queued, until no pair is left. Each symbol is then
  // its piece, or (a character that never became a piece) its UTF-8 bytes as <0xNN> tokens.
  _session(text, out) {
    const chars = Array.from(text);
    const symbols = chars.map((ch, i) => ({
      text: ch,
      prev: i - 1,
      next: i + 1 < chars.length ? i + 1 : -1,
    }));
    const queue = new BigramQueue();
    const tryAdd = (left, right) => {
      if (left < 0 || right < 0) return;
      const joined = symbols[left].text + symbols[right].text;
      const id = this.tokens_to_ids.get(joined);
      if (id !== undefined) queue.push({ left, right, score: this.scores[id], size: joined.length });
    };
    for (let i = 1; i < symbols.length; i++) tryAdd(i - 1, i);
    while (queue.size) {
      const { left, right, size } = queue.pop();
      const l = symbols[left];
      const r = symbols[right];
      // a pair one of whose symbols has changed since it was queued is stale
      if (!l.text || !r.text || l.text.length + r.text.length !== size) continue;
      l.text += r.text;
      r.text = '';
      l.next = r.next;
      if (r.next >= 0) symbols[r.next].prev = left;
      tryAdd(l.prev, left);
      tryAdd(left, l.next);
    }
    // (llama.cpp's rev_merge is never needed: a merged symbol is always a vocab piece)
    for (let i = symbols.length ? 0 : -1; i !== -1; i = symbols[i].next) {
      const id = this.tokens_to_ids.get(symbols[i].text);
      if (id !== undefined) out.push(id);
      else for (const b of utf8.encode(symbols[i].text)) this._pushByte(b, out);
    }
  }

  // llama_vocab::byte_to_token: <0xNN>, else the byte itself as a token (else <unk>, where
  // llama.cpp would fail).
  _pushByte(b, out) {
    const hex = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    const id = this.tokens_to_ids.get(hex) ?? this.tokens_to_ids.get(String.fromCharCode(b));
    if (id !== undefined) out.push(id);
    else if (this.unk >= 0) out.push(this.unk);
  }

  // llama.cpp's token_to_piece as bytes: control and unknown tokens their text when `special`
  // (else nothing), user-defined tokens their text, normal ones with ▁ as spaces, byte tokens
  // their byte; other types (unused) nothing.
  _piece(id, special) {
    const type = this.types[id];
    const text = this.vocab[id];
    if (type === TYPE.CONTROL || type === TYPE.UNKNOWN) return special ? utf8.encode(text) : null;
    if (type === TYPE.USER_DEFINED) return utf8.encode(text);
    if (type === TYPE.NORMAL) return utf8.encode(text.replaceAll(SPACE, ' '));
    if (type === TYPE.BYTE) return Uint8Array.of(parseInt(text.slice(3, 5), 16));
    return null;
  }

  /**
   * The text of `ids` as llama.cpp's detokenize writes it (common_detokenize: special tokens
   * written unless skip_special_tokens): the pieces' bytes joined and read as UTF-8, one leading
   * space of the first token's piece removed when the vocab adds the space prefix.
   */
  decode(ids, { skip_special_tokens = false } = {}) {
    if (!Array.isArray(ids) || ids.length === 0 || !Number.isInteger(Number(ids[0])))
      throw Error('token_ids must be a non-empty array of integers.');
    const parts = [];
    ids.forEach((value, i) => {
      const id = Number(value);
      let piece = id >= 0 && id < this.vocab.length ? this._piece(id, !skip_special_tokens) : null;
      if (piece && i === 0 && this.addSpacePrefix && piece[0] === 0x20) piece = piece.subarray(1);
      if (piece) parts.push(piece);
    });
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (bytes.set(p, at), (at += p.length));
    return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
  }

  /** The id of a token's text (undefined when not in the vocab). */
  token_to_id(token) {
    return this.tokens_to_ids.get(token);
  }

  /** The text of a token id. */
  id_to_token(id) {
    return this.vocab[id];
  }

  /** Map of token text → id. */
  get_vocab() {
    return new Map(this.tokens_to_ids);
  }
}
