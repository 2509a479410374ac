// Test data the viewer tests make for themselves (nothing from a game is committed): a WAD3 (GoldSrc)
// holding a texture for each name, for maps whose textures are kept in WADs.
import { Buffer } from 'node:buffer';

// A WAD3 holding a 64 x 64 miptex (4 mip levels, its own 256-colour palette) per name: texture i is
// a checker of two colours of its own, so every texture differs.
export function makeWad3(names) {
  const lumps = names.map((name, i) => {
    const w = 64, h = 64, pixels = [w * h, (w * h) >> 2, (w * h) >> 4, (w * h) >> 6];
    const size = 40 + pixels.reduce((a, b) => a + b, 0) + 2 + 768 + 2;
    const b = Buffer.alloc(size);
    b.write(name.slice(0, 15), 0, 'latin1');
    b.writeUInt32LE(w, 16); b.writeUInt32LE(h, 20);
    let at = 40;
    for (let l = 0; l < 4; l++) {
      b.writeUInt32LE(at, 24 + 4 * l);
      const side = w >> l;
      for (let p = 0; p < pixels[l]; p++) b[at + p] = ((p % side) >> (3 - l) ^ Math.floor(p / side) >> (3 - l)) & 1;
      at += pixels[l];
    }
    b.writeUInt16LE(256, at); at += 2;
    const hue = (k) => (i * 67 + k * 101) % 256;
    for (let c = 0; c < 3; c++) { b[at + c] = hue(c); b[at + 3 + c] = 255 - hue(c); }
    return { name, data: b };
  });
  const dirAt = 12 + lumps.reduce((a, l) => a + l.data.length, 0);
  const out = Buffer.alloc(dirAt + 32 * lumps.length);
  out.write('WAD3', 0, 'latin1');
  out.writeInt32LE(lumps.length, 4); out.writeInt32LE(dirAt, 8);
  let at = 12;
  lumps.forEach((l, i) => {
    l.data.copy(out, at);
    const e = dirAt + 32 * i;
    out.writeInt32LE(at, e); out.writeInt32LE(l.data.length, e + 4); out.writeInt32LE(l.data.length, e + 8);
    out[e + 12] = 0x43;
    out.write(l.name.slice(0, 15), e + 16, 'latin1');
    at += l.data.length;
  });
  return out;
}
