import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Media } from './media.entity.js';
import { User } from '../users/user.entity.js';
import type { Actor } from '../http/actor.js';
import { badRequest, notFound, ProblemError } from '../http/problem.js';
import { sniffImage } from './image-sniff.js';
import type { MediaStorage } from './storage.js';

export const notAnImage = () =>
  new ProblemError(415, 'unsupported-media-type', 'Unsupported media type', 'The file is not a PNG, JPEG, GIF or WebP image (judged from its bytes, not its name).');

export async function uploadMedia(em: EntityManager, storage: MediaStorage, actor: Actor, bytes: Buffer | undefined): Promise<Media> {
  if (!bytes) throw badRequest('Send the image as multipart/form-data in a field named "file".', [{ path: '/body/file', message: 'required' }]);
  const info = sniffImage(bytes);
  if (!info) throw notAnImage();
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  await storage.put(sha256, bytes);
  const media = em.create(Media, {
    uploader: em.getReference(User, actor.userId),
    sha256,
    contentType: info.contentType,
    byteSize: bytes.length,
    width: info.width,
    height: info.height,
  });
  await em.flush();
  await em.populate(media, ['uploader']);
  return media;
}

export async function getMedia(em: EntityManager, mediaId: string): Promise<Media> {
  const media = await em.findOne(Media, { id: mediaId }, { populate: ['uploader'] });
  if (!media) throw notFound(`No media with id ${mediaId}.`);
  return media;
}

export async function openMedia(storage: MediaStorage, media: Media): Promise<Readable> {
  const stream = await storage.open(media.sha256);
  if (!stream) throw new Error(`media ${media.id}: bytes ${media.sha256} are missing from storage`);
  return stream;
}

/** Ids of media the user uploaded, among `ids` (posts may only show the author's own images). */
export async function ownMediaIds(em: EntityManager, userId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await em.find(Media, { id: { $in: ids }, uploader: userId }, { fields: ['id'] })).map((m) => m.id));
}
