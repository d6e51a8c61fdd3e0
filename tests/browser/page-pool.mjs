// Pages of a browser context handed out again after a test closes them. A page that Chromium
// creates and closes costs a renderer process started and torn down, and the browser process's
// bookkeeping of a tab: a demo load in a new page took 2.1–3.0 core-s of the 2-core machine, the
// same load in a page that had shown a page of the same origin 0.8–1.0 (docs/testing.md "0.11.3").
// So `close()` on a pooled page does not close it: it removes the listeners added while it was
// lent (the test's watch() among them), goes to an empty page of the same origin (same
// Content-Security-Policy and cross-origin isolation, so the renderer process is kept) and waits
// for the next newPage(). Every test still loads its page anew: a navigation starts a new document,
// JS realm and workers. Emulated media and a changed viewport are set back to the context's; a page
// whose other settings outlive a navigation (init scripts, routes, exposed functions, extra
// headers) is closed for real instead.

/** The methods whose effect outlives a navigation and cannot be undone: such a page is not lent again. */
const STICKY = [
  'addInitScript',
  'exposeBinding',
  'exposeFunction',
  'route',
  'routeFromHAR',
  'setExtraHTTPHeaders',
];

/**
 * A pool of the pages of `context`. `blankUrl` is an empty page of the test origin served with the
 * origin's headers; `colorScheme` and `viewport` are the context's (what a lent page is set back to).
 * @returns {{ take: () => Promise<import('playwright-core').Page> }}
 */
export function pagePool(context, blankUrl, { colorScheme, viewport }) {
  const idle = [];
  function lend(page) {
    const listeners = [];
    let sticky = false,
      media = false,
      resized = false;
    const proto = Object.getPrototypeOf(page);
    /** Replaces the page's method `name` by one that calls `mark` first. */
    const noting = (name, mark) => {
      page[name] = (...args) => {
        mark();
        return proto[name].apply(page, args);
      };
    };
    noting('emulateMedia', () => (media = true));
    noting('setViewportSize', () => (resized = true));
    for (const name of STICKY) noting(name, () => (sticky = true));
    page.on = page.addListener = (event, fn) => {
      listeners.push([event, fn]);
      return proto.on.call(page, event, fn);
    };
    let returned = false;
    page.close = async (options) => {
      if (returned) return; // a second close() must not lend the page twice
      returned = true;
      for (const [event, fn] of listeners) page.off(event, fn);
      listeners.length = 0;
      if (sticky || page.isClosed()) return proto.close.call(page, options);
      try {
        await page.goto(blankUrl);
        // null: no emulation of that feature, as in a new page of the context
        if (media) await proto.emulateMedia.call(page, { media: null, colorScheme, reducedMotion: null });
        if (resized) await proto.setViewportSize.call(page, viewport);
      } catch {
        return proto.close.call(page, options);
      }
      idle.push(page);
    };
    return page;
  }
  return {
    async take() {
      return lend(idle.pop() ?? (await context.newPage()));
    },
  };
}
