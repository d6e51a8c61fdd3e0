// The gradient calls of the demo's "Why this prediction?" on a model source: saliency(ids, options,
// { signal, onProgress }), attributionPatch(options, { signal, onProgress }) and qkAttribution(ids,
// options), tensors as { data, shape }. Every source answers them (demo-models.js in the page,
// demo-pretrained.js through the model worker's jobs of the same names); a source without one (an
// older embed) hides the part of the section that needs it.

/** Whether `source` answers the call `name`. */
export function offers(source, name) {
  return typeof source?.[name] === 'function';
}

/** The call `name` of `source`; its arguments as the source's method takes them. */
export async function callOn(source, name, ...args) {
  if (!offers(source, name)) throw new Error(`this model source has no ${name}`);
  return source[name](...args);
}
