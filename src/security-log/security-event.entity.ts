import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key } from '../db/columns.js';
import { User } from '../users/user.entity.js';

/**
 * One line of an account's security log (Settings → Security log): what happened, when, through
 * which key and channel, from which address and client. It names things and never holds a
 * secret or a request body. Kept for SECURITY_LOG_DAYS.
 */
const SecurityEventSchema = defineEntity({
  name: 'SecurityEvent',
  tableName: 'security_events',
  properties: {
    /** Time-ordered (UUIDv7): the page's order and its cursor. */
    id: uuidv7Key(),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    /** One of SECURITY_EVENT_KINDS (src/security-log/security-log.service.ts). */
    kind: p.string().length(40),
    occurredAt: p.datetime().onCreate(() => new Date()),
    /** The key it concerns or that did it; its name as it was then (a key keeps no history of names). */
    keyId: p.uuid().nullable(),
    keyName: p.string().length(100).nullable(),
    /** web, cli, oauth, rest or mcp. */
    channel: p.string().length(10).nullable(),
    /** The client: its User-Agent, or for MCP the name and version it gave at initialize. */
    client: p.string().length(200).nullable(),
    /** The client's address (behind TRUST_PROXY, the one the operator's proxy gives). */
    address: p.string().length(64).nullable(),
    /** For a write: the operation's id and the resource's path under the API. */
    operation: p.string().length(60).nullable(),
    resource: p.string().length(300).nullable(),
    /** What the write changed, named as it was then (a project's name, a milestone's title). */
    resourceName: p.string().length(200).nullable(),
    /** The trace the write ran in (OpenTelemetry), when it was traced: what an operator looks it up by. */
    traceId: p.string().length(32).nullable(),
  },
  indexes: [
    { name: 'security_events_user_idx', properties: ['user', 'id'] },
    { name: 'security_events_key_idx', properties: ['keyId', 'kind'] },
  ],
});
export class SecurityEvent extends SecurityEventSchema.class {}
SecurityEventSchema.setClass(SecurityEvent);
