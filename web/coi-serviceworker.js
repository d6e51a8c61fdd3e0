// Opt-in cross-origin isolation for static hosts that cannot send headers (GitHub Pages and the like),
// so that attention-wasm runs threaded there (docs/threads.md, "Serving pages threaded"). Our own
// small version of the coi-serviceworker idea: one classic script, two roles.
//   In a page: <script src="/coi-serviceworker.js"></script> before the module scripts. It registers
//   itself as a service worker and reloads the page once when the worker takes control, so that the
//   page and everything it loads come through the worker.
//   As the service worker: it adds Cross-Origin-Opener-Policy: same-origin and
//   Cross-Origin-Embedder-Policy: require-corp to every response it passes on.
// Caveats: it must be served from the site's root folder (a service worker controls only pages at or
// below its own path); the first visit loads twice; it needs a secure context (https or localhost);
// a cross-origin resource the page loads must allow it (CORS or Cross-Origin-Resource-Policy), as with
// real headers; a hard reload (Shift+reload) bypasses service workers, so that load runs on one thread.
// Pages work the same without it, on one thread.
/* eslint-env browser, serviceworker */
if (typeof window === 'undefined') {
  self.addEventListener('install', () => self.skipWaiting());
  self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
  self.addEventListener('fetch', (event) => {
    const request = event.request;
    if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return; // a Chromium quirk
    event.respondWith(
      fetch(request).then((response) => {
        if (response.status === 0) return response; // opaque: its headers cannot be changed
        const headers = new Headers(response.headers);
        headers.set('Cross-Origin-Opener-Policy', 'same-origin');
        headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
        return new Response(response.body, {
          status: response.status,
          statusText: response.statusText,
          headers,
        });
      }),
    );
  });
} else if (!window.crossOriginIsolated && window.isSecureContext && navigator.serviceWorker) {
  // Reload at most once per tab, so a browser that will not isolate the page never loops.
  const KEY = 'attention-wasm-coi-reloaded';
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (sessionStorage.getItem(KEY)) return;
    sessionStorage.setItem(KEY, '1');
    location.reload();
  });
  navigator.serviceWorker
    .register(document.currentScript.src)
    .catch((error) =>
      console.warn(
        `attention-wasm: coi-serviceworker not registered (${error.message}); running on one thread`,
      ),
    );
}
