// The demo page's elements that every view uses, found once, and the text boxes' sizing. No state.
export const $ = (id) => document.getElementById(id);

/** The page's elements that every section uses. */
export const els = {
  form: $('controls'),
  steps: $('steps'),
  heatmap: $('heatmap'),
  maskEditor: $('mask-editor'),
  pe: $('pe'),
};
export const modelWidgets = [els.steps, els.heatmap, els.maskEditor];

/** Grows a text box with its content (up to 12 lines), so long sentences stay visible. */
export function autosize(el) {
  el.style.height = 'auto';
  el.style.height = `${Math.min(el.scrollHeight + 2, 12 * 28)}px`;
}
