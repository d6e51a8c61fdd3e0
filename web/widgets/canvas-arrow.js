// Arrows and haloed labels on a 2D canvas, shared by the vector planes of <query-explorer> and
// <rope-explorer>; the canvas twin of svgArrow (svg.js), with the same geometry.

/**
 * An arrow from [x0, y0] to [x1, y1] (CSS pixels): a round-capped shaft that stops inside the head,
 * and a filled head of length headBase + 1.5 · width. `dashed` draws the shaft dashed (5 on, 4 off).
 */
export function canvasArrow(ctx, [x0, y0], [x1, y1], color, width, { dashed = false, headBase = 7 } = {}) {
  const a = Math.atan2(y1 - y0, x1 - x0),
    head = headBase + width * 1.5;
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  ctx.lineCap = 'round';
  ctx.setLineDash(dashed ? [5, 4] : []);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1 - Math.cos(a) * head * 0.6, y1 - Math.sin(a) * head * 0.6);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - head * Math.cos(a - 0.42), y1 - head * Math.sin(a - 0.42));
  ctx.lineTo(x1 - head * Math.cos(a + 0.42), y1 - head * Math.sin(a + 0.42));
  ctx.closePath();
  ctx.fill();
}

/** Bold 12 px text centred on [x, y], with a halo of the background so it reads over lines. */
export function canvasLabel(ctx, theme, text, [x, y], color) {
  ctx.font = `600 12px ${theme.font}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 3;
  ctx.strokeStyle = theme.bgSolid;
  ctx.strokeText(text, x, y);
  ctx.fillStyle = color;
  ctx.fillText(text, x, y);
}
