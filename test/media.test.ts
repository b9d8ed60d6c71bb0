import { describe, expect, it } from 'vitest';
import { raw, fileForm, UPLOAD_MAX_BYTES, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { Media } from '../src/media/media.entity.js';
import { gif1x1, jpeg1x1, png, script, webp1x1 } from './fixtures/images.js';
import sharp from 'sharp';
import { crc32 } from 'node:zlib';

const {
  t,
  users: { ada, eve },
} = useServer({ users: { ada: 'all', eve: 'all' } });

const upload = (form: FormData, token = ada.token) => raw(t, 'POST', '/media', { token, body: form });
const mediaCount = () => t.db.orm.em.fork().count(Media, { uploader: ada.user.id });

describe('media', () => {
  it('uploads a PNG through the SDK and serves its metadata and bytes', async () => {
    const bytes = png(32, 16);
    const res = await api.uploadMedia({ client: ada.client, body: { file: new Blob([new Uint8Array(bytes)]) } });
    expect(res.response?.status, JSON.stringify(res.error)).toBe(201);
    const media = res.data!;
    expect(media).toMatchObject({
      contentType: 'image/png',
      width: 32,
      height: 16,
      byteSize: bytes.length,
      uploader: { username: ada.user.username },
    });
    expect(res.response?.headers.get('location')).toBe(`/api/v1/media/${media.id}`);

    // Others read it once a post they may read shows it.
    expect((await api.getMedia({ client: eve.client, path: { mediaId: media.id } })).response?.status).toBe(404);
    await api.createPost({ client: ada.client, body: { title: 'shown', body: 'b', mediaIds: [media.id] } });
    expect((await api.getMedia({ client: eve.client, path: { mediaId: media.id } })).data).toEqual(media);

    const content = await fetch(`${t.baseUrl}${media.contentPath}`, {
      headers: { authorization: `Bearer ${eve.token}` },
    });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
    expect(content.headers.get('content-length')).toBe(String(bytes.length));
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(content.headers.get('etag')).toBe(`"${media.sha256}"`);
    expect(Buffer.from(await content.arrayBuffer()).equals(bytes)).toBe(true);

    const again = await fetch(`${t.baseUrl}${media.contentPath}`, {
      headers: { authorization: `Bearer ${eve.token}`, 'if-none-match': `"${media.sha256}"` },
    });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    const other = await fetch(`${t.baseUrl}${media.contentPath}`, {
      headers: { authorization: `Bearer ${eve.token}`, 'if-none-match': '"nope"' },
    });
    expect(other.status).toBe(200);
  });

  it('recognises JPEG, GIF and WebP from the bytes, whatever the name says', async () => {
    for (const [bytes, type] of [
      [jpeg1x1, 'image/jpeg'],
      [gif1x1, 'image/gif'],
      [webp1x1, 'image/webp'],
    ] as const) {
      const res = await upload(fileForm(bytes, 'notes.txt', 'file', 'text/plain'));
      expect(res.status).toBe(201);
      expect(res.json).toMatchObject({ contentType: type, width: 1, height: 1 });
    }
  });

  it('refuses a script named .png (415) and stores nothing', async () => {
    const before = await mediaCount();
    const res = await upload(fileForm(script, 'avatar.png', 'file', 'image/png'));
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.detail).toMatch(/not a PNG, JPEG, GIF or WebP/);
    const truncated = await upload(fileForm(png(8, 8).subarray(0, 20)));
    expect(truncated.status).toBe(415);
    expect(await mediaCount()).toBe(before);
  });

  it('refuses an upload over the limit with 413 problem+json', async () => {
    const before = await mediaCount();
    const big = Buffer.concat([png(4, 4), Buffer.alloc(UPLOAD_MAX_BYTES)]);
    const res = await upload(fileForm(big));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.detail).toBe(`The upload is larger than ${UPLOAD_MAX_BYTES} bytes.`);
    expect(await mediaCount()).toBe(before);
  });

  it('answers malformed uploads with 4xx, never a 500', async () => {
    const wrongField = await upload(fileForm(png(2, 2), 'a.png', 'image'));
    expect(wrongField.status).toBe(400);
    const json = await raw(t, 'POST', '/media', { token: ada.token, body: { file: 'iVBORw0KGgo=' } });
    expect(json.status).toBe(415);
    expect(json.json.detail).toBe('This operation takes a body of type multipart/form-data.');
    const cut = await raw(t, 'POST', '/media', {
      token: ada.token,
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n\x89PNG',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    });
    expect(cut.status).toBe(400);
    const noBoundary = await raw(t, 'POST', '/media', {
      token: ada.token,
      body: 'x',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expect(noBoundary.status).toBe(400);
    const two = new FormData();
    two.append('file', new Blob([new Uint8Array(png(2, 2))]), 'a.png');
    two.append('file', new Blob([new Uint8Array(png(2, 2))]), 'b.png');
    const extra = new FormData();
    extra.append('file', new Blob([new Uint8Array(png(2, 2))]), 'a.png');
    extra.append('caption', 'a second part');
    const before = await mediaCount();
    for (const form of [two, extra]) {
      // An extra part is a malformed upload (400 naming the one part there is), not a large one.
      const res = await upload(form);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.json.detail).toContain('one part, the image in the form field `file`');
    }
    expect(await mediaCount()).toBe(before);
  });

  it('keeps client paths away from the file system', async () => {
    expect((await raw(t, 'GET', '/media/..%2F..%2Fetc%2Fpasswd/content', { token: ada.token })).status).toBe(400);
    expect(
      (await raw(t, 'GET', '/media/0196a3fb-3e4f-7051-9c6d-7e8f9a0b1c23/content', { token: ada.token })).status,
    ).toBe(404);
  });

  it('stores the same bytes once (content-addressed)', async () => {
    const bytes = png(5, 5);
    const a = (await upload(fileForm(bytes))).json;
    const b = (await upload(fileForm(bytes))).json;
    expect(a.id).not.toBe(b.id);
    expect(a.sha256).toBe(b.sha256);
  });
});

describe('posts show images by id', () => {
  it("accepts the author's own uploads and refuses anyone else's (422)", async () => {
    const mine = (await upload(fileForm(png(3, 3)))).json;
    const theirs = (await upload(fileForm(png(6, 6)), eve.token)).json;
    const post = await api.createPost({
      client: ada.client,
      body: { title: 'with image', body: 'look', mediaIds: [mine.id] },
    });
    expect(post.response?.status).toBe(201);
    expect(post.data!.mediaIds).toEqual([mine.id]);
    const stolen = await api.createPost({ client: ada.client, body: { title: 'x', body: 'y', mediaIds: [theirs.id] } });
    expect(stolen.response?.status).toBe(422);
    const cleared = await api.updatePost({
      client: ada.client,
      path: { postId: post.data!.id },
      body: { mediaIds: [] },
    });
    expect(cleared.data!.mediaIds).toEqual([]);
    const bad = await raw(t, 'PATCH', `/posts/${post.data!.id}`, {
      token: ada.token,
      body: { mediaIds: ['not-a-uuid'] },
    });
    expect(bad.status).toBe(400);
  });
});

describe('profiles show a picture by id', () => {
  it("takes the user's own upload as avatar and shows it on the profile", async () => {
    const { setAvatar } = await import('../src/media/media.service.js');
    const mine = (await upload(fileForm(png(7, 7)))).json;
    const theirs = (await upload(fileForm(png(9, 9)), eve.token)).json;
    await expect(setAvatar(t.db.orm.em.fork(), ada.user.id, theirs.id)).rejects.toMatchObject({ status: 422 });
    await setAvatar(t.db.orm.em.fork(), ada.user.id, mine.id);
    expect((await api.getCurrentUser({ client: ada.client })).data!.avatarMediaId).toBe(mine.id);
    await setAvatar(t.db.orm.em.fork(), ada.user.id, null);
    expect((await api.getCurrentUser({ client: ada.client })).data!.avatarMediaId).toBeNull();
  });
});

describe('what an image says about whoever took it', () => {
  const exif = {
    IFD0: { Artist: 'Ada Lovelace', Copyright: 'ada-home-camera' },
    IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 26/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 39/1' },
  };
  const photo = (format: 'jpeg' | 'png' | 'webp') =>
    sharp({ create: { width: 8, height: 4, channels: 3, background: 'red' } })
      [format]()
      .withMetadata({ orientation: 6 })
      .withExif(exif)
      .toBuffer();

  it('serves a photo without its GPS position, names and comments, and keeps it upright (JPEG, PNG, WebP)', async () => {
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      const sent = await photo(format);
      expect(sent.includes('Ada Lovelace'), format).toBe(true);
      const created = await upload(fileForm(sent));
      expect(created.status, format).toBe(201);
      const content = await fetch(`${t.apiUrl}${created.json.contentPath.replace('/api/v1', '')}`, {
        headers: { authorization: `Bearer ${ada.token}` },
      });
      const served = Buffer.from(await content.arrayBuffer());
      expect(created.json.byteSize, format).toBe(served.length);
      for (const secret of ['Ada Lovelace', 'ada-home-camera', 'GPS'])
        expect(served.includes(secret), `${format} ${secret}`).toBe(false);
      const meta = await sharp(served).metadata();
      expect(meta.orientation, format).toBe(6);
      expect(meta.width, format).toBe(8);
      // The pixels are the uploader's, bit for bit.
      expect(await sharp(served).raw().toBuffer()).toEqual(await sharp(sent).raw().toBuffer());
    }
  });

  it('drops text chunks and comments, and keeps an image with none as it was', async () => {
    const commented = await sharp({ create: { width: 3, height: 3, channels: 3, background: 'blue' } })
      .png()
      .withMetadata({})
      .toBuffer();
    const withText = Buffer.concat([
      commented.subarray(0, 33),
      textChunk('Comment', 'taken at 12 Elm Street'),
      commented.subarray(33),
    ]);
    const created = await upload(fileForm(withText));
    expect(created.status).toBe(201);
    const content = await raw(t, 'GET', `/media/${created.json.id}/content`, { token: ada.token });
    expect(content.text.includes('Elm Street')).toBe(false);
    const plain = png(5, 5);
    const kept = await upload(fileForm(plain));
    expect(kept.json.byteSize).toBe(plain.length);
  });
});

/** A PNG tEXt chunk (keyword, NUL, text) with its CRC. */
function textChunk(keyword: string, text: string): Buffer {
  const data = Buffer.from(`${keyword}\0${text}`, 'latin1');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write('tEXt', 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}
