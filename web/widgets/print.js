// Print: printing a page with widgets gives their views as vectors, without controls.
// On `beforeprint` each connected widget with toSVG() gets its figure (figureSVG: the same SVG a
// snapshot holds) inserted where its canvases are, and those canvases (with the blocks that only
// hold them) are hidden; `afterprint` puts everything back. The widgets' shared stylesheet hides the
// controls, export buttons, tooltips and hover readouts under @media print (styles.js), so a page
// printed without these events still prints without controls (its pictures then as canvases).
//
//   preparePrint()  the swap, as on beforeprint (a page's own "print" flow, or a script checking it)
//   restorePrint()  back, as on afterprint
import { figureSVG } from './snapshot.js';

const live = new Set(); // connected widgets (base-element.js registers them)
const swapped = new Map(); // widget → { box, hidden }

/** Called by AwElement on connect / disconnect. */
export function track(el) {
  live.add(el);
}
/** The connected widgets (also redrawn by base-element.js when the system's colour scheme changes). */
export function liveWidgets() {
  return live;
}
export function untrack(el) {
  live.delete(el);
  if (swapped.has(el)) swapOut(el);
}

// What to hide for the figure: the blocks that hold a widget's canvases (by default its canvases).
const PARTS = {
  'attention-heatmap': (r) => [r.querySelector('.tiles'), r.querySelector('.dist')],
  'attention-model-view': (r) => [r.querySelector('.grid')],
  'positional-encoding-heatmap': (r) => [r.querySelector('.scroll'), r.querySelector('canvas.curves')],
  'alibi-bias': (r) => [r.querySelector('.panels')],
  'gqa-heads': (r) => [r.querySelector('.maps')],
  'attention-trainer': (r) => [r.querySelector('.charts'), r.querySelector('.heads')],
};

function swapIn(el) {
  if (swapped.has(el) || !el.shadowRoot) return false;
  const fig = figureSVG(el);
  if (!fig) return false;
  const doc = new DOMParser().parseFromString(fig.svg, 'image/svg+xml');
  if (doc.getElementsByTagName('parsererror').length) return false;
  const root = el.shadowRoot;
  const hidden = (
    typeof el.printParts === 'function'
      ? el.printParts()
      : (PARTS[el.localName]?.(root) ?? [...root.querySelectorAll('canvas')])
  ).filter((n) => n && n.isConnected);
  if (!hidden.length) return false;
  const box = document.createElement('div');
  box.className = 'aw-print-figure';
  box.append(document.importNode(doc.documentElement, true));
  if (fig.note)
    box.append(
      Object.assign(document.createElement('p'), { className: 'muted small', textContent: fig.note }),
    );
  hidden[0].before(box);
  for (const n of hidden) n.setAttribute('data-aw-print-hidden', '');
  el.setAttribute('data-aw-printing', '');
  swapped.set(el, { box, hidden });
  return true;
}

function swapOut(el) {
  const s = swapped.get(el);
  if (!s) return;
  s.box.remove();
  for (const n of s.hidden) n.removeAttribute('data-aw-print-hidden');
  el.removeAttribute('data-aw-printing');
  swapped.delete(el);
}

/** Swaps every connected widget's canvases for its SVG figure. Returns how many widgets it swapped. */
export function preparePrint() {
  let n = 0;
  for (const el of live) if (el.isConnected && swapIn(el)) n++;
  return n;
}

/** Undoes preparePrint(): the canvases are back, the figures gone. */
export function restorePrint() {
  for (const el of [...swapped.keys()]) swapOut(el);
}

if (typeof window !== 'undefined' && typeof window.addEventListener === 'function') {
  window.addEventListener('beforeprint', preparePrint);
  window.addEventListener('afterprint', restorePrint);
}
