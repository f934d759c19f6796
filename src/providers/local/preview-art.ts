// Draws an abstract picture as SVG from a 32-byte seed: a gradient background, a soft glow and a
// dozen translucent shapes in a palette derived from the seed. Pure function of (seed, size), so the
// same request always gives the same picture. No text: rendering text would need system fonts, and
// the picture would then differ from one machine to another.

/** sfc32: a small, fast PRNG with 128 bits of state, seeded from the digest. */
function sfc32(seed: Uint8Array): () => number {
  const view = new DataView(seed.buffer, seed.byteOffset, seed.byteLength);
  let a = view.getUint32(0), b = view.getUint32(4), c = view.getUint32(8), d = view.getUint32(12);
  const next = (): number => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // mix the seed before use
  return next;
}

interface Random {
  (): number;
  range(min: number, max: number): number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

function random(seed: Uint8Array): Random {
  const next = sfc32(seed);
  return Object.assign(next, {
    range: (min: number, max: number) => min + (max - min) * next(),
    int: (min: number, max: number) => Math.floor(min + (max - min + 1) * next()),
    pick: <T,>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
  });
}

const r2 = (value: number): string => String(Math.round(value * 100) / 100);

/** Hue offsets of a few classic colour schemes. */
const SCHEMES: readonly (readonly number[])[] = [
  [0, 30, 60, 200, 330], // analogous with an accent
  [0, 180, 20, 200, 160], // complementary
  [0, 120, 240, 60, 300], // triadic
  [0, 150, 210, 30, 330], // split complementary
];

export function previewSvg(seed: Uint8Array, width: number, height: number): string {
  const rnd = random(seed);
  const base = rnd.range(0, 360);
  const saturation = rnd.range(45, 85);
  const palette = rnd.pick(SCHEMES).map((offset, i) => {
    const lightness = i < 2 ? rnd.range(18, 40) : rnd.range(45, 75);
    return `hsl(${r2((base + offset) % 360)},${r2(saturation)}%,${r2(lightness)}%)`;
  });
  const unit = Math.min(width, height);
  const angle = rnd.range(0, 360);
  const rad = (angle * Math.PI) / 180;
  const [x1, y1, x2, y2] = [0.5 - Math.cos(rad) / 2, 0.5 - Math.sin(rad) / 2, 0.5 + Math.cos(rad) / 2, 0.5 + Math.sin(rad) / 2];

  const shapes: string[] = [];
  const count = rnd.int(8, 16);
  for (let i = 0; i < count; i++) {
    const fill = rnd.pick(palette.slice(1));
    const opacity = r2(rnd.range(0.3, 0.8));
    const cx = rnd.range(-0.1, 1.1) * width;
    const cy = rnd.range(-0.1, 1.1) * height;
    const size = rnd.range(0.06, 0.45) * unit;
    const rotate = `rotate(${r2(rnd.range(0, 360))} ${r2(cx)} ${r2(cy)})`;
    const blur = rnd() < 0.2 ? ' filter="url(#soft)"' : '';
    switch (rnd.int(0, 4)) {
      case 0:
        shapes.push(`<circle cx="${r2(cx)}" cy="${r2(cy)}" r="${r2(size)}" fill="${fill}" fill-opacity="${opacity}"${blur}/>`);
        break;
      case 1:
        shapes.push(
          `<circle cx="${r2(cx)}" cy="${r2(cy)}" r="${r2(size)}" fill="none" stroke="${fill}" stroke-opacity="${opacity}" stroke-width="${r2(size * rnd.range(0.05, 0.3))}"/>`,
        );
        break;
      case 2: {
        const w = size * rnd.range(0.8, 2.2);
        const h = size * rnd.range(0.4, 1.2);
        shapes.push(
          `<rect x="${r2(cx - w / 2)}" y="${r2(cy - h / 2)}" width="${r2(w)}" height="${r2(h)}" rx="${r2(h * rnd.range(0, 0.5))}" fill="${fill}" fill-opacity="${opacity}" transform="${rotate}"${blur}/>`,
        );
        break;
      }
      case 3: {
        const sides = rnd.int(3, 6);
        const start = rnd.range(0, Math.PI * 2);
        const points = Array.from({ length: sides }, (_, k) => {
          const a = start + (k * Math.PI * 2) / sides;
          return `${r2(cx + Math.cos(a) * size)},${r2(cy + Math.sin(a) * size)}`;
        });
        shapes.push(`<polygon points="${points.join(' ')}" fill="${fill}" fill-opacity="${opacity}"${blur}/>`);
        break;
      }
      default: {
        // a wave across the picture
        const y = rnd.range(0.1, 0.9) * height;
        const amp = rnd.range(0.05, 0.25) * height;
        const path = `M ${r2(-0.1 * width)} ${r2(y)} C ${r2(width * 0.3)} ${r2(y - amp)}, ${r2(width * 0.6)} ${r2(y + amp)}, ${r2(width * 1.1)} ${r2(y + rnd.range(-amp, amp))}`;
        shapes.push(
          `<path d="${path}" fill="none" stroke="${fill}" stroke-opacity="${opacity}" stroke-width="${r2(unit * rnd.range(0.01, 0.08))}" stroke-linecap="round"/>`,
        );
      }
    }
  }
  const glow = { cx: rnd.range(0.2, 0.8), cy: rnd.range(0.2, 0.8), r: rnd.range(0.3, 0.7) };

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    '<defs>',
    `<linearGradient id="bg" x1="${r2(x1)}" y1="${r2(y1)}" x2="${r2(x2)}" y2="${r2(y2)}"><stop offset="0" stop-color="${palette[0]}"/><stop offset="1" stop-color="${palette[1]}"/></linearGradient>`,
    `<radialGradient id="glow" cx="${r2(glow.cx)}" cy="${r2(glow.cy)}" r="${r2(glow.r)}"><stop offset="0" stop-color="${palette[3]}" stop-opacity="0.7"/><stop offset="1" stop-color="${palette[3]}" stop-opacity="0"/></radialGradient>`,
    `<filter id="soft" x="-50%" y="-50%" width="200%" height="200%"><feGaussianBlur stdDeviation="${r2(unit * 0.02)}"/></filter>`,
    '</defs>',
    `<rect width="${width}" height="${height}" fill="url(#bg)"/>`,
    `<rect width="${width}" height="${height}" fill="url(#glow)"/>`,
    ...shapes,
    '</svg>',
  ].join('');
}
