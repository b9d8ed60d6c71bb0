import { isOptionalLine, lineProblem } from '../kernel/text.js';
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { User } from './user.entity.js';
import { conflict, notFound, badRequest, invalidToken } from '../kernel/problem.js';
import { normaliseTags } from '../kernel/tags.js';
import { profileById, profileByUsername } from './users.queries.js';
import { isUuid } from '../kernel/ids.js';
import { publicSiteOf } from '../db/public-site.js';
import { presentUser, type UserFields } from './users.presenter.js';
import type { User as UserDto } from '../../codegen/generated/api/types.gen.js';
import { passwordProblems, type PasswordCheck } from './password-policy.js';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1 };
/** `me` names the caller in paths (GET /users/me, ?owner=me). */
const RESERVED_USERNAMES = new Set(['me']);
const USERNAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,37}[a-z0-9])?$/;

/** scrypt, a memory-hard function: `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return timingSafeEqual(actual, expected);
}

export type NewUser = {
  username: string;
  email: string;
  displayName?: string;
  password?: string;
  admin?: boolean;
  skills?: string[];
};

/** Every reason the new account's fields are refused, each naming its field (all at once, for the sign-up form). */
async function newUserProblems(
  input: NewUser,
  username: string,
  email: string,
  checkPassword: PasswordCheck,
): Promise<{ path: string; message: string }[]> {
  const problems: { path: string; message: string }[] = [];
  if (!USERNAME_PATTERN.test(username)) {
    problems.push({
      path: '/username',
      message: `Username: '${input.username}' is not valid: lowercase letters, digits and inner hyphens, at most 39.`,
    });
  } else if (RESERVED_USERNAMES.has(username)) {
    problems.push({ path: '/username', message: `Username: '${username}' is reserved; choose another.` });
  }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    problems.push({ path: '/email', message: `Email: '${input.email}' is not an email address.` });
  const displayName = input.displayName?.trim();
  if (displayName) {
    const problem = lineProblem(displayName);
    if (problem) problems.push({ path: '/displayName', message: `Display name: ${problem}.` });
    else if (displayName.length > 100)
      problems.push({ path: '/displayName', message: 'Display name: at most 100 characters.' });
  }
  if (input.password !== undefined) {
    for (const message of await checkPassword(input.password, { username, email }))
      problems.push({ path: '/password', message });
  }
  return problems;
}

export async function createUser(
  em: EntityManager,
  input: NewUser,
  checkPassword: PasswordCheck = passwordProblems,
): Promise<User> {
  const username = input.username.trim().toLowerCase();
  const email = input.email.trim().toLowerCase();
  const problems = await newUserProblems(input, username, email, checkPassword);
  // A taken username is said with the form's other problems, not after they are fixed (the
  // unique index below still decides a race).
  if (!problems.some((p) => p.path === '/username') && (await em.count(User, { username }))) {
    const taken = `Username: '${username}' is taken; choose another.`;
    if (!problems.length) throw conflict(taken).because('username-taken');
    problems.unshift({ path: '/username', message: taken });
  }
  if (problems.length) throw badRequest(problems.map((p) => p.message).join(' '), problems);
  const user = em.create(User, {
    username,
    email,
    displayName: input.displayName?.trim() || username,
    passwordHash: input.password === undefined ? null : await hashPassword(input.password),
    isAdmin: input.admin ?? false,
    skills: normaliseTags(input.skills),
  });
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      em.clear();
      // Usernames are public (every profile shows one): saying one is taken tells nothing new.
      // That an email is registered is told too (docs/security.md says why, and what bounds it).
      if (await em.count(User, { username }))
        throw conflict(`Username: '${username}' is taken; choose another.`).because('username-taken');
      throw conflict('Email: an account already uses this address. Sign in instead, or use another address.').because(
        'email-taken',
      );
    }
    throw err;
  }
  return user;
}

async function getUserById(em: EntityManager, id: string): Promise<User> {
  const user = await em.findOne(User, { id });
  if (!user) throw notFound('No such user.');
  return user;
}

/** A user as the API shows them, by id or by username (any case), or null. */
async function readUser(em: EntityManager, by: { id: string } | { username: string }): Promise<UserFields | null> {
  if ('id' in by) return isUuid(by.id) ? ((await profileById(em, by))[0] ?? null) : null;
  return (await profileByUsername(em, { username: by.username.toLowerCase() }))[0] ?? null;
}

/** The profile of the user called `username`, or a 404 that names them (a user's own lists start here). */
export async function userNamed(em: EntityManager, username: string): Promise<UserFields> {
  const user = await readUser(em, { username });
  if (!user) throw notFound(`There is no user named '${username}'.`);
  return user;
}

/** GET /users/me: the key's own user. */
export async function getCurrentUser(em: EntityManager, userId: string): Promise<UserDto> {
  const user = await readUser(em, { id: userId });
  // The account went while its key was in flight: the key is no longer anyone's.
  if (!user) throw invalidToken('The account this API key belonged to no longer exists.');
  return presentUser(user, publicSiteOf(em));
}

/** GET /users/{username}: a user's public profile, else 404. */
export async function getUser(em: EntityManager, username: string): Promise<UserDto> {
  return presentUser(await userNamed(em, username), publicSiteOf(em));
}

export async function findUserByUsername(em: EntityManager, username: string): Promise<User | null> {
  return em.findOne(User, { username: username.toLowerCase() });
}

export type ProfileUpdate = { displayName: string; bio: string; location: string; website: string; skills: string[] };

/** Settings → Profile. Empty location or website clears it; the website must be http(s). */
export async function updateProfile(em: EntityManager, userId: string, input: ProfileUpdate): Promise<User> {
  const user = await getUserById(em, userId);
  const errors: string[] = [];
  const displayName = input.displayName.trim();
  const displayNameProblem = lineProblem(displayName);
  if (!displayName || displayName.length > 100) errors.push('Display name: 1 to 100 characters.');
  else if (displayNameProblem) errors.push(`Display name: ${displayNameProblem}.`);
  if (input.bio.length > 2000) errors.push('Bio: at most 2000 characters.');
  if (input.location.trim().length > 200) errors.push('Location: at most 200 characters.');
  if (!isOptionalLine(input.location))
    errors.push('Location: one line, with no control, line-break or bidi-override character.');
  const website = input.website.trim();
  if (website) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(website).protocol) && website.length <= 500;
    } catch {
      ok = false;
    }
    if (!ok) errors.push('Website: an http:// or https:// address of at most 500 characters.');
  }
  if (input.skills.length > 30) errors.push('Skills: at most 30.');
  if (errors.length) throw badRequest(errors.join(' '));
  user.displayName = displayName;
  user.bio = input.bio;
  user.location = input.location.trim() || null;
  user.website = website || null;
  user.skills = normaliseTags(input.skills);
  await em.flush();
  return user;
}
