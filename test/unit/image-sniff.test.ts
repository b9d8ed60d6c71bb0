import { describe, expect, it } from 'vitest';
import { sniffImage } from '../../src/media/image-sniff.js';
import { gif1x1, jpeg1x1, png, script, webp1x1 } from '../fixtures/images.js';

describe('image sniffing (from the bytes)', () => {
  it('recognises PNG, JPEG, GIF and WebP with their sizes', () => {
    expect(sniffImage(png(3, 2))).toEqual({ contentType: 'image/png', width: 3, height: 2 });
    expect(sniffImage(jpeg1x1)).toEqual({ contentType: 'image/jpeg', width: 1, height: 1 });
    expect(sniffImage(gif1x1)).toEqual({ contentType: 'image/gif', width: 1, height: 1 });
    expect(sniffImage(webp1x1)).toEqual({ contentType: 'image/webp', width: 1, height: 1 });
  });

  it('refuses anything else, and truncated headers', () => {
    expect(sniffImage(script)).toBeUndefined();
    expect(sniffImage(Buffer.alloc(0))).toBeUndefined();
    expect(sniffImage(png(3, 2).subarray(0, 20))).toBeUndefined();
    expect(sniffImage(jpeg1x1.subarray(0, 30))).toBeUndefined();
    expect(sniffImage(Buffer.from('GIF89a'))).toBeUndefined();
    expect(sniffImage(Buffer.from('%PDF-1.7\n'))).toBeUndefined();
    const zeroSized = png(3, 2);
    zeroSized.writeUInt32BE(0, 16);
    expect(sniffImage(zeroSized)).toBeUndefined();
  });
});
