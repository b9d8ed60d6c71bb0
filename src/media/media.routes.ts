import type { SomeHandlers } from '../http/kit/handler.js';
import type { MediaStorage } from './storage.js';
import { namesEtag } from '../kernel/etag.js';
import { getMedia, getMediaMetadata, openMedia, uploadMedia, type MediaLimits } from './media.service.js';

type UploadedFile = { fieldname: string; buffer: Buffer };

export function mediaHandlers(storage: MediaStorage, limits: MediaLimits) {
  return {
    uploadMedia: async ({ em, actor, req }) => {
      const files = (req as unknown as { files?: UploadedFile[] }).files ?? [];
      const file = files.find((f) => f.fieldname === 'file')?.buffer;
      const media = await uploadMedia(em, storage, actor, file, limits.quotaBytes);
      return { status: 201, body: media, headers: { Location: `${req.baseUrl}/media/${media.id}` } };
    },
    getMedia: async ({ em, actor, path }) => ({
      status: 200,
      body: await getMediaMetadata(em, actor, path.mediaId),
    }),
    getMediaContent: async ({ em, actor, path, req }) => {
      const media = await getMedia(em, actor, path.mediaId);
      const etag = `"${media.sha256}"`;
      // Content-addressed, so it never changes: cache for a year.
      const headers = {
        ETag: etag,
        'Cache-Control': 'private, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      };
      if (namesEtag(req.header('if-none-match'), etag)) return { status: 304, headers };
      return {
        status: 200,
        stream: await openMedia(storage, media),
        headers: {
          ...headers,
          'Content-Type': media.contentType,
          'Content-Length': String(media.byteSize),
          'Content-Disposition': 'inline',
        },
      };
    },
  } satisfies SomeHandlers<'uploadMedia' | 'getMedia' | 'getMediaContent'>;
}
