// What the SVG export tests read off a figure, in the page (imported there as
// /tests/browser/svg-inspect.js by svg-export-page.mjs and svg-export-views.test.mjs): whether it
// parses, anything that would reach outside the file, its <metadata> state, the cell rectangles of
// its scale() groups with their fills, and Chromium's own rendering of it as an image.

/** Facts of an SVG string: { doc, parseError, external, state, rects, fillAt(x, y), hex, image: { ctx, dpr } }. */
export async function readSvg(svg) {
  const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const parseError = doc.getElementsByTagName('parsererror').length > 0;
  const external = [];
  for (const n of doc.getElementsByTagName('*')) {
    if (['image', 'foreignObject', 'script', 'use', 'a', 'style', 'iframe', 'feImage'].includes(n.localName))
      external.push(`<${n.localName}>`);
    for (const a of n.attributes) {
      if (/(^|:)href$|^src$/i.test(a.name)) external.push(`${n.localName} ${a.name}`);
      if (/url\(\s*['"]?(?!#)/i.test(a.value)) external.push(`${n.localName} ${a.name}=${a.value}`);
    }
  }
  const body = svg.replace(/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/, '');
  if (/https?:|data:|@import|@font-face/i.test(body.replace(/<metadata[\s\S]*<\/metadata>/, '')))
    external.push('a URL in the text');
  const state = JSON.parse(doc.querySelector('metadata').textContent);
  // The cell rectangles: scale(sx sy) groups of paths made of "M/m x y h n v1 h-n z".
  const rects = [];
  for (const g of doc.querySelectorAll('g[transform^="scale("]')) {
    const [sx, sy] = /scale\(([^ ]+) ([^)]+)\)/.exec(g.getAttribute('transform')).slice(1).map(Number);
    for (const p of g.querySelectorAll('path')) {
      const fill = p.getAttribute('fill'),
        re = /([Mm])(-?[\d.]+) (-?[\d.]+)h(\d+)v1h-(\d+)z/g;
      let m,
        x = 0,
        y = 0;
      while ((m = re.exec(p.getAttribute('d')))) {
        if (m[1] === 'M') {
          x = +m[2];
          y = +m[3];
        } else {
          x += +m[2];
          y += +m[3];
        }
        rects.push({ x0: x * sx, y0: y * sy, x1: (x + +m[4]) * sx, y1: (y + 1) * sy, fill });
      }
    }
  }
  const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
  const fillAt = (x, y) => {
    const r = rects.find((q) => x >= q.x0 && x < q.x1 && y >= q.y0 && y < q.y1);
    return r ? hex(r.fill) : null;
  };
  // Chromium's own rendering of the SVG, as an image, at the device pixel ratio.
  const dpr = window.devicePixelRatio || 1;
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const W = +doc.documentElement.getAttribute('width'),
    H = +doc.documentElement.getAttribute('height');
  const out = new OffscreenCanvas(Math.round(W * dpr), Math.round(H * dpr));
  const ctx = out.getContext('2d');
  ctx.drawImage(img, 0, 0, out.width, out.height);
  return { doc, parseError, external, state, rects, fillAt, hex, image: { ctx, dpr } };
}
