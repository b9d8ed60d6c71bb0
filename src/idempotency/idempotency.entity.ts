import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';

const IDEMPOTENCY_STATES = ['in_progress', 'done'] as const;

/** The first response to a create, kept for 24 hours and replayed for the same key and request. */
const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  properties: {
    id: uuidv7Key(),
    /** The account whose create it is: its keys share one namespace, over REST and MCP. */
    userId: p.uuid(),
    /** The API key that sent it first. */
    apiKeyId: p.uuid(),
    key: p.string().length(255),
    /** SHA-256 of what was asked (method, path or tool, body): the same key with another request is refused. */
    requestHash: p.string().length(64),
    state: p.enum(IDEMPOTENCY_STATES).default('in_progress'),
    status: p.integer().nullable(),
    responseBody: p.json<unknown>().nullable(),
    location: p.string().length(500).nullable(),
    createdAt: madeAt(),
    /** The resource the create made, when its answer names one by id. */
    resourceId: p.uuid().nullable(),
    /** Set by the database when that resource is deleted: a retry is then told so, not replayed it. */
    resourceGoneAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'idempotency_records_key_unique', properties: ['userId', 'key'] }],
  indexes: [
    { name: 'idempotency_records_created_idx', properties: ['createdAt'] },
    { name: 'idempotency_records_resource_idx', properties: ['resourceId'], where: 'resource_id is not null' },
  ],
});
export class IdempotencyRecord extends IdempotencyRecordSchema.class {}
IdempotencyRecordSchema.setClass(IdempotencyRecord);
