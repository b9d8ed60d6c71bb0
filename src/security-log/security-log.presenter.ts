import type { SecurityEvent } from './security-event.entity.js';

/** An entry as the JSON Lines download gives it: every field, null where it has none. */
export function presentSecurityEvent(row: SecurityEvent) {
  return {
    id: row.id,
    kind: row.kind,
    occurredAt: row.occurredAt.toISOString(),
    keyId: row.keyId ?? null,
    keyName: row.keyName ?? null,
    channel: row.channel ?? null,
    client: row.client ?? null,
    address: row.address ?? null,
    operation: row.operation ?? null,
    resource: row.resource ?? null,
    resourceName: row.resourceName ?? null,
    traceId: row.traceId ?? null,
  };
}
