import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Media } from './media.entity.js';
import { User } from '../users/user.entity.js';
import { type Actor, actorId } from '../kernel/actor.js';
import { badRequest, notFound, ProblemError, unprocessable } from '../kernel/problem.js';
import type { Metadata } from 'sharp';
import { inflate } from 'node:zlib';
import { promisify } from 'node:util';
import { imageLength, pngDataLength, pngImageData, sniffImage, type ImageInfo, type ImageType } from './image-sniff.js';
import type { MediaStorage } from './storage.js';
import { lockBytes, mediaIsReadable, storedBytes } from './media.queries.js';
import { isUuid } from '../kernel/ids.js';
import { IMAGE_PIXELS_MAX } from '../kernel/limits.js';
import { DecodeQueue } from './decode-queue.js';
import { stripMetadata } from './metadata.js';
import { presentMedia } from './media.presenter.js';
import type { Media as MediaDto } from '../../codegen/generated/api/types.gen.js';

const notAnImage = () =>
  new ProblemError(
    415,
    'unsupported-media-type',
    'Unsupported media type',
    'The file is not a PNG, JPEG, GIF or WebP image (judged from its bytes, not its name).',
  );

/** The most frames an animated image may have: each one is decoded, however small. */
const MAX_IMAGE_FRAMES = 1000;

const FORMATS: Record<ImageType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const unsupported = (detail: string) =>
  new ProblemError(415, 'unsupported-media-type', 'Unsupported media type', detail);
const tooLarge = (detail: string) => new ProblemError(422, 'image-too-large', 'Image too large', detail);
const tooManyPixels = () =>
  tooLarge(`The image has more than ${IMAGE_PIXELS_MAX / 1_000_000} megapixels in all its frames.`);
const DECODE = { limitInputPixels: IMAGE_PIXELS_MAX, failOn: 'warning', animated: true, sequentialRead: true } as const;

const inflateAsync = promisify(inflate);

/**
 * Whether a PNG's compressed data inflates to no more than its pixels need (inflating stops past
 * that). Inflated on libuv's threads, never on the event loop: tens of megabytes of zeros take a
 * noticeable time to inflate.
 */
async function pngDataFits(bytes: Buffer): Promise<boolean> {
  const expected = pngDataLength(bytes);
  if (expected === undefined) return false;
  try {
    await inflateAsync(pngImageData(bytes), { maxOutputLength: expected + 1 });
    return true;
  } catch (err) {
    // Data that is cut short or damaged is the decoder's to refuse; only too much is refused here.
    return (err as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE';
  }
}

/**
 * The structure around the pixels, from the bytes alone and before any decoding: no more pixels
 * than allowed, and the file ends where the image ends, holding nothing more.
 */
function assertStructure(bytes: Buffer, info: ImageInfo): void {
  const format = FORMATS[info.contentType].toUpperCase();
  if (info.width * info.height > IMAGE_PIXELS_MAX) {
    throw tooLarge(
      `The image declares ${info.width}×${info.height} pixels; the most accepted is ${IMAGE_PIXELS_MAX / 1_000_000} megapixels.`,
    );
  }
  if (imageLength(bytes, info.contentType) !== bytes.length) {
    throw unsupported(
      `The file is not only a ${format} image: its bytes go on after the image ends, or its structure does not hold together.`,
    );
  }
}

// libvips (sharp) is loaded on first use, which the server makes at start (loadImageDecoder):
// an operator command never needs it.
let sharpModule: Promise<typeof import('sharp')> | undefined;
async function loadSharp() {
  sharpModule ??= import('sharp').then((m) => {
    // One libvips thread per image: with decodes queued one at a time (DecodeQueue), an upload
    // takes at most one core, whatever the machine has, and the event loop keeps another.
    m.default.concurrency(1);
    return m;
  });
  return (await sharpModule).default;
}

/** Loads the image decoder now: the server does at start, so a missing native library stops it there. */
export async function loadImageDecoder(): Promise<void> {
  await loadSharp();
}

const decodes = new DecodeQueue();

/**
 * That the bytes are the image their header says, decoded in full by libvips (sharp) within the
 * pixel and frame bounds: a header alone can promise 100000×100000 pixels in 70 bytes (a
 * decompression bomb), or open a file that is something else after it (a GIF that goes on as a
 * script, a PNG with a page after its end). The pixels are decoded into a thumbnail, so memory
 * stays small whatever the image's size.
 */
async function assertDecodes(bytes: Buffer, info: ImageInfo, owner: string): Promise<void> {
  assertStructure(bytes, info);
  await decodes.run(owner, () => decodeInFull(bytes, info));
}

async function decodeInFull(bytes: Buffer, info: ImageInfo): Promise<void> {
  if (info.contentType === 'image/png' && !(await pngDataFits(bytes))) {
    throw unsupported(
      'The PNG image carries more compressed data than its pixels need (a decompression bomb, or something hidden in it).',
    );
  }
  const sharp = await loadSharp();
  const doesNotDecode = unsupported(
    `The file starts like a ${FORMATS[info.contentType].toUpperCase()} image but does not decode as one (it is cut short, damaged, or something else).`,
  );
  let meta: Metadata;
  try {
    meta = await sharp(bytes, DECODE).metadata();
  } catch (err) {
    throw /pixel limit/i.test((err as Error).message) ? tooManyPixels() : doesNotDecode;
  }
  if ((meta.pages ?? 1) > MAX_IMAGE_FRAMES)
    throw tooLarge(`The image has ${meta.pages} frames; the most accepted is ${MAX_IMAGE_FRAMES}.`);
  if (info.width * (meta.pageHeight ?? info.height) * (meta.pages ?? 1) > IMAGE_PIXELS_MAX) throw tooManyPixels();
  const agrees =
    meta.format === FORMATS[info.contentType] &&
    meta.width === info.width &&
    (meta.pageHeight ?? meta.height) === info.height;
  if (!agrees) throw doesNotDecode;
  try {
    await sharp(bytes, DECODE).resize(16, 16, { fit: 'inside' }).raw().toBuffer();
  } catch (err) {
    throw /pixel limit/i.test((err as Error).message) ? tooManyPixels() : doesNotDecode;
  }
}

/** What the media area is configured with, published by GET /platform/limits. */
export type MediaLimits = { uploadBytes: number; quotaBytes: number; unattachedHours: number };
export const DEFAULT_MEDIA_QUOTA_BYTES = 100 * 1024 * 1024;

const quotaExceeded = (used: number, size: number, quota: number) =>
  new ProblemError(
    422,
    'storage-quota-exceeded',
    'Storage quota exceeded',
    `Your images take ${used} bytes of the ${quota} an account may keep; this one (${size} bytes) does not fit, and nothing was stored. ` +
      'Images no post shows are removed after a while; delete posts you no longer want, or upload a smaller image.',
  );

export async function uploadMedia(
  em: EntityManager,
  storage: MediaStorage,
  actor: Actor,
  bytes: Buffer | undefined,
  quotaBytes = DEFAULT_MEDIA_QUOTA_BYTES,
): Promise<MediaDto> {
  if (!bytes)
    throw badRequest('Send the image as multipart/form-data in a field named "file".', [
      { path: '/body/file', message: 'required' },
    ]);
  const info = sniffImage(bytes);
  if (!info) throw notAnImage();
  // An account already at its quota spends no decoding (checked again, exactly, when storing).
  const before = await storedBytes(em, actor.userId);
  if (before >= quotaBytes) throw quotaExceeded(before, bytes.length, quotaBytes);
  await assertDecodes(bytes, info, actor.userId);
  // What is stored and served is the image without its metadata (GPS, names, comments).
  const image = stripMetadata(bytes, info.contentType);
  if (imageLength(image, info.contentType) !== image.length)
    throw new Error(`stripping the metadata of a ${info.contentType} left a broken structure`);
  const sha256 = createHash('sha256').update(image).digest('hex');
  const id = await em.transactional(async (tem) => {
    // The account's row is the lock: two uploads at once cannot both take the last room.
    await tem.findOneOrFail(User, { id: actor.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['id'] });
    const used = await storedBytes(tem, actor.userId);
    if (used + image.length > quotaBytes) throw quotaExceeded(used, image.length, quotaBytes);
    await lockBytes(tem, sha256);
    await storage.put(sha256, image);
    const media = tem.create(Media, {
      uploader: tem.getReference(User, actor.userId),
      sha256,
      contentType: info.contentType,
      byteSize: image.length,
      width: info.width,
      height: info.height,
    });
    await tem.flush();
    return media.id;
  });
  return presentMedia(await em.findOneOrFail(Media, { id }, { populate: ['uploader'] }));
}

/** Marks images as shown by a post or a profile: from then on the sweep leaves them alone. */
export async function markAttached(em: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await em.nativeUpdate(Media, { id: { $in: ids }, attachedAt: null }, { attachedAt: new Date() });
}

/**
 * Removes the uploads no post or profile ever showed, uploaded before `before`, and their bytes
 * once no other upload has the same ones. Returns how many were removed.
 */
export async function sweepUnattachedMedia(em: EntityManager, storage: MediaStorage, before: Date): Promise<number> {
  const stale = await em.find(
    Media,
    { attachedAt: null, createdAt: { $lt: before } },
    { fields: ['id', 'sha256'], limit: 1000 },
  );
  for (const { id, sha256 } of stale) {
    await em.transactional(async (tem) => {
      await lockBytes(tem, sha256);
      await tem.nativeDelete(Media, { id, attachedAt: null });
      if ((await tem.count(Media, { sha256 })) === 0) await storage.remove(sha256);
    });
  }
  return stale.length;
}

/** The image, if the actor may read it (`mediaReadable`), else 404. */
export async function getMedia(em: EntityManager, actor: Actor, mediaId: string): Promise<Media> {
  const [readable] = isUuid(mediaId) ? await mediaIsReadable(em, { mediaId, userId: actorId(actor) }) : [];
  const media = readable ? await em.findOne(Media, { id: mediaId }, { populate: ['uploader'] }) : null;
  if (!media) throw notFound(`No media with id ${mediaId}.`);
  return media;
}

/** GET /media/{id}: the image's metadata, if the actor may read it, else 404. */
export async function getMediaMetadata(em: EntityManager, actor: Actor, mediaId: string): Promise<MediaDto> {
  return presentMedia(await getMedia(em, actor, mediaId));
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

/** A profile picture must be an image the user uploaded; null removes it. (Set from Settings → Profile.) */
export async function setAvatar(em: EntityManager, userId: string, mediaId: string | null): Promise<User> {
  const user = await em.findOne(User, { id: userId });
  if (!user) throw notFound('No such user.');
  if (mediaId !== null && !(await ownMediaIds(em, userId, [mediaId])).has(mediaId)) {
    throw unprocessable(`No image you uploaded has the id ${mediaId}; upload it first (POST /media).`).because(
      'unknown-media',
    );
  }
  if (mediaId !== null) await markAttached(em, [mediaId]);
  user.avatarMediaId = mediaId;
  await em.flush();
  return user;
}
