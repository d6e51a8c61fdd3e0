// Chat templates: a checkpoint's Jinja template (tokenizer_config.json's chat_template, a string or a
// list of named templates, or a chat_template.jinja file) rendered with @huggingface/jinja, the engine
// transformers.js uses (vendored and pinned like the tokenizer, imported only when a model has a
// template). The context is transformers' apply_chat_template's: messages, add_generation_prompt,
// the special tokens by name, raise_exception and strftime_now. A render is bounded: a template that
// loops, recurses or writes past kMaxChars is TOO_LARGE, never a hang.
import { AttentionError } from '../errors.js';
import { describe } from '../options.js';

const invalid = (message) => new AttentionError('INVALID_ARGUMENT', message);
const tooLarge = (message) => new AttentionError('TOO_LARGE', message);

export const kMaxChars = 1 << 20; // rendered characters
export const kMaxSteps = 2_000_000; // template nodes evaluated (a loop body counts each time)
export const kMaxMillis = 2000; // wall time of one render
const kMaxRange = 100_000; // elements of one range(…)

let engine = null; // the vendored module, patched once to count and time every render
let budget = null; // the running render's { steps, deadline } (renders are synchronous: one at a time)

/** Loads @huggingface/jinja (a literal import, which bundlers follow) and installs the render bound. */
export async function loadJinja() {
  if (engine) return engine;
  const jinja = await import('../vendor/jinja/jinja.mjs');
  const evaluate = jinja.Interpreter.prototype.evaluate;
  // Every node of a render passes here: the one place a loop or a recursion can be stopped.
  jinja.Interpreter.prototype.evaluate = function boundedEvaluate(node, env) {
    if (
      budget &&
      (++budget.steps > kMaxSteps || ((budget.steps & 1023) === 0 && Date.now() > budget.deadline))
    ) {
      throw tooLarge(`the chat template ran past its bound (${kMaxSteps} steps or ${kMaxMillis} ms)`);
    }
    return evaluate.call(this, node, env);
  };
  engine = jinja;
  return engine;
}

/**
 * The templates a checkpoint offers, by name: chat_template.jinja (`file`) is "default"; a string
 * chat_template is "default"; a list of { name, template } gives each its name.
 */
export function chatTemplates(tokenizerConfig, file) {
  const out = new Map();
  const given = tokenizerConfig?.chat_template;
  if (typeof given === 'string') out.set('default', given);
  else if (Array.isArray(given)) {
    for (const t of given) {
      if (typeof t?.name !== 'string' || typeof t?.template !== 'string')
        throw invalid('tokenizer_config.json: chat_template list entries must be { name, template } strings');
      out.set(t.name, t.template);
    }
  } else if (given != null)
    throw invalid(`tokenizer_config.json: chat_template must be a string or a list, got ${describe(given)}`);
  if (file != null) {
    if (typeof file !== 'string')
      throw invalid(`chatTemplate must be the text of chat_template.jinja, got ${describe(file)}`);
    out.set('default', file); // transformers 5 saves the template in this file; it wins
  }
  return out;
}

// A special token of tokenizer_config.json as the template sees it: its text, or the content of an
// AddedToken object.
function tokenText(v) {
  return v && typeof v === 'object' ? (v.content ?? null) : (v ?? null);
}

function checkMessages(messages) {
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid(`messages must be a non-empty array of { role, content }, got ${describe(messages)}`);
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || typeof m.role !== 'string' || typeof m.content !== 'string') {
      throw invalid(`each message must be { role: string, content: string }, got ${describe(m)}`);
    }
  }
}

// strftime_now as transformers defines it (datetime.now().strftime), on a fixed `date`.
function strftimeAt(date) {
  const two = (n) => String(n).padStart(2, '0');
  const month = (style) => date.toLocaleString('en-US', { month: style });
  return (format) =>
    String(format).replace(
      /%[YmdbBHMSjpaA%]/g,
      (t) =>
        ({
          '%Y': String(date.getFullYear()),
          '%m': two(date.getMonth() + 1),
          '%d': two(date.getDate()),
          '%b': month('short'),
          '%B': month('long'),
          '%H': two(date.getHours()),
          '%M': two(date.getMinutes()),
          '%S': two(date.getSeconds()),
          '%p': date.getHours() < 12 ? 'AM' : 'PM',
          '%a': date.toLocaleString('en-US', { weekday: 'short' }),
          '%A': date.toLocaleString('en-US', { weekday: 'long' }),
          '%j': String(Math.floor((date - new Date(date.getFullYear(), 0, 0)) / 864e5)).padStart(3, '0'),
          '%%': '%',
        })[t],
    );
}

// Template.render with our globals: the engine's own setupGlobals would declare range and
// strftime_now first, and an environment refuses to declare a name twice.
function render(engine, template, context) {
  const env = new engine.Environment();
  const globals = {
    false: false,
    true: true,
    none: null,
    False: false,
    True: true,
    None: null,
    raise_exception: (message) => {
      throw new Error(message);
    },
  };
  for (const [key, value] of Object.entries({ ...globals, ...context })) env.set(key, value);
  return new engine.Interpreter(env).run(template.parsed).value;
}

// The caller's extra template variables (transformers' apply_chat_template **kwargs, such as
// Qwen3's enable_thinking): a plain object of names that are not the context's own.
const OWN = new Set([
  ...['messages', 'add_generation_prompt', 'bos_token', 'eos_token', 'unk_token', 'pad_token'],
  ...['strftime_now', 'range', 'raise_exception', 'true', 'false', 'none', 'True', 'False', 'None'],
]);
function checkVariables(variables) {
  if (variables === null || typeof variables !== 'object' || Array.isArray(variables))
    throw invalid(`variables must be an object of template variables, got ${describe(variables)}`);
  for (const name of Object.keys(variables))
    if (OWN.has(name)) throw invalid(`variables: ${name} is set by applyChatTemplate itself`);
  return variables;
}

/** The template's text for `messages` (checked, bounded); `source` a template string, `engine` loadJinja()'s. */
export function renderChatTemplate(
  engine,
  source,
  { messages, addGenerationPrompt, tokenizerConfig, date, variables = {} },
) {
  checkMessages(messages);
  const extra = checkVariables(variables);
  let template;
  try {
    template = new engine.Template(source);
  } catch (error) {
    throw invalid(`the chat template does not parse: ${error.message}`);
  }
  const context = {
    ...extra,
    messages,
    add_generation_prompt: addGenerationPrompt,
    bos_token: tokenText(tokenizerConfig?.bos_token),
    eos_token: tokenText(tokenizerConfig?.eos_token),
    unk_token: tokenText(tokenizerConfig?.unk_token),
    pad_token: tokenText(tokenizerConfig?.pad_token),
    strftime_now: strftimeAt(date),
    range: (...args) => {
      // Python's range, refused past kMaxRange elements before it is built
      const [start, stop, step = 1] = args.length === 1 ? [0, args[0]] : args;
      const n =
        step > 0 ? Math.ceil((stop - start) / step) : step < 0 ? Math.ceil((start - stop) / -step) : Infinity;
      if (!(n <= kMaxRange))
        throw tooLarge(`the chat template asked for range(${args.join(', ')}), over ${kMaxRange} elements`);
      return Array.from({ length: Math.max(0, n) }, (_, i) => start + i * step);
    },
  };
  budget = { steps: 0, deadline: Date.now() + kMaxMillis };
  let text;
  try {
    text = render(engine, template, context);
  } catch (error) {
    if (error instanceof AttentionError) throw error;
    if (error instanceof RangeError)
      throw tooLarge(`the chat template recursed or grew too deep: ${error.message}`);
    throw invalid(`the chat template failed: ${error.message}`);
  } finally {
    budget = null;
  }
  if (text.length > kMaxChars)
    throw tooLarge(`the chat template wrote ${text.length} characters, over ${kMaxChars}`);
  return text;
}
