// Steering (activation addition) for the demo's Steer panel, wherever its model lives: the model
// worker runs it on an opened checkpoint or GGUF file (a PretrainedModel, whose generateStream takes
// the edits), the page on a preset or an opened TinyTransformer file (which has no generate: one run()
// per token with the same edits, the loop tests/js/hooks.test.mjs checks a steered generate against).
// A recipe: { hook ('blocks.{l}.hook_resid_pre'), positive and negative (prompt texts: a set each),
// coefficient, prompt (the text to continue), maxNewTokens }. The vector is model.steeringVector at
// each prompt's last token; the edit adds coefficient × vector at every position of the prompt and of
// every decoding step. The plain continuation runs first, then the steered one, greedy, each token
// told as it comes. No DOM here: token text goes to the page, which shows it through textContent.

/** The largest number of new tokens a recipe may ask for. */
export const MAX_STEER_TOKENS = 64;

/** An error whose message is meant for the reader as it is. */
const said = (message) => Object.assign(new Error(message), { code: 'INPUT' });

/** The ids of each prompt of a set (tokenize: the model's own, async or not); a prompt it refuses says which. */
async function promptIds(tokenize, prompts, what) {
  const texts = prompts.map((p) => String(p)).filter((p) => p.trim());
  if (!texts.length) throw said(`Type at least one ${what} prompt (one per line).`);
  const out = [];
  for (const text of texts) {
    const r = await tokenize(text);
    if (r.error) throw said(`The ${what} prompt “${text}”: ${r.error}`);
    out.push(Array.from(r.ids));
  }
  return out;
}

/** The greedy ids after `ids` of a model without generateStream: one run() per token, the edits in each. */
export async function* runLoop(model, ids, { maxNewTokens, edits, signal }) {
  const seq = Array.from(ids);
  for (let step = 0; step < maxNewTokens && !signal?.aborted; step++) {
    const { logits } = model.run(Int32Array.from(seq), { edits });
    const V = logits.shape[2];
    const row = logits.data.subarray(logits.data.length - V);
    let best = 0;
    for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    seq.push(best);
    yield { id: best };
    // Let the page (a Stop click) in between tokens.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** The recipe's checked numbers: { coefficient, maxNewTokens }. */
function recipeNumbers({ coefficient, maxNewTokens }) {
  if (!Number.isFinite(coefficient)) throw said(`The coefficient must be a number, got ${coefficient}.`);
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > MAX_STEER_TOKENS)
    throw said(`Max new tokens must be a whole number from 1 to ${MAX_STEER_TOKENS}.`);
  return { coefficient, maxNewTokens };
}

/**
 * Runs a recipe on a model. `on`: { model (steeringVector), tokenize(text) → { ids, error },
 * decode(ids) → text, stream(ids, { maxNewTokens, edits, signal }) → async iterator of { id },
 * maxPositions }; `job`: { signal, emit({ which: 'plain' | 'steered', text, count, of }) }.
 * Resolves to { hook, norm (‖vector‖), size, of, plain, steered (each { text, count }), aborted }.
 */
export async function runSteer(on, recipe, { signal, emit }) {
  const { coefficient, maxNewTokens } = recipeNumbers(recipe);
  const { hook } = recipe;
  const positive = await promptIds(on.tokenize, recipe.positive, 'positive');
  const negative = await promptIds(on.tokenize, recipe.negative, 'negative');
  const input = await on.tokenize(String(recipe.prompt));
  if (input.error) throw said(`The prompt to continue: ${input.error}`);
  const vector = on.model.steeringVector({ positive, negative, hook });
  const value = Float32Array.from(vector.data, (x) => coefficient * x);
  let sq = 0;
  for (const x of vector.data) sq += x * x;
  const norm = Math.sqrt(sq);
  const of = Math.min(maxNewTokens, on.maxPositions - input.ids.length);
  if (of < 1) throw said(`The prompt already fills the model's ${on.maxPositions} positions.`);
  const out = { hook, norm, size: vector.data.length, of, aborted: false };
  const runs = [
    ['plain', []],
    ['steered', [{ hook, op: 'add', value }]],
  ];
  for (const [which, edits] of runs) {
    const ids = [];
    out[which] = { text: '', count: 0 };
    if (signal?.aborted) continue;
    for await (const token of on.stream(input.ids, { maxNewTokens: of, edits, signal })) {
      ids.push(token.id);
      out[which] = { text: on.decode(ids), count: ids.length };
      emit({ which, ...out[which], of });
    }
  }
  out.aborted = Boolean(signal?.aborted);
  return out;
}
