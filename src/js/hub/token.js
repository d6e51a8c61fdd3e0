// The token huggingface_hub would use when none is passed (Node only; browsers have no environment
// and no files): HF_TOKEN, else the token file that `hf auth login` writes — HF_TOKEN_PATH, else
// HF_HOME/token, else XDG_CACHE_HOME/huggingface/token or ~/.cache/huggingface/token — its content
// with surrounding whitespace removed; none when HF_HUB_DISABLE_IMPLICIT_TOKEN is set (as Python).
const env = () => globalThis.process?.env;
const builtin = (name) => globalThis.process?.getBuiltinModule?.(name);

// huggingface_hub's truthy spellings of a boolean environment variable.
const kTrue = new Set(['1', 'ON', 'YES', 'TRUE']);

/** The token file's path in huggingface_hub's order, or undefined outside Node. */
export function tokenPath() {
  const e = env();
  const path = builtin('node:path');
  if (!e || !path) return undefined;
  if (e.HF_TOKEN_PATH) return path.resolve(e.HF_TOKEN_PATH);
  if (e.HF_HOME) return path.join(path.resolve(e.HF_HOME), 'token');
  const base = e.XDG_CACHE_HOME || path.join(builtin('node:os').homedir(), '.cache');
  return path.join(base, 'huggingface', 'token');
}

/** The implicit token (undefined when there is none): HF_TOKEN, else the token file's content. */
export function implicitToken() {
  const e = env();
  if (!e || kTrue.has(String(e.HF_HUB_DISABLE_IMPLICIT_TOKEN ?? '').toUpperCase())) return undefined;
  if (e.HF_TOKEN) return e.HF_TOKEN;
  const file = tokenPath();
  if (!file) return undefined;
  let text;
  try {
    text = builtin('node:fs').readFileSync(file, 'utf8');
  } catch {
    return undefined; // no file: no token, as huggingface_hub
  }
  return text.trim() || undefined;
}
