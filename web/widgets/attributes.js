// A widget's attributes, declared once: `static attributes = { name: { type, default, … } }` (CONTRIBUTING.md,
// "Add a widget"). Each is observed and gets a JS property, camelCase (kv-heads → kvHeads), installed on the
// declaring class when define() first reads the names (declaredAttributes below, called by base-element.js).
// A declaration's `type`: a key of READ, or an object { read(text, decl, name), write?(el, name, value, decl) }.
// `property: 'x'` renames the property; `property: false` makes none (an attribute read where it is used, or
// a property written by hand in the class).
import { parseBool } from './model.js';
import { divergingName, paletteName } from './figures/colormap.js';

const clamp = (n, a) => Math.min(a.max ?? Infinity, Math.max(a.min ?? -Infinity, n));

/** How each named type reads the attribute's text (null when absent) under its declaration `a`. */
const READ = {
  // An integer clamped to [min, max], else the default; parseInt: leading digits count ('12px' → 12).
  int(t, a) {
    const n = a.parseInt ? parseInt(t ?? '', 10) : Number(t ?? a.default);
    return (a.parseInt ? Number.isFinite(n) : Number.isInteger(n)) ? clamp(n, a) : a.default;
  },
  // A finite number clamped to [min, max]; not finite, or not over `above`: the default.
  number(t, a) {
    const n = Number(t ?? a.default);
    return Number.isFinite(n) && !(n <= a.above) ? clamp(n, a) : a.default;
  },
  enum(t, a) {
    const v = a.trim ? (t ?? '').trim() : t; // trim: the text trimmed first
    return a.values.includes(v) ? v : a.default; // one of `values`, else the default
  },
  // A head (or row) index: one of `values` as is ('all', 'mean'), else its leading digits (parseInt), at
  // least 0; no digits: 0. Absent: the default.
  index(t, a) {
    const v = t ?? String(a.default);
    return a.values?.includes(v) ? v : Math.max(0, parseInt(v, 10) || 0);
  },
  boolean: (t, a) => parseBool(t, a.default), // true/on/yes/1/'' or false/off/no/0; writes 'true' | 'false'
  palette: (t) => paletteName(t), // 'viridis' | 'cividis' | 'gray'
  diverging: (t) => (divergingName(t) === 'red-blue' ? 'red-blue' : 'blue-orange'),
};

/** What a property writes: String(value); `optional`: null and undefined remove the attribute. */
function writeAttribute(el, name, v, a) {
  if (a.optional && v == null) el.removeAttribute(name);
  else el.setAttribute(name, String(a.type === 'boolean' ? Boolean(v) : v));
}

/** The JS property of attribute `name` (camelCase, or the declaration's `property`). */
const propertyName = (name, a) => a.property ?? name.replace(/-(\w)/g, (_, c) => c.toUpperCase());

/** Defines, on `proto`, the property that reads and writes attribute `name` as declared by `a`. */
function installProperty(proto, owner, name, a) {
  const key = propertyName(name, a);
  if (key === false) return;
  const { read, write = writeAttribute } = a.type?.read ? a.type : { read: READ[a.type] };
  if (!read || Object.hasOwn(proto, key))
    throw new TypeError(`${owner} ${name}: ${read ? `${key} is also hand-written` : 'unknown type'}`);
  Object.defineProperty(proto, key, {
    get() {
      return read(this.getAttribute(name), a, name);
    },
    set(v) {
      write(this, name, v, a);
    },
    configurable: true,
  });
}

const installed = new WeakSet();

/**
 * The attribute names `cls` declares (its own `static attributes`, else its nearest parent's), in order;
 * the declaring class gets their properties the first time.
 */
export function declaredAttributes(cls) {
  while (!Object.hasOwn(cls, 'attributes')) cls = Object.getPrototypeOf(cls);
  if (!installed.has(cls)) {
    installed.add(cls);
    for (const [name, a] of Object.entries(cls.attributes)) installProperty(cls.prototype, cls.name, name, a);
  }
  return Object.keys(cls.attributes);
}
