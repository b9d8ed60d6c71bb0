/**
 * The operator CLI as an operator runs it: a separate process, JSON on stdout, exit codes.
 * On the embedded database (a temporary DATA_DIR) unless DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueName } from './harness.js';
import { checkToken } from '../src/keys/tokens.js';
import { lockDirectory } from '../src/db/lock.js';
import { openDatabase } from '../src/db/database.js';
import { signIn } from '../src/sessions/sessions.service.js';
import { FakeGithub } from './fake-github.js';

const dataDir = mkdtempSync(join(tmpdir(), 'shipyard-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string | undefined> = {}, input?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; json: any }>((resolve) => {
    const child = spawn('bin/shipyard', args, {
      env: { ...process.env, DATA_DIR: dataDir, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      let json: any;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

// Each test runs several CLI commands in turn (bin/shipyard: a launcher, then the built JavaScript
// under V8 single-threaded), each opening the database: slow under CI's load.
describe('shipyard CLI', { timeout: 90_000 }, () => {
  const username = uniqueName('op');
  beforeAll(async () => {
    const migrate = await cli(['migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
  });

  it('creates a user, then refuses the same username', async () => {
    const res = await cli([
      'users',
      'create',
      '--username',
      username,
      '--email',
      `${username}@example.test`,
      '--password',
      'correct horse battery',
      '--skills',
      'TypeScript,rust',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toMatchObject({ username, admin: false, skills: ['typescript', 'rust'] });
    expect(res.stdout).not.toContain('correct horse');
    const again = await cli(['users', 'create', '--username', username, '--email', `other-${username}@example.test`]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is taken; choose another/);
    const weak = uniqueName('weak');
    const guessable = await cli([
      'users',
      'create',
      '--username',
      weak,
      '--email',
      `${weak}@example.test`,
      '--password',
      'passwordpassword123',
    ]);
    expect(guessable.code).toBe(1);
    expect(guessable.stderr).toMatch(/an attacker would try it early/);
  });

  it('says when a new account cannot sign in, and sets a password read from stdin', async () => {
    const name = uniqueName('nopw');
    const created = await cli(['users', 'create', '--username', name, '--email', `${name}@example.test`]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ username: name, canSignIn: false });
    expect(created.json.note).toContain(`shipyard users set-password --username ${name}`);

    const weak = await cli(['users', 'set-password', '--username', name], {}, 'short\n');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/at least/);
    // Long enough, but on every guessing list: zxcvbn's dictionaries (loaded on the command's
    // password thread) refuse it, as the sign-up form would.
    const guessable = await cli(['users', 'set-password', '--username', name], {}, 'passwordpassword123\n');
    expect(guessable.code).toBe(1);
    expect(guessable.stderr).toMatch(/an attacker would try it early/);
    const empty = await cli(['users', 'set-password', '--username', name], {}, '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no password given/);

    const set = await cli(['users', 'set-password', '--username', name], {}, 'velvet quasar lantern 71 umbrella\n');
    expect(set.code, set.stderr).toBe(0);
    expect(set.json).toMatchObject({ username: name, canSignIn: true });
    expect(set.stdout + set.stderr).not.toContain('quasar');
    const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, poolMax: 1 });
    try {
      expect((await signIn(db.orm.em.fork(), name, 'velvet quasar lantern 71 umbrella'))?.username).toBe(name);
      expect(await signIn(db.orm.em.fork(), name, 'short')).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('creates, lists and revokes keys; the token is shown once', async () => {
    const created = await cli([
      'keys',
      'create',
      '--username',
      username,
      '--scopes',
      'projects.read,content.write',
      '--expires-in-days',
      '30',
      '--name',
      'laptop',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(checkToken(created.json.token)).toEqual({ ok: true });
    expect(created.json).toMatchObject({
      name: 'laptop',
      scopes: ['content.write', 'projects.read'],
      status: 'active',
      last4: created.json.token.slice(-4),
    });
    const days = (Date.parse(created.json.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);

    const list = await cli(['keys', 'list', '--username', username]);
    expect(list.code).toBe(0);
    expect(list.json.map((k: { id: string }) => k.id)).toContain(created.json.id);
    expect(list.stdout).not.toContain(created.json.token);

    const revoked = await cli(['keys', 'revoke', '--id', created.json.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ id: created.json.id, status: 'revoked' });
  });

  it('refuses keys without an expiry, beyond 366 days, or with unknown scopes', async () => {
    /** `keys create` for the test's user with `scopes`, expiring in `days` (as typed). */
    const create = (days: string, scopes = 'projects.read', env?: Record<string, string>) =>
      cli(['keys', 'create', '--username', username, '--scopes', scopes, '--expires-in-days', days], env);
    const noExpiry = await cli(['keys', 'create', '--username', username, '--scopes', 'projects.read']);
    expect(noExpiry.code).toBe(2);
    expect(noExpiry.stderr).toMatch(/--expires-in-days is required/);
    const tooLong = await create('400');
    // A usage mistake, said as one: the range, and what was given.
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/--expires-in-days '400': .* from 1 to 366, not 400\./);
    const notANumber = await create('abc');
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toMatch(
      /--expires-in-days 'abc': A key expires in a whole number of days from 1 to 366\./,
    );
    // The operator's KEY_MAX_DAYS lowers it, here as on the web and through OAuth.
    const overOperator = await create('60', 'projects.read', { KEY_MAX_DAYS: '30' });
    expect(overOperator.code).toBe(2);
    expect(overOperator.stderr).toMatch(/from 1 to 30, not 60/);
    const badScope = await create('5', 'projects.read,admin');
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toMatch(/Unknown scope 'admin'/);
    const nobody = await cli([
      'keys',
      'create',
      '--username',
      'no-such-user',
      '--scopes',
      'projects.read',
      '--expires-in-days',
      '5',
    ]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/no user named/);
  });

  it('links a GitHub login and syncs it from GITHUB_API_URL', async () => {
    const gh = await new FakeGithub().start();
    try {
      gh.accounts.set('octo-op', {
        login: 'octo-op',
        repos: [
          {
            name: 'engine',
            language: 'TypeScript',
            stars: 3,
            pushedAt: '2026-11-01T00:00:00Z',
            languages: { TypeScript: 10 },
            weekly: [1],
          },
        ],
      });
      const link = await cli(['github', 'link', '--username', username, '--login', 'octo-op']);
      expect(link.code, link.stderr).toBe(0);
      expect(link.json).toMatchObject({ username, login: 'octo-op', verified: false });
      const refused = await cli(['github', 'sync', '--username', username], { GITHUB_API_URL: gh.url });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/github verify/);
      gh.accounts.get('octo-op')!.bio = link.json.code;
      const verified = await cli(['github', 'verify', '--username', username], { GITHUB_API_URL: gh.url });
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.json).toMatchObject({ login: 'octo-op', verified: true });
      const synced = await cli(['github', 'sync', '--username', username], { GITHUB_API_URL: gh.url });
      expect(synced.code, synced.stderr).toBe(0);
      expect(synced.json).toEqual([expect.objectContaining({ login: 'octo-op', status: 'ok', repositories: 1 })]);
      const bad = await cli(['github', 'link', '--username', username, '--login', 'no/slashes']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/is not a GitHub login/);
    } finally {
      await gh.stop();
    }
  });

  it('explains usage mistakes with exit code 2', async () => {
    const res = await cli(['keys', 'frobnicate']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown command 'keys frobnicate'/);
    expect(res.stderr).toMatch(/Usage: shipyard/);
    const serve = await cli(['serve', '--admin']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/serve takes no options/);
  });

  it("prints usage for help, --help and -h, and one command's usage for help <command>", async () => {
    for (const args of [['help'], ['--help'], ['-h']]) {
      const res = await cli(args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toMatch(/^Usage: shipyard <command>/);
      expect(res.stdout).toMatch(/keys revoke --id ID/);
      expect(res.stderr).toBe('');
    }
    const keys = await cli(['help', 'keys']);
    expect(keys.code).toBe(0);
    expect(keys.stdout.trim().split('\n')).toHaveLength(3);
    const create = await cli(['keys', 'create', '--help']);
    expect(create.stdout).toMatch(/^Usage: shipyard keys create --username U --scopes a,b/);
    const unknown = await cli(['help', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'says clearly that a running server holds the embedded database',
    async () => {
      const lock = lockDirectory(dataDir, 'shipyard serve');
      try {
        const res = await cli(['keys', 'list', '--username', username]);
        expect(res.code).toBe(1);
        expect(res.stderr).toMatch(/in use by another process \(pid \d+, shipyard serve\)/);
        // A command must reach the server's own database: no advice to take another directory.
        expect(res.stderr).toContain('Stop it first, then run the command again on the same directory');
        expect(res.stderr).not.toContain('DATA_DIR');
      } finally {
        lock.release();
      }
      expect((await cli(['keys', 'list', '--username', username])).code).toBe(0);
    },
  );
});
