/**
 * What an upload really is, from its bytes (never from its name or declared type): PNG, JPEG,
 * GIF or WebP, with width and height read from the format's own header. Anything else, or a
 * file whose header is cut short, is not an image we accept.
 */
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
export type ImageInfo = { contentType: ImageType; width: number; height: number };

const startsWith = (b: Buffer, sig: number[], at = 0) => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
const ascii = (b: Buffer, at: number, text: string) => b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;
const valid = (info: ImageInfo | undefined) => (info && info.width > 0 && info.height > 0 ? info : undefined);

function png(b: Buffer): ImageInfo | undefined {
  if (!startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) || !ascii(b, 12, 'IHDR') || b.length < 24) return undefined;
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
    if (marker === 0xff) { i += 1; continue; } // fill byte
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { i += 2; continue; }
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
    return valid({ contentType: 'image/webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff });
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

export const EXTENSIONS: Record<ImageType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };
