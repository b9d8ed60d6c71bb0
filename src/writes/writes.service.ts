/**
 * The ending every write shares, whichever adapter it came through (a REST operation, an MCP
 * tool): a create with an idempotency key is made once and its answer kept for a replay, and a
 * write made with a key goes in its owner's security log. A rule about writes is added here,
 * once, and both adapters have it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../kernel/actor.js';
import {
  type IdempotentRequest,
  type Once,
  once,
  type Outcome,
  type Replay,
} from '../idempotency/idempotency.service.js';
import { type Origin, recordKeyWrite } from '../security-log/security-log.service.js';
import { traceId } from '../telemetry/telemetry.js';

/** What the security log names as written: where (a create's Location, or the path written to) and its name then. */
export type Written = { resource: string; resourceName?: string | null };

export type Write<T> = {
  /** The request's entity manager: the write and its ending run in transactions under it. */
  em: EntityManager;
  actor: Actor;
  /** The contract's operationId: the REST operation, or the one the tool is bound to. */
  operation: string;
  /** How the write came (REST or MCP) and from where, for its security-log entry. */
  origin: Origin & { channel: 'rest' | 'mcp' };
  /** A create sent with an idempotency key, and what to keep of its outcome to replay it. */
  idempotency?: { request: IdempotentRequest; stored: (outcome: Outcome<T>) => Replay | undefined };
  /** What the entry names, or undefined when the result is no write to log (a read, a refusal answered). */
  written: (result: T) => Written | undefined;
  /** An entry that could not be written after the write committed: reported, and the write stands. */
  logFailed: (error: unknown) => void;
  /**
   * A last check of the result (an MCP tool's output schema), after its entry is written: a write
   * made is logged even when its answer fails the check. It throws to refuse the answer; under an
   * idempotency key that also undoes the create, which has not committed yet.
   */
  check?: (result: T) => void;
};

/**
 * Runs `make` as the write `write` describes. The entry is written where the write ran: in a
 * create's own transaction when it has an idempotency key (so a replay is not logged again),
 * otherwise right after `make` has committed its own.
 */
export async function runWrite<T>(write: Write<T>, make: (em: EntityManager) => Promise<T>): Promise<Once<T>> {
  const run = async (em: EntityManager): Promise<T> => {
    const result = await make(em);
    const entry = write.written(result);
    if (entry)
      await recordKeyWrite(em, write.actor, {
        ...write.origin,
        operation: write.operation,
        ...entry,
        traceId: traceId(),
      }).catch(write.logFailed);
    write.check?.(result);
    return result;
  };
  if (!write.idempotency) return { kind: 'new', result: await run(write.em) };
  return once(write.em, write.idempotency.request, run, write.idempotency.stored);
}
