/**
 * Web sessions: sign-up, sign-in and sign-out for the web application. The cookie holds a random
 * secret; the database holds its SHA-256, so a leaked table opens no session. Sessions last
 * SESSION_DAYS; signing out deletes the row. A session never reaches the REST API except the
 * session-only (moderation) operations, and an API key never opens a session.
 */
import { recordSecurityEvent, type Origin } from '../security-log/security-log.service.js';
import { KnownDevice } from './known-device.entity.js';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Session } from './session.entity.js';
import { User } from '../users/user.entity.js';
import { createUser, verifyPassword } from '../users/users.service.js';
import type { PasswordCheck } from '../users/password-policy.js';
import { hashToken } from '../keys/tokens.js';

export const SESSION_DAYS = 14;
export const SESSION_COOKIE = 'shipyard_session';

export async function openSession(em: EntityManager, userId: string): Promise<{ secret: string; expiresAt: Date }> {
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + SESSION_DAYS * 86_400_000);
  em.create(Session, { user: em.getReference(User, userId), tokenHash: hashToken(secret), expiresAt });
  await em.flush();
  return { secret, expiresAt };
}

/** The signed-in user for a cookie secret, or undefined (unknown, expired, or not a secret at all). */
export async function userForSession(em: EntityManager, secret: string | undefined): Promise<User | undefined> {
  if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  const session = await em.findOne(Session, { tokenHash: hashToken(secret) }, { populate: ['user'] });
  if (!session || session.user.disabledAt) return undefined;
  if (session.expiresAt <= new Date()) {
    await em.nativeDelete(Session, { id: session.id });
    return undefined;
  }
  return session.user;
}

/** The cookie that marks a browser its account has signed in from. */
export const DEVICE_COOKIE = 'shipyard_device';
export const DEVICE_DAYS = 365;
/** The most browsers an account is remembered on: the oldest is forgotten first. */
const DEVICES_PER_USER = 20;

/** Remembers this browser for the account: the cookie's secret (only its hash is stored). */
export async function rememberDevice(em: EntityManager, userId: string): Promise<string> {
  const secret = randomBytes(32).toString('base64url');
  em.create(KnownDevice, { user: em.getReference(User, userId), tokenHash: hashToken(secret) });
  await em.flush();
  const old = await em.find(
    KnownDevice,
    { user: userId },
    { orderBy: { createdAt: 'desc' }, offset: DEVICES_PER_USER, fields: ['id'] },
  );
  if (old.length) await em.nativeDelete(KnownDevice, { id: { $in: old.map((d) => d.id) } });
  return secret;
}

/**
 * Who a sign-in is for, before its password is checked: the account `login` names (its id, the
 * same whether it was named by username or by email), or the login itself when no account has it;
 * and the browser's remembered device, when it was remembered for that account.
 */
export async function signInSubject(
  em: EntityManager,
  login: string,
  deviceSecret: string | undefined,
): Promise<{ account: string; device?: string }> {
  const key = login.trim().toLowerCase();
  const user = key
    ? await em.findOne(User, key.includes('@') ? { email: key } : { username: key }, { fields: ['id'] })
    : null;
  const account = user ? `user:${user.id}` : `login:${key}`;
  if (!user || !deviceSecret || !/^[A-Za-z0-9_-]{43}$/.test(deviceSecret)) return { account };
  const device = await em.findOne(
    KnownDevice,
    { tokenHash: hashToken(deviceSecret), user: user.id },
    { fields: ['id'] },
  );
  return device ? { account, device: device.id } : { account };
}

/** Ends a session; the sign-out is in its account's security log. */
export async function closeSession(em: EntityManager, secret: string | undefined, origin: Origin = {}): Promise<void> {
  if (!secret) return;
  const session = await em.findOne(Session, { tokenHash: hashToken(secret) }, { fields: ['user'] });
  if (!session) return;
  await em.transactional(async (tem) => {
    await tem.nativeDelete(Session, { id: session.id });
    await recordSecurityEvent(tem, { userId: session.user.id, kind: 'signout', channel: 'web', ...origin });
  });
}

/** Username or email, and password. The same answer for an unknown account and a wrong password. */
export async function signIn(
  em: EntityManager,
  login: string,
  password: string,
  origin: Origin = {},
): Promise<User | undefined> {
  const key = login.trim().toLowerCase();
  if (!key || !password) return undefined;
  const user = await em.findOne(User, key.includes('@') ? { email: key } : { username: key });
  // Hash anyway when there is no such account, so timing does not tell which accounts exist.
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
  const signedIn = user?.passwordHash && !user.disabledAt && ok ? user : undefined;
  // An account that exists learns of every attempt on it; an unknown login is nobody's to tell.
  // Not waited for: the answer must take as long for an account that exists as for one that does
  // not. An entry that cannot be written is lost (the sign-in itself is not).
  if (user)
    void recordSecurityEvent(em.fork(), {
      userId: user.id,
      kind: signedIn ? 'signin' : 'signin.failed',
      channel: 'web',
      ...origin,
    }).catch(() => undefined);
  return signedIn;
}

export async function signUp(
  em: EntityManager,
  input: { username: string; email: string; displayName: string; password: string },
  checkPassword: PasswordCheck,
): Promise<User> {
  return createUser(em, input, checkPassword);
}

// A real scrypt hash of a random password: verifying against it costs what a real check costs.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$gCN0WzjQ1n8NwAjy6cqOhx1VSqxUDu2jbUeXPq-ABtA';
