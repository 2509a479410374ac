// Test data the viewer tests make for themselves (nothing from a game is committed): a WAD3 (GoldSrc)
// holding a texture for each name, an uncompressed TGA and a stored ZIP (a Quake 3 pk3), for maps whose
// textures are kept outside them.
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

// An uncompressed 24-bit TGA (type 2, bottom-up rows) of w x h pixels, colour(x, y) -> [r, g, b].
export function makeTga(w, h, colour) {
  const out = Buffer.alloc(18 + w * h * 3);
  out[2] = 2;
  out.writeUInt16LE(w, 12); out.writeUInt16LE(h, 14);
  out[16] = 24;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const [r, g, b] = colour(x, h - 1 - y);
      const at = 18 + 3 * (y * w + x);
      out[at] = b; out[at + 1] = g; out[at + 2] = r;
    }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xFFFFFFFF;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >>> 8);
  return (c ^ 0xFFFFFFFF) >>> 0;
}

// A ZIP of `files` ([{name, bytes}]) stored without compression, as a pk3 may be.
export function makeZip(files) {
  const locals = [], centrals = [];
  let at = 0;
  for (const f of files) {
    const name = Buffer.from(f.name, 'utf8'), data = Buffer.from(f.bytes), crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(10, 4);
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(10, 6);
    central.writeUInt32LE(crc, 16); central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28); central.writeUInt32LE(at, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    at += 30 + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8); end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12); end.writeUInt32LE(at, 16);
  return Buffer.concat([...locals, directory, end]);
}
