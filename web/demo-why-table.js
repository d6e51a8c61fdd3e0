// The tables of the demo's "Why this prediction?" section (demo-why.js and its parts): cells by
// textContent only, a row's first cell a button where it opens something, and the top entries of an
// (L, H) tensor.

export const cell = (tag, text, cls) => {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  return c;
};

// A table of rows (arrays of cell texts) under a caption; a row's `onSelect` makes its first cell a button.
export function table(caption, head, rows) {
  const t = document.createElement('table');
  t.append(cell('caption', caption));
  const tr = document.createElement('tr');
  for (const h of head) {
    const th = cell('th', h);
    th.scope = 'col';
    tr.append(th);
  }
  const thead = document.createElement('thead'),
    tbody = document.createElement('tbody');
  thead.append(tr);
  for (const r of rows) {
    const row = document.createElement('tr');
    r.cells.forEach((text, i) => {
      if (i === 0 && r.onSelect) {
        const td = document.createElement('td'),
          b = cell('button', text, 'link-button');
        b.type = 'button';
        b.addEventListener('click', r.onSelect);
        td.append(b);
        row.append(td);
      } else row.append(cell('td', text));
    });
    tbody.append(row);
  }
  t.append(thead, tbody);
  return t;
}

// The `count` largest entries of a (L, H) tensor { data, shape } as [{ layer, head, value }].
export function topHeads(t, count, by = (v) => v) {
  const H = t.shape[1];
  return Array.from(t.data, (value, i) => ({ layer: Math.floor(i / H), head: i % H, value }))
    .filter((e) => !Number.isNaN(e.value))
    .sort((a, b) => by(b.value) - by(a.value))
    .slice(0, count);
}

export const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));
