/**
 * What an image carries besides its pixels, taken out before it is stored: EXIF (a camera's GPS
 * position, its owner's name, serial numbers, a thumbnail of the uncropped photo), XMP, IPTC,
 * comments and text chunks. Done on the bytes, without decoding or re-encoding: the pixels are
 * the uploader's, bit for bit.
 *
 * Kept: what decoding needs (JPEG's JFIF and Adobe segments and its ICC profile, PNG's colour
 * chunks, an animation's loop count) and the orientation, re-written as the only tag of a
 * minimal EXIF block, so that a photo taken on its side is still shown upright.
 *
 * The input has already passed imageLength() and decoded in full (media.service.ts), so its
 * structure holds together; the walks below rely on that.
 */
import { crc32 } from 'node:zlib';
import type { ImageType } from './image-sniff.js';

export function stripMetadata(bytes: Buffer, type: ImageType): Buffer {
  switch (type) {
    case 'image/jpeg':
      return jpeg(bytes);
    case 'image/png':
      return png(bytes);
    case 'image/webp':
      return webp(bytes);
    case 'image/gif':
      return gif(bytes);
  }
}

/** The EXIF Orientation (tag 0x0112) in a TIFF structure, when it says anything but "upright" (1). */
function orientationOf(tiff: Buffer): number | undefined {
  if (tiff.length < 8) return undefined;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const u16 = (at: number) => (order === 'II' ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (order === 'II' ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return undefined;
  const count = u16(ifd);
  for (let e = 0; e < count; e++) {
    const at = ifd + 2 + e * 12;
    if (at + 12 > tiff.length) return undefined;
    if (u16(at) === 0x0112 && u16(at + 2) === 3) {
      const value = u16(at + 8);
      return value >= 2 && value <= 8 ? value : undefined;
    }
  }
  return undefined;
}

/** A TIFF structure whose only tag is the Orientation. */
function orientationTiff(orientation: number): Buffer {
  const t = Buffer.alloc(26);
  t.write('MM', 0, 'latin1');
  t.writeUInt16BE(42, 2);
  t.writeUInt32BE(8, 4); // IFD0 right after the header
  t.writeUInt16BE(1, 8); // one entry
  t.writeUInt16BE(0x0112, 10); // Orientation
  t.writeUInt16BE(3, 12); // SHORT
  t.writeUInt32BE(1, 14); // one value
  t.writeUInt16BE(orientation, 18);
  t.writeUInt32BE(0, 22); // no next IFD
  return t;
}

const EXIF_HEADER = Buffer.from('Exif\0\0', 'latin1');

// JPEG -----------------------------------------------------------------------------------------

const APP0 = 0xe0;
const APP1 = 0xe1;
const APP2 = 0xe2;
const APP14 = 0xee;
const COM = 0xfe;

/** Whether a JPEG segment (marker and payload) is kept: everything but metadata and thumbnails. */
function keepsJpegSegment(marker: number, payload: Buffer): boolean {
  if (marker === COM) return false;
  if (marker < APP0 || marker > 0xef) return true;
  const id = payload.toString('latin1', 0, 12);
  if (marker === APP0) return id.startsWith('JFIF\0'); // JFXX only holds a thumbnail
  if (marker === APP2) return id.startsWith('ICC_PROFILE\0');
  return marker === APP14 && id.startsWith('Adobe');
}

/** A JFIF segment without its thumbnail (a smaller picture of the photo, perhaps before a crop). */
function jfifWithoutThumbnail(segment: Buffer): Buffer {
  // marker (2), length (2), "JFIF\0" (5), version (2), units (1), densities (4), thumbnail size (2)
  if (segment.length <= 18) return segment;
  const bare = Buffer.from(segment.subarray(0, 18));
  bare.writeUInt16BE(16, 2);
  bare[16] = 0;
  bare[17] = 0;
  return bare;
}

function jpeg(b: Buffer): Buffer {
  const out: Buffer[] = [b.subarray(0, 2)];
  let orientation: number | undefined;
  let i = 2;
  while (i + 2 <= b.length) {
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      out.push(b.subarray(i, i + 1));
      i += 1;
      continue;
    }
    if (marker === 0xd9 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      out.push(b.subarray(i, i + 2));
      if (marker === 0xd9) break;
      i += 2;
      continue;
    }
    const end = i + 2 + b.readUInt16BE(i + 2);
    const payload = b.subarray(i + 4, end);
    if (marker === APP1 && payload.subarray(0, 6).equals(EXIF_HEADER))
      orientation ??= orientationOf(payload.subarray(6));
    if (keepsJpegSegment(marker, payload))
      out.push(marker === APP0 ? jfifWithoutThumbnail(b.subarray(i, end)) : b.subarray(i, end));
    i = end;
    if (marker === 0xda) {
      // The entropy-coded data after a scan header, up to the next marker, as it is.
      let j = i;
      while (j + 1 < b.length && !(b[j] === 0xff && b[j + 1] !== 0x00 && !(b[j + 1]! >= 0xd0 && b[j + 1]! <= 0xd7)))
        j++;
      out.push(b.subarray(i, j));
      i = j;
    }
  }
  if (orientation !== undefined) {
    const tiff = orientationTiff(orientation);
    const segment = Buffer.alloc(4);
    segment.writeUInt16BE(0xff00 | APP1, 0);
    segment.writeUInt16BE(2 + EXIF_HEADER.length + tiff.length, 2);
    // Right after SOI, or after a JFIF segment, which must come first.
    const at = out[1] && out[1][1] === APP0 ? 2 : 1;
    out.splice(at, 0, segment, EXIF_HEADER, tiff);
  }
  return Buffer.concat(out);
}

// PNG ------------------------------------------------------------------------------------------

/**
 * The chunks kept: what draws the image (the critical chunks, colour, transparency, density, the
 * animation's), by the PNG specification. Everything else goes: text, EXIF and time chunks,
 * provenance manifests (caBX), private and unknown chunks, whatever is carried in them.
 */
const PNG_KEPT = new Set([
  'IHDR',
  'PLTE',
  'IDAT',
  'IEND',
  'tRNS',
  'cHRM',
  'gAMA',
  'iCCP',
  'sBIT',
  'sRGB',
  'cICP',
  'mDCV',
  'cLLI',
  'bKGD',
  'hIST',
  'pHYs',
  'sPLT',
  'acTL',
  'fcTL',
  'fdAT',
]);

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

function png(b: Buffer): Buffer {
  const out: Buffer[] = [b.subarray(0, 8)];
  let orientation: number | undefined;
  for (let i = 8; i + 12 <= b.length; ) {
    const length = b.readUInt32BE(i);
    const type = b.toString('latin1', i + 4, i + 8);
    const end = i + 12 + length;
    if (type === 'eXIf') orientation ??= orientationOf(b.subarray(i + 8, i + 8 + length));
    if (PNG_KEPT.has(type)) out.push(b.subarray(i, end));
    i = end;
    if (type === 'IEND') break;
  }
  // eXIf goes before the image data: right after IHDR.
  if (orientation !== undefined) out.splice(2, 0, pngChunk('eXIf', orientationTiff(orientation)));
  return Buffer.concat(out);
}

// WebP -----------------------------------------------------------------------------------------

const VP8X_XMP = 0x04;
const VP8X_EXIF = 0x08;

function webpChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(type, 0, 'latin1');
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

function webp(b: Buffer): Buffer {
  const chunks: Buffer[] = [];
  let orientation: number | undefined;
  let vp8x: Buffer | undefined;
  const end = 8 + b.readUInt32LE(4);
  for (let i = 12; i + 8 <= end; ) {
    const type = b.toString('latin1', i, i + 4);
    const size = b.readUInt32LE(i + 4);
    const next = i + 8 + size + (size % 2);
    if (type === 'EXIF') {
      const data = b.subarray(i + 8, i + 8 + size);
      orientation ??= orientationOf(data.subarray(0, 6).equals(EXIF_HEADER) ? data.subarray(6) : data);
    } else if (type !== 'XMP ') {
      const chunk = Buffer.from(b.subarray(i, next));
      if (type === 'VP8X') vp8x = chunk;
      chunks.push(chunk);
    }
    i = next;
  }
  // Only an extended WebP (VP8X) can carry EXIF: its flags say which chunks follow.
  if (vp8x) {
    vp8x[8] = vp8x[8]! & ~(VP8X_XMP | VP8X_EXIF);
    if (orientation !== undefined) {
      vp8x[8] = vp8x[8]! | VP8X_EXIF;
      chunks.push(webpChunk('EXIF', orientationTiff(orientation)));
    }
  }
  const body = Buffer.concat(chunks);
  const head = Buffer.from('RIFF\0\0\0\0WEBP', 'latin1');
  head.writeUInt32LE(4 + body.length, 4);
  return Buffer.concat([head, body]);
}

// GIF ------------------------------------------------------------------------------------------

/** The application extensions a GIF needs: the loop count, and its colour profile. */
const GIF_APPLICATIONS = new Set(['NETSCAPE2.0', 'ANIMEXTS1.0', 'ICCRGBG1012']);

function gif(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 13 + (b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 0x07) + 1) : 0);
  out.push(b.subarray(0, i));
  const skipSubBlocks = (from: number) => {
    let j = from;
    while (j < b.length && b[j] !== 0) j += b[j]! + 1;
    return j + 1;
  };
  while (i < b.length) {
    const introducer = b[i]!;
    if (introducer === 0x3b) {
      out.push(b.subarray(i, i + 1));
      break;
    }
    let end: number;
    let keep = true;
    if (introducer === 0x21) {
      const label = b[i + 1]!;
      end = skipSubBlocks(i + 2);
      if (label === 0xfe) keep = false; // a comment
      if (label === 0xff) keep = GIF_APPLICATIONS.has(b.toString('latin1', i + 3, i + 14)); // XMP and others
    } else {
      const packed = b[i + 9]!;
      end = skipSubBlocks(i + 10 + (packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0) + 1);
    }
    if (keep) out.push(b.subarray(i, end));
    i = end;
  }
  return Buffer.concat(out);
}
