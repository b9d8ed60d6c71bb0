/**
 * Who may sign in to an account: the operator's CLI disables an account or gives it a new
 * password, and either ends every web session the account has. Here, above users/, because it
 * changes both the user and their sessions.
 */
import { recordSecurityEvent } from '../security-log/security-log.service.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest, notFound } from '../kernel/problem.js';
import type { User } from '../users/user.entity.js';
import { findUserByUsername, hashPassword } from '../users/users.service.js';
import { passwordProblems, type PasswordCheck } from '../users/password-policy.js';
import { Session } from './session.entity.js';

/**
 * Disables an account (the operator CLI) or enables it again. A disabled account signs in
 * nowhere, its sessions end, and its keys are refused by every instance at once (the database
 * announces the change: src/db/triggers.ts). Nothing it made is removed.
 */
export async function setAccountDisabled(em: EntityManager, username: string, disabled: boolean): Promise<User> {
  const user = await findUserByUsername(em, username);
  if (!user) throw notFound(`There is no user named '${username}'.`);
  if (disabled && !user.disabledAt) {
    user.disabledAt = new Date();
    await em.nativeDelete(Session, { user: user.id });
  } else if (!disabled) {
    user.disabledAt = null;
  }
  await em.flush();
  return user;
}

/**
 * Gives an account a new password (the operator CLI): checked against the same policy as
 * sign-up. Every web session of the account ends, so whoever knew the old one is signed out.
 */
export async function setPassword(
  em: EntityManager,
  username: string,
  password: string,
  checkPassword: PasswordCheck = passwordProblems,
): Promise<User> {
  const user = await findUserByUsername(em, username);
  if (!user) throw notFound(`There is no user named '${username}'.`);
  const problems = await checkPassword(password, { username: user.username, email: user.email });
  if (problems.length)
    throw badRequest(
      problems.join(' '),
      problems.map((message) => ({ path: '/password', message })),
    );
  user.passwordHash = await hashPassword(password);
  await em.transactional(async (tem) => {
    await tem.nativeDelete(Session, { user: user.id });
    await recordSecurityEvent(tem, { userId: user.id, kind: 'password.changed', channel: 'cli' });
  });
  await em.flush();
  return user;
}
