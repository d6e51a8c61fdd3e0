// The function bodies of a C++ source and their line spans, for scripts/check-style.mjs.
// Not a C++ parser: comments, string and character literals and preprocessor lines are blanked
// (keeping line breaks), then every brace block at namespace or class level whose opening brace
// follows `)` (possibly with const/noexcept/override/final/-> type/an initializer list) is a function.
// Lambdas and nested blocks count as part of the function around them.

/** Blanks comments, literals and preprocessor lines, keeping every newline where it was. */
export function stripCpp(text) {
  let out = '';
  let i = 0;
  const n = text.length;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < n) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === 'R' && next === '"' && !/\w/.test(text[i - 1] ?? '')) {
      const open = text.indexOf('(', i);
      const delim = text.slice(i + 2, open);
      const end = text.indexOf(`)${delim}"`, open);
      const stop = end < 0 ? n : end + delim.length + 2;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === '"' || (c === "'" && !/[0-9a-fA-F]/.test(text[i - 1] ?? ''))) {
      let j = i + 1;
      while (j < n && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += blank(text.slice(i, j + 1));
      i = j + 1;
    } else if (c === '#' && /(^|\n)[ \t]*$/.test(out.slice(-200))) {
      let j = i;
      while (j < n && (text[j] !== '\n' || text[j - 1] === '\\')) j++;
      out += blank(text.slice(i, j));
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

/** True when the text before an opening brace ends like a function head. */
function isFunctionHead(before) {
  const tail = before.replace(/\s+$/, '');
  if (/\)\s*(const|noexcept|override|final|mutable|\s)*$/.test(tail)) return true;
  if (/\)\s*(const\s*)?(noexcept\s*)?->\s*[\w:<>,\s*&]+$/.test(tail)) return true;
  // A constructor's initializer list: `) : a_(x), b_{y}` ends in `)` or `}` after a member name.
  return /\)\s*:\s*[\w_]+[({][\s\S]*[)}]$/.test(tail.slice(-2000)) && !/;\s*$/.test(tail);
}

/** [{ name, line, lines }] for every function body in the source. */
export function cppFunctions(source) {
  const text = stripCpp(source);
  const found = [];
  const stack = []; // for each open brace: 'scope' (namespace, class, extern) or 'function' or 'block'
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      const inFunction = stack.some((s) => s.kind !== 'scope');
      const before = text.slice(Math.max(last, i - 4000), i);
      const statement = before.slice(before.lastIndexOf(';') + 1);
      let kind = 'block';
      if (!inFunction) {
        if (
          /\b(namespace|class|struct|union|enum)\b[^()]*$/.test(statement) ||
          /extern\s*$/.test(statement)
        ) {
          kind = 'scope';
        } else if (isFunctionHead(statement)) kind = 'function';
        else if (/=\s*$/.test(statement) || /\w\s*$/.test(statement)) kind = 'block';
      }
      const name = kind === 'function' ? (/([\w:~]+)\s*\(/.exec(statement)?.[1] ?? '(function)') : '';
      stack.push({ kind, start: i, name });
      if (kind !== 'block' || inFunction) last = i + 1;
    } else if (c === '}') {
      const open = stack.pop();
      if (open?.kind === 'function') {
        const line = lineOf(text, open.start);
        found.push({ name: open.name, line, lines: lineOf(text, i) - line + 1 });
      }
      // A braced initializer outside a function (`y_{2}` in an initializer list, `= {…}`) is part of
      // the declaration around it: only the end of a function or scope starts a new one.
      if (open?.kind !== 'block' || stack.some((s) => s.kind !== 'scope')) last = i + 1;
    } else if (c === ';') last = i + 1;
  }
  return found;
}
