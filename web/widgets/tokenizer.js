// The demo tokenizer: words (runs of Unicode letters, digits and combining marks) and single
// punctuation/symbol characters, whitespace dropped — /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu, plus two
// refinements: combining marks stay inside their word (Devanagari, Arabic vowel signs), and an emoji
// with its modifiers / zero-width-joiner sequence (👩‍👩‍👧, 👍🏽, flags) is one token.
// Deliberately simple: the point is to see attention, not BPE.

/** The most tokens a widget will process (longer inputs are cut and flagged). */
export const MAX_TOKENS = 512;

const EMOJI = '\\p{Extended_Pictographic}[\\p{Emoji_Modifier}\\uFE0F]*';
const TOKEN_RE = new RegExp(
  '[\\p{L}\\p{N}\\p{M}]+' + // a word
    '|\\p{Regional_Indicator}{2}' + // a flag
    `|${EMOJI}(?:\\u200D${EMOJI})*` + // an emoji (ZWJ sequence)
    '|[^\\s\\p{L}\\p{N}\\p{M}]',
  'gu',
); // one other character

/**
 * Splits text into tokens.
 * @param {string} text
 * @param {number} [max]
 * @returns {{ tokens: string[], truncated: boolean }}
 */
export function tokenizeWithInfo(text, max = MAX_TOKENS) {
  const tokens = [];
  let truncated = false;
  for (const m of String(text ?? '').matchAll(TOKEN_RE)) {
    if (tokens.length === max) {
      truncated = true;
      break;
    }
    tokens.push(m[0]);
  }
  return { tokens, truncated };
}

/** @param {string} text @returns {string[]} at most MAX_TOKENS tokens */
export function tokenize(text, max = MAX_TOKENS) {
  return tokenizeWithInfo(text, max).tokens;
}
