/**
 * What an upload really is, from its bytes (never from its name or declared type): PNG, JPEG,
 * GIF or WebP, with width and height read from the format's own header. Anything else, or a
 * file whose header is cut short, is not an image we accept.
 */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
export type ImageInfo = { contentType: ImageType; width: number; height: number };

const startsWith = (b: Buffer, sig: number[], at = 0) =>
  b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
const ascii = (b: Buffer, at: number, text: string) =>
  b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;
const valid = (info: ImageInfo | undefined) => (info && info.width > 0 && info.height > 0 ? info : undefined);

function png(b: Buffer): ImageInfo | undefined {
  if (!startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) || !ascii(b, 12, 'IHDR') || b.length < 24)
    return undefined;
  return valid({ contentType: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) });
}

function gif(b: Buffer): ImageInfo | undefined {
  if (!(ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) || b.length < 10) return undefined;
  return valid({ contentType: 'image/gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) });
}

function jpeg(b: Buffer): ImageInfo | undefined {
  if (!startsWith(b, [0xff, 0xd8, 0xff])) return undefined;
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i += 1;
      continue;
    } // fill byte
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const length = b.readUInt16BE(i + 2);
    if (length < 2) return undefined;
    // Start-of-frame markers (baseline, progressive, …) carry the size; C4, C8 and CC are not frames.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return undefined;
      return valid({ contentType: 'image/jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) });
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan data before any frame header
    i += 2 + length;
  }
  return undefined;
}

function webp(b: Buffer): ImageInfo | undefined {
  if (!ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WEBP') || b.length < 30) return undefined;
  if (ascii(b, 12, 'VP8 ')) {
    if (!startsWith(b, [0x9d, 0x01, 0x2a], 23)) return undefined;
    return valid({
      contentType: 'image/webp',
      width: b.readUInt16LE(26) & 0x3fff,
      height: b.readUInt16LE(28) & 0x3fff,
    });
  }
  if (ascii(b, 12, 'VP8L')) {
    if (b[20] !== 0x2f) return undefined;
    const bits = b.readUInt32LE(21);
    return valid({ contentType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 });
  }
  if (ascii(b, 12, 'VP8X')) {
    return valid({ contentType: 'image/webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 });
  }
  return undefined;
}

export function sniffImage(bytes: Buffer): ImageInfo | undefined {
  return png(bytes) ?? jpeg(bytes) ?? gif(bytes) ?? webp(bytes);
}

/** PNG: the chunks up to and including IEND (which carries no data). */
function pngLength(b: Buffer): number | undefined {
  let i = 8;
  while (i + 12 <= b.length) {
    const length = b.readUInt32BE(i);
    const type = b.toString('latin1', i + 4, i + 8);
    i += 12 + length;
    if (type === 'IEND') return length === 0 && i <= b.length ? i : undefined;
  }
  return undefined;
}

/**
 * How many bytes a PNG's image data inflates to when it holds exactly its pixels (a filter byte
 * and the packed samples of every row, of every Adam7 pass when interlaced); undefined when the
 * header does not say.
 */
export function pngDataLength(b: Buffer): number | undefined {
  if (b.length < 33) return undefined;
  const [width, height, depth, colour, interlace] = [b.readUInt32BE(16), b.readUInt32BE(20), b[24]!, b[25]!, b[28]!];
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour as 0 | 2 | 3 | 4 | 6];
  if (!channels) return undefined;
  const rowBytes = (w: number) => (w === 0 ? 0 : 1 + Math.ceil((w * channels * depth) / 8));
  if (interlace === 0) return height * rowBytes(width);
  // Adam7: each pass takes every nth column from a start, every mth row from a start.
  const passes = [
    [0, 8, 0, 8],
    [4, 8, 0, 8],
    [0, 4, 4, 8],
    [2, 4, 0, 4],
    [0, 2, 2, 4],
    [1, 2, 0, 2],
    [0, 1, 1, 2],
  ];
  return passes.reduce((sum, [x0, dx, y0, dy]) => {
    const w = Math.max(0, Math.ceil((width - x0!) / dx!));
    const h = Math.max(0, Math.ceil((height - y0!) / dy!));
    return sum + (w === 0 ? 0 : h * rowBytes(w));
  }, 0);
}

/** A PNG's IDAT chunks, joined: its compressed image data. */
export function pngImageData(b: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let i = 8; i + 12 <= b.length; ) {
    const length = b.readUInt32BE(i);
    if (b.toString('latin1', i + 4, i + 8) === 'IDAT') parts.push(b.subarray(i + 8, i + 8 + length));
    i += 12 + length;
  }
  return Buffer.concat(parts);
}

/** GIF: the header, colour table and blocks up to and including the trailer (0x3B). */
function gifLength(b: Buffer): number | undefined {
  if (b.length < 13) return undefined;
  let i = 13 + (b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 0x07) + 1) : 0);
  const subBlocks = () => {
    while (i < b.length && b[i] !== 0) i += b[i]! + 1;
    i++; // the terminator
  };
  while (i < b.length) {
    const introducer = b[i]!;
    if (introducer === 0x3b) return i + 1;
    if (introducer === 0x21) {
      i += 2; // introducer, label
      subBlocks();
    } else if (introducer === 0x2c) {
      if (i + 10 > b.length) return undefined;
      const packed = b[i + 9]!;
      i += 10 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0) + 1; // descriptor, local table, LZW code size
      subBlocks();
    } else return undefined;
  }
  return undefined;
}

/** JPEG: the marker segments and entropy-coded data up to and including EOI. */
function jpegLength(b: Buffer): number | undefined {
  let i = 2;
  while (i + 2 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    if (marker === 0xd9) return i + 2;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (i + 4 > b.length) return undefined;
    i += 2 + b.readUInt16BE(i + 2);
    if (marker === 0xda) {
      // Entropy-coded data: a 0xFF in it is followed by 0x00 (a stuffed byte) or a restart marker.
      while (i + 1 < b.length && !(b[i] === 0xff && b[i + 1] !== 0x00 && !(b[i + 1]! >= 0xd0 && b[i + 1]! <= 0xd7)))
        i++;
    }
  }
  return undefined;
}

/** The chunks a WebP file is made of (the WebP container specification). */
const WEBP_CHUNKS = new Set(['VP8 ', 'VP8L', 'VP8X', 'ALPH', 'ANIM', 'ANMF', 'ICCP', 'EXIF', 'XMP ']);

/** WebP: the RIFF container's own length, when every chunk in it is one the format defines. */
function webpLength(b: Buffer): number | undefined {
  if (b.length < 12) return undefined;
  const size = b.readUInt32LE(4);
  const end = 8 + size + (size % 2);
  let i = 12;
  while (i + 8 <= Math.min(end, b.length)) {
    if (!WEBP_CHUNKS.has(b.toString('latin1', i, i + 4))) return undefined;
    const chunk = b.readUInt32LE(i + 4);
    i += 8 + chunk + (chunk % 2);
  }
  return i === end ? end : undefined;
}

/**
 * Where the image ends, read from its own structure; undefined when the structure does not hold
 * together. Bytes after that end (a script, a page, another file) make the file more than the
 * image it claims to be.
 */
export function imageLength(bytes: Buffer, type: ImageType): number | undefined {
  switch (type) {
    case 'image/png':
      return pngLength(bytes);
    case 'image/gif':
      return gifLength(bytes);
    case 'image/jpeg':
      return jpegLength(bytes);
    case 'image/webp':
      return webpLength(bytes);
  }
}
