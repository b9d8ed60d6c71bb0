import { resourceGoneTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { User } from '../users/user.entity.js';

const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

const MediaSchema = defineEntity({
  name: 'Media',
  tableName: 'media',
  properties: {
    id: uuidv7Key(),
    uploader: () => p.manyToOne(User).deleteRule('cascade'),
    /** The storage key: bytes live at a path derived only from this hash. */
    sha256: p.string().length(64),
    contentType: p.enum(MEDIA_TYPES),
    byteSize: p.integer(),
    width: p.integer(),
    height: p.integer(),
    createdAt: madeAt(),
    /** When a post or a profile first showed it; an upload that stays null is removed after a grace period. */
    attachedAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'media_uploader_idx', properties: ['uploader'] },
    { name: 'media_sha256_idx', properties: ['sha256'] },
    { name: 'media_unattached_idx', properties: ['createdAt'], where: 'attached_at is null' },
  ],
  triggers: [resourceGoneTrigger('media')],
});
export class Media extends MediaSchema.class {}
MediaSchema.setClass(Media);
