/**
 * A one-time message for a session's next page: put on a POST, taken (and so gone) by the GET
 * the POST redirects to. Used to show a new API key's token once without answering the POST with
 * it, so a reload never creates a second key. The message is sealed (AES-256-GCM) with a key
 * derived from the session's cookie secret: the database holds only the secret's hash, so a
 * copy of the table cannot open it. It is good for ten minutes.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Session } from './session.entity.js';
import { hashToken } from '../keys/tokens.js';

const FLASH_MS = 10 * 60_000;

const keyFor = (secret: string) => Buffer.from(hkdfSync('sha256', secret, '', 'shipyard session flash', 32));

function seal(secret: string, message: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify({ at: Date.now(), message }), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function open(secret: string, sealed: string): unknown {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    const { at, message } = JSON.parse(text) as { at: number; message: unknown };
    return Date.now() - at <= FLASH_MS ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Leaves `message` for the session's next `takeFlash` (replacing one not yet taken). */
export async function putFlash(em: EntityManager, secret: string, message: unknown): Promise<void> {
  await em.nativeUpdate(Session, { tokenHash: hashToken(secret) }, { flash: seal(secret, message) });
}

/** The session's message, once: a second take (a reload, a second tab) finds nothing. */
export async function takeFlash(em: EntityManager, secret: string): Promise<unknown> {
  return em.transactional(async (tx) => {
    const session = await tx.findOne(
      Session,
      { tokenHash: hashToken(secret) },
      { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['id', 'flash'] },
    );
    if (!session?.flash) return undefined;
    const sealed = session.flash;
    session.flash = null;
    await tx.flush();
    return open(secret, sealed);
  });
}
