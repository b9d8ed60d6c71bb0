/**
 * What each operator command does (src/cli/main.ts reads the command line and loads this file
 * only to run one, so that `help` and a usage mistake answer at once).
 */
import { databaseSettings, loadConfig } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { ProblemError } from '../kernel/problem.js';
import { createUser, findUserByUsername } from '../users/users.service.js';
import { setAccountDisabled, setPassword } from '../sessions/account-access.js';
import { createKey, expiryProblem, keyStatus, listKeys, revokeKey } from '../keys/keys.service.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { GithubAccount, GithubRepo } from '../github/github.entity.js';
import { isUuid } from '../kernel/ids.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UsageError, type Values } from './usage.js';
import { withPasswordThread } from '../users/password-thread.js';
import type { PasswordCheck } from '../users/password-policy.js';

function presentKey(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    last4: key.last4,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    status: keyStatus(key),
  };
}

function need(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** The command's embedded buffer cache: it reads a few rows and ends, and a small cache sets up fast. */
export const CLI_SHARED_BUFFERS = '16MB';

export async function withDatabase<T>(command: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase({
    // The same way to the database as the server's: through its pooler, with its statement setting.
    ...databaseSettings(config),
    command: `shipyard ${command}`,
    poolMax: 2,
    embeddedSharedBuffers: CLI_SHARED_BUFFERS,
    // `migrate` applies what is pending; the other commands do as the server does (MIGRATE_ON_START).
    migrate: command === 'migrate' || config.migrateOnStart,
    refusePending: true,
  });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

export async function usersCreate(values: Values) {
  const password = values.password as string | undefined;
  const create = (checkPassword?: PasswordCheck) =>
    withDatabase('users create', async (db) => {
      const user = await createUser(
        db.orm.em.fork(),
        {
          username: need(values, 'username'),
          email: need(values, 'email'),
          password,
          displayName: values['display-name'] as string | undefined,
          admin: values.admin === true,
          skills: typeof values.skills === 'string' ? values.skills.split(',') : undefined,
        },
        checkPassword,
      );
      return {
        id: user.id,
        username: user.username,
        email: user.email,
        displayName: user.displayName,
        skills: user.skills,
        admin: user.isAdmin,
        canSignIn: user.passwordHash !== null,
        ...(user.passwordHash === null
          ? {
              note: `No password was given: ${user.username} cannot sign in to the web application until 'shipyard users set-password --username ${user.username}' sets one. Keys from 'shipyard keys create' work meanwhile.`,
            }
          : {}),
      };
    });
  return password === undefined ? create() : withPasswordThread(create);
}

/** The new password: piped on stdin (one line), or typed at a prompt that does not echo it. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    let text = '';
    for await (const chunk of process.stdin) text += chunk;
    return text.replace(/\r?\n$/, '');
  }
  // A prompt in raw mode: each key is read as it is typed and nothing is echoed.
  process.stderr.write('New password: ');
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (keys: string) => {
        for (const key of keys) {
          if (key === '\r' || key === '\n') {
            stdin.off('data', onData);
            return resolve(typed);
          }
          if (key === '\u0003') {
            stdin.off('data', onData);
            return reject(new UsageError('cancelled'));
          }
          typed = key === '\u007f' || key === '\b' ? typed.slice(0, -1) : typed + key;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write('\n');
  }
}

export async function usersSetPassword(values: Values) {
  const username = need(values, 'username');
  // The thread starts before the prompt: zxcvbn loads while the password is typed.
  return withPasswordThread(async (checkPassword) => {
    const password = await readPassword();
    if (!password) throw new UsageError('no password given: pipe it on stdin or type it at the prompt');
    return withDatabase('users set-password', async (db) => {
      const user = await setPassword(db.orm.em.fork(), username, password, checkPassword);
      return {
        username: user.username,
        canSignIn: true,
        note: 'Password set; every web session of this account has ended.',
      };
    });
  });
}

export async function setDisabled(values: Values, disabled: boolean) {
  const username = need(values, 'username');
  return withDatabase(`users ${disabled ? 'disable' : 'enable'}`, async (db) => {
    const user = await setAccountDisabled(db.orm.em.fork(), username, disabled);
    return { username: user.username, disabledAt: user.disabledAt?.toISOString() ?? null };
  });
}

export async function keysCreate(values: Values) {
  const username = need(values, 'username');
  const scopes = need(values, 'scopes')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const given = need(values, 'expires-in-days');
  const maxDays = loadConfig().keyMaxDays;
  const days = /^\d+$/.test(given) ? Number(given) : Number.NaN;
  const problem = expiryProblem({ expiresInDays: days, maxDays });
  if (problem) throw new UsageError(`--expires-in-days '${given}': ${problem}`);
  return withDatabase('keys create', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    const { key, token } = await createKey(em, {
      userId: user.id,
      name: (values.name as string | undefined) ?? 'CLI key',
      scopes,
      expiresInDays: days,
      maxDays,
    });
    return { ...presentKey(key), username: user.username, token, note: 'The token is shown once; store it now.' };
  });
}

export async function keysList(values: Values) {
  const username = need(values, 'username');
  return withDatabase('keys list', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    return (await listKeys(em, user.id)).map(presentKey);
  });
}

export async function keysRevoke(values: Values) {
  const id = need(values, 'id');
  if (!isUuid(id)) throw new UsageError('--id must be a key id (a UUID, from keys list)');
  return withDatabase('keys revoke', async (db) => presentKey(await revokeKey(db.orm.em.fork(), id)));
}

export async function githubLink(values: Values) {
  const username = need(values, 'username');
  const login = need(values, 'login');
  const { linkGithub } = await import('../github/github.proof.js');
  return withDatabase('github link', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    const account = await linkGithub(em, user.id, login);
    return {
      username: user.username,
      login: account.login,
      verified: account.verifiedAt !== null,
      ...(account.verifiedAt
        ? { note: 'Run `shipyard github sync` to fetch the data now.' }
        : {
            code: account.challenge,
            note: `The login is unverified. Its owner adds the code to their GitHub bio, then runs \`shipyard github verify --username ${user.username}\` (or chooses Verify in Settings → GitHub).`,
          }),
    };
  });
}

export async function githubVerify(values: Values) {
  const username = need(values, 'username');
  const config = loadConfig();
  const [{ GithubClient }, { verifyGithub }] = await Promise.all([
    import('../github/github.client.js'),
    import('../github/github.proof.js'),
  ]);
  const client = new GithubClient({ baseUrl: config.githubApiUrl, token: config.githubToken });
  return withDatabase('github verify', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    const result = await verifyGithub(em, client, user.id);
    if (!result.verified) throw notVerified(result.reason);
    return { username: user.username, login: result.account.login, verified: true };
  });
}

export async function githubSync(values: Values) {
  const username = values.username as string | undefined;
  const config = loadConfig();
  // The GitHub client (Octokit and its response schemas) loads for the GitHub commands only.
  const [{ GithubClient }, { syncGithubAccount }] = await Promise.all([
    import('../github/github.client.js'),
    import('../github/github.sync.js'),
  ]);
  const client = new GithubClient({ baseUrl: config.githubApiUrl, token: config.githubToken });
  return withDatabase('github sync', async (db) => {
    const accounts = await accountsToSync(db.orm.em.fork(), username);
    const results = [];
    for (const a of accounts) {
      const synced = await syncGithubAccount(db.orm.em.fork(), client, a.id);
      const repos = await db.orm.em.fork().count(GithubRepo, { account: a.id });
      results.push({
        login: synced.login,
        status: synced.syncStatus,
        message: synced.syncMessage ?? null,
        repositories: repos,
        syncedAt: synced.syncedAt?.toISOString() ?? null,
      });
    }
    return results;
  });
}

/** The one user's proven account, or every proven account when no username is given. */
async function accountsToSync(em: EntityManager, username: string | undefined): Promise<GithubAccount[]> {
  if (!username) return em.find(GithubAccount, { verifiedAt: { $ne: null } });
  const user = await existingUser(em, username);
  const account = await em.findOne(GithubAccount, { user: user.id });
  if (!account)
    throw new ProblemError(
      404,
      'not-found',
      'Not found',
      `${username} has no linked GitHub account; run \`shipyard github link\` first.`,
    );
  if (!account.verifiedAt)
    throw notVerified(
      `${account.login} is not proven to be ${username}'s yet; run \`shipyard github verify --username ${username}\` once the code is in its GitHub bio.`,
    );
  return [account];
}

const notVerified = (detail: string) => new ProblemError(409, 'github-not-verified', 'Not verified', detail);

async function existingUser(em: EntityManager, username: string) {
  const user = await findUserByUsername(em, username);
  if (!user) throw new ProblemError(404, 'not-found', 'Not found', `There is no user named '${username}'.`);
  return user;
}

export const migrate = () => withDatabase('migrate', async (db) => ({ database: db.kind, applied: db.applied }));
export const usersDisable = (values: Values) => setDisabled(values, true);
export const usersEnable = (values: Values) => setDisabled(values, false);
