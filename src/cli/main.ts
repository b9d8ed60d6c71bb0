/**
 * The operator CLI: `npx shipyard <command>`. JSON on stdout; on error a message on stderr and
 * a non-zero exit (2 for a usage mistake, 1 otherwise). It reaches the database directly, so
 * it runs on the server host only; it is never reachable over the network.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { DatabaseLockedError } from '../db/lock.js';
import { ProblemError } from '../http/problem.js';
import { createUser, setAccountDisabled, findUserByUsername, setPassword } from '../users/users.service.js';
import { createKey, keyStatus, listKeys, revokeKey } from '../keys/keys.service.js';
import type { ApiKey } from '../keys/api-key.entity.js';
import { serve } from '../main.js';
import { GithubClient } from '../github/github.client.js';
import { linkGithub, syncGithubAccount } from '../github/github.sync.js';
import { GithubAccount, GithubRepo } from '../github/github.entity.js';
import { SCOPE_IDS } from '../keys/scopes.js';
import { isUuid } from '../http/ids.js';
import type { EntityManager } from '@mikro-orm/postgresql';

class UsageError extends Error {}

/** What `help` prints: plain text, not JSON. */
class HelpText {
  constructor(readonly text: string) {}
}

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

async function withDatabase<T>(command: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    command: `shipyard ${command}`,
    poolMax: 2,
  });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

type Values = Record<string, string | boolean | undefined>;
type Command = { usage: string; run: (values: Values) => Promise<unknown> };

const OPTIONS = {
  username: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'display-name': { type: 'string' },
  admin: { type: 'boolean' },
  scopes: { type: 'string' },
  'expires-in-days': { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  login: { type: 'string' },
  skills: { type: 'string' },
} as const;

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve                                   start the HTTP server (same as make run)',
    run: serveCommand,
  },
  migrate: {
    usage: 'migrate                                 apply pending database migrations',
    run: () => withDatabase('migrate', async (db) => ({ database: db.kind, applied: db.applied })),
  },
  'users create': {
    usage: 'users create --username U --email E [--password P] [--display-name N] [--skills a,b] [--admin]',
    run: usersCreate,
  },
  'users set-password': {
    usage: 'users set-password --username U         read a new password from stdin (or a prompt); ends their sessions',
    run: usersSetPassword,
  },
  'users disable': {
    usage: "users disable --username U              refuse the account's sign-ins and keys, on every instance at once",
    run: (values) => setDisabled(values, true),
  },
  'users enable': { usage: 'users enable --username U', run: (values) => setDisabled(values, false) },
  'keys create': { usage: 'keys create --username U --scopes a,b --expires-in-days N [--name NAME]', run: keysCreate },
  'keys list': { usage: 'keys list --username U', run: keysList },
  'keys revoke': { usage: 'keys revoke --id ID', run: keysRevoke },
  'github link': { usage: 'github link --username U --login GITHUB_LOGIN', run: githubLink },
  'github sync': {
    usage: 'github sync [--username U]              sync now (every linked account when no --username)',
    run: githubSync,
  },
};

const USAGE = `Usage: shipyard <command> [options]

${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}
  help [command]                          this text, or one command's

Environment: DATABASE_URL (PostgreSQL; default: the embedded database under DATA_DIR, ./.data),
GITHUB_API_URL and GITHUB_TOKEN (github sync).
Scopes: ${SCOPE_IDS.join(' ')}`;

async function serveCommand(): Promise<undefined> {
  await serve();
  return undefined;
}

async function usersCreate(values: Values) {
  return withDatabase('users create', async (db) => {
    const user = await createUser(db.orm.em.fork(), {
      username: need(values, 'username'),
      email: need(values, 'email'),
      password: values.password as string | undefined,
      displayName: values['display-name'] as string | undefined,
      admin: values.admin === true,
      skills: typeof values.skills === 'string' ? values.skills.split(',') : undefined,
    });
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

async function usersSetPassword(values: Values) {
  const username = need(values, 'username');
  const password = await readPassword();
  if (!password) throw new UsageError('no password given: pipe it on stdin or type it at the prompt');
  return withDatabase('users set-password', async (db) => {
    const user = await setPassword(db.orm.em.fork(), username, password);
    return {
      username: user.username,
      canSignIn: true,
      note: 'Password set; every web session of this account has ended.',
    };
  });
}

async function setDisabled(values: Values, disabled: boolean) {
  const username = need(values, 'username');
  return withDatabase(`users ${disabled ? 'disable' : 'enable'}`, async (db) => {
    const user = await setAccountDisabled(db.orm.em.fork(), username, disabled);
    return { username: user.username, disabledAt: user.disabledAt?.toISOString() ?? null };
  });
}

async function keysCreate(values: Values) {
  const username = need(values, 'username');
  const scopes = need(values, 'scopes')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const days = Number(need(values, 'expires-in-days'));
  return withDatabase('keys create', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    const { key, token } = await createKey(em, {
      userId: user.id,
      name: (values.name as string | undefined) ?? 'CLI key',
      scopes,
      expiresInDays: days,
    });
    return { ...presentKey(key), username: user.username, token, note: 'The token is shown once; store it now.' };
  });
}

async function keysList(values: Values) {
  const username = need(values, 'username');
  return withDatabase('keys list', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    return (await listKeys(em, user.id)).map(presentKey);
  });
}

async function keysRevoke(values: Values) {
  const id = need(values, 'id');
  if (!isUuid(id)) throw new UsageError('--id must be a key id (a UUID, from keys list)');
  return withDatabase('keys revoke', async (db) => presentKey(await revokeKey(db.orm.em.fork(), id)));
}

async function githubLink(values: Values) {
  const username = need(values, 'username');
  const login = need(values, 'login');
  return withDatabase('github link', async (db) => {
    const em = db.orm.em.fork();
    const user = await existingUser(em, username);
    const account = await linkGithub(em, user.id, login);
    return {
      username: user.username,
      login: account.login,
      syncStatus: account.syncStatus,
      note: 'Run `shipyard github sync` to fetch the data now.',
    };
  });
}

async function githubSync(values: Values) {
  const username = values.username as string | undefined;
  const config = loadConfig();
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

/** The one user's linked account, or every linked account when no username is given. */
async function accountsToSync(em: EntityManager, username: string | undefined): Promise<GithubAccount[]> {
  if (!username) return em.find(GithubAccount, {});
  const user = await existingUser(em, username);
  const account = await em.findOne(GithubAccount, { user: user.id });
  if (!account)
    throw new ProblemError(
      404,
      'not-found',
      'Not found',
      `${username} has no linked GitHub account; run \`shipyard github link\` first.`,
    );
  return [account];
}

async function existingUser(em: EntityManager, username: string) {
  const user = await findUserByUsername(em, username);
  if (!user) throw new ProblemError(404, 'not-found', 'Not found', `There is no user named '${username}'.`);
  return user;
}

/** `help`, `--help`, `-h`: the usage on stdout; `help <command>`: that command's line. */
function help(topic: string[]): string {
  const name = topic.join(' ');
  if (!name) return USAGE;
  const matching = Object.entries(COMMANDS).filter(([key]) => key === name || key.startsWith(`${name} `));
  if (matching.length === 0) throw new UsageError(`unknown command '${name}'`);
  return `Usage: shipyard ${matching.map(([, c]) => c.usage).join('\n       shipyard ')}`;
}

async function run(argv: string[]): Promise<unknown> {
  const [cmd, sub] = argv;
  if (cmd === 'help' || cmd === '--help' || cmd === '-h') return new HelpText(help(argv.slice(1)));
  const grouped = cmd === 'users' || cmd === 'keys' || cmd === 'github';
  const name = grouped ? `${cmd} ${sub ?? ''}`.trim() : (cmd ?? '');
  const command = COMMANDS[name];
  if (!command) throw new UsageError(cmd ? `unknown command '${name}'` : 'no command given');
  if (argv.includes('--help') || argv.includes('-h')) return new HelpText(help(name.split(' ')));
  const { values } = parseArgs({ args: argv.slice(grouped ? 2 : 1), strict: true, options: OPTIONS });
  return command.run(values);
}

run(process.argv.slice(2)).then(
  (out) => {
    if (out instanceof HelpText) process.stdout.write(`${out.text}\n`);
    else if (out !== undefined) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  },
  (err: Error) => {
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith?.('ERR_PARSE_ARGS')) {
      process.stderr.write(`shipyard: ${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    const message =
      err instanceof ProblemError || err instanceof DatabaseLockedError ? err.message : `${err.name}: ${err.message}`;
    process.stderr.write(`shipyard: ${message}\n`);
    process.exit(1);
  },
);
