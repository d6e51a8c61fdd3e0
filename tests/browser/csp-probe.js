// Records the page's Content-Security-Policy violations in window.__csp (read by assertCleanPage in
// helpers.mjs). A classic script that openWidgetPage's pages load first, before any module: an init
// script would do the same, but a page that had one cannot be released for the next test (helpers.mjs).
window.__csp = [];
document.addEventListener(
  'securitypolicyviolation',
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
  true,
);
