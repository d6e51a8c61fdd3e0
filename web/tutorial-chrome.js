// The tutorial page's chrome: copy buttons on its code boxes, the contents highlight (the section in
// view is aria-current in the table of contents) and the theme switch (auto, light, dark; kept in
// localStorage; the widgets redraw, since canvases read their colours when they draw).
const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** Copies a code box's text; without clipboard permission, selects it so Ctrl+C works. */
async function copyCode(button) {
  const code = button.parentElement.querySelector('code');
  try {
    await navigator.clipboard.writeText(code.textContent);
    button.textContent = 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    button.textContent = 'Selected';
  }
  button.dataset.done = '';
  setTimeout(() => {
    button.textContent = 'Copy';
    delete button.dataset.done;
  }, 1600);
}

export function attachCopyButtons() {
  for (const button of $$('.code-box .copy')) button.addEventListener('click', () => copyCode(button));
}

/** The contents link of the first section in view is aria-current="true". */
export function attachContents() {
  const tocLinks = new Map($$('.toc a').map((a) => [a.getAttribute('href').slice(1), a]));
  const visible = new Set();
  const spy = new IntersectionObserver(
    (entries) => {
      for (const e of entries) e.isIntersecting ? visible.add(e.target.id) : visible.delete(e.target.id);
      const first = [...tocLinks.keys()].find((id) => visible.has(id));
      for (const [id, a] of tocLinks) a.setAttribute('aria-current', String(id === first));
    },
    { rootMargin: '-20% 0px -60% 0px' },
  );
  for (const id of tocLinks.keys()) {
    const s = document.getElementById(id);
    if (s) spy.observe(s);
  }
}

const THEMES = ['auto', 'light', 'dark'];
const STORAGE_KEY = 'attention-wasm-tutorial-theme';

function redrawWidgets() {
  for (const el of $$('*')) if (el.localName.includes('-') && typeof el.refresh === 'function') el.refresh();
}

function setTheme(toggle, theme) {
  if (theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  toggle.textContent = `Theme: ${theme}`;
  toggle.setAttribute(
    'aria-label',
    `Theme: ${theme}${theme === 'auto' ? ' (follows the system)' : ''}. Press to change the colour theme.`,
  );
  try {
    localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    /* storage may be off */
  }
  redrawWidgets(); // canvases read their colours when they draw
}

/** The theme button cycles auto → light → dark; the saved theme applies on load. */
export function attachTheme() {
  const toggle = $('#theme-toggle');
  toggle.addEventListener('click', () =>
    setTheme(toggle, THEMES[(THEMES.indexOf(toggle.textContent.replace('Theme: ', '')) + 1) % THEMES.length]),
  );
  let saved = 'auto';
  try {
    saved = localStorage.getItem(STORAGE_KEY) || 'auto';
  } catch {
    /* ignore */
  }
  if (THEMES.includes(saved) && saved !== 'auto') setTheme(toggle, saved);
  // A change of the system's scheme: the widgets redraw themselves (web/widgets/base-element.js).
}
