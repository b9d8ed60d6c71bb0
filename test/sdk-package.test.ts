/**
 * The SDK as an integrator gets it: `make sdk`'s tarball installed into a fresh project (no
 * registry needed: the package has no dependencies), type-checked there with `tsc --strict`, and
 * scripts in that project calling a listening server with real keys: typed errors, pagination,
 * retries (a dropped connection, a 429), idempotent creates, timeouts, and a key that never shows.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ts from 'typescript';
import { keyFor, raw, startServer, uniqueName, userWithKey, type TestServer } from './harness.js';
import { SCRIPTS, TYPED_USE } from './sdk-scripts.js';
import { contractWithDeprecatedVersions, DEPRECATED_AT, SUNSET } from './deprecated-contract.js';

// Asynchronous on purpose: the server under test runs in this process and must keep answering.
const run = promisify(execFile);

let t: TestServer;
let project: string;
let tarball: string;
beforeAll(async () => {
  t = await startServer();
  project = mkdtempSync(join(tmpdir(), 'shipyard-sdk-user-'));
  tarball = (await run(process.execPath, ['--import', 'tsx', 'codegen/sdk/build.ts'])).stdout
    .trim()
    .split('\n')
    .at(-1)!;
  expect(tarball).toMatch(/shipyard-sdk-\d+\.\d+\.\d+\.tgz$/);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: project });
  for (const [name, text] of Object.entries(SCRIPTS)) writeFileSync(join(project, name), text);
}, 180_000);
afterAll(async () => {
  await t?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** Runs one of the scripts in the integrator's project; returns the JSON it printed last. */
async function script(name: string, env: Record<string, string>): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, [name], { cwd: project, env: { ...process.env, ...env } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/** A plain HTTP proxy in front of a server, recording what it forwards, able to drop an answer. */
function proxy(target: string, dropAnswer: (method: string, path: string, n: number) => boolean) {
  const seen: { method: string; path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    seen.push({ method: req.method!, path: req.url!, headers: req.headers });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers.set(k, v);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const upstream = await fetch(new URL(req.url!, target), { method: req.method, headers, body });
    const answer = Buffer.from(await upstream.arrayBuffer());
    // The server has done the work and answered; the client never hears it.
    if (dropAnswer(req.method!, req.url!, seen.length)) return req.socket.destroy();
    res.writeHead(upstream.status, Object.fromEntries([...upstream.headers].filter(([k]) => k !== 'content-encoding')));
    res.end(answer);
  });
  return new Promise<{ url: string; seen: typeof seen; close: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        seen,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

describe('the SDK package', () => {
  it('type-checks under tsc --strict: typed data, errors, options and pagination; response needs no `!`', async () => {
    writeFileSync(join(project, 'use.ts'), TYPED_USE);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom', 'dom.iterable'],
          types: [],
        },
        files: ['use.ts'],
      }),
    );
    const tsc = join(process.cwd(), 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', '.'], { cwd: project }).catch((e) => e);
    expect(`${checked.stdout ?? ''}${checked.stderr ?? ''}`).toBe('');
  }, 60_000);

  it('works from a CommonJS TypeScript project (module: node16): it type-checks, compiles and runs', async () => {
    const cjs = mkdtempSync(join(tmpdir(), 'shipyard-cjs-'));
    try {
      writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'cjs-user', private: true }));
      await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: cjs });
      writeFileSync(
        join(cjs, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: 'node16',
            moduleResolution: 'node16',
            target: 'es2022',
            lib: ['es2022', 'dom'],
            types: [],
            outDir: 'out',
          },
          files: ['index.ts'],
        }),
      );
      writeFileSync(
        join(cjs, 'index.ts'),
        `import { createShipyard, ShipyardError } from '@shipyard/sdk';
declare const process: { env: Record<string, string> };
async function main(): Promise<void> {
  const shipyard = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY });
  const me = await shipyard.getCurrentUser({ throwOnError: true });
  const jobs = await shipyard.listJobs();
  console.log(JSON.stringify({ username: me.data.username, typed: jobs.error instanceof ShipyardError, scope: jobs.error?.requiredScope }));
}
void main();
`,
      );
      const tsc = join(process.cwd(), 'node_modules/typescript/bin/tsc');
      const checked = await run(process.execPath, [tsc, '-p', '.'], { cwd: cjs }).catch((e) => e);
      expect(`${checked.stdout ?? ''}${checked.stderr ?? ''}`).toBe('');
      expect(readFileSync(join(cjs, 'out/index.js'), 'utf8')).toContain('require("@shipyard/sdk")');
      const u = await userWithKey(t, ['profile.read']);
      const { stdout } = await run(process.execPath, ['out/index.js'], {
        cwd: cjs,
        env: { ...process.env, SHIPYARD_URL: t.baseUrl, SHIPYARD_API_KEY: u.token },
      });
      expect(JSON.parse(stdout)).toEqual({ username: u.user.username, typed: true, scope: 'jobs.read' });
    } finally {
      rmSync(cjs, { recursive: true, force: true });
    }
  }, 120_000);

  it("shows each method's summary and required scope on hover (the editor's quick info)", () => {
    const file = join(project, 'hover.ts');
    const text = [
      "import { createShipyard, paginate, type Milestone } from '@shipyard/sdk';",
      "const s = createShipyard({ baseUrl: 'https://x.example', apiKey: 'k' });",
      's.getProject;',
      'paginate;',
      'declare const m: Milestone;',
      'm.dueDate;',
      '',
    ].join('\n');
    const host: ts.LanguageServiceHost = {
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (f) => ts.ScriptSnapshot.fromString(f === file ? text : (ts.sys.readFile(f) ?? '')),
      getCurrentDirectory: () => project,
      getCompilationSettings: () => ({
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      }),
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
    };
    const service = ts.createLanguageService(host);
    const hover = (at: string) =>
      ts.displayPartsToString(service.getQuickInfoAtPosition(file, text.indexOf(at) + 2)?.documentation);
    const doc = hover('getProject;');
    expect(doc).toContain('Get a project');
    expect(doc).toContain('Required scope: `projects.read`');
    expect(hover('paginate;')).toMatch(/^Every item of a cursor-paginated list/);
    // A field the contract gives by reference carries words of its own.
    expect(hover('dueDate;')).toBe('The day the milestone is due (its target date), or null.');
  });

  it("knows a problem by its code or its type's slug, in today's form and in the absolute one servers before 1.3.0 sent", async () => {
    expect(await script('is.mjs', {})).toEqual({
      reference: true,
      absolute: true,
      other: false,
      elsewhere: false,
      code: 'roadmap-full',
      byCode: true,
      byType: true,
      otherCode: false,
      codeIsNotType: true,
    });
  });

  it("runs the README's start exactly as shown: npm init -y, the install, node app.mjs", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### The specification and the SDK'));
    const commands = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    expect(commands).toContain('npm init -y');
    expect(commands).toContain('node app.mjs');
    const app = /```js\n\/\/ app\.mjs\n([\s\S]*?)```/.exec(section)![1]!;
    const fresh = mkdtempSync(join(tmpdir(), 'shipyard-readme-'));
    try {
      await run('npm', ['init', '-y'], { cwd: fresh });
      await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: fresh });
      writeFileSync(join(fresh, 'app.mjs'), app);
      const owner = await userWithKey(t, ['projects.read', 'projects.write']);
      const { stdout } = await run(process.execPath, ['app.mjs'], {
        cwd: fresh,
        env: { ...process.env, KEY: owner.token, SHIPYARD_URL: t.baseUrl },
      });
      expect(stdout).toBe('403 jobs.read\nDifference Engine true\n');
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 120_000);

  it('calls request and response hooks on each attempt, and writes debug lines that never hold the key', async () => {
    const u = await userWithKey(t, ['profile.read', 'projects.read']);
    const out = await script('hooks.mjs', { SHIPYARD_URL: t.baseUrl, SHIPYARD_API_KEY: u.token });
    expect(out.requests).toEqual([
      { operation: 'GET /users/me', attempt: 1 },
      { operation: 'GET /projects/{projectId}', attempt: 1 },
    ]);
    expect(out.responses).toEqual([
      {
        operation: 'GET /users/me',
        attempt: 1,
        url: `${t.apiUrl}/users/me`,
        status: 200,
        durationMs: 'number',
        requestId: expect.any(String),
      },
      {
        operation: 'GET /projects/{projectId}',
        attempt: 1,
        url: `${t.apiUrl}/projects/0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10`,
        status: 404,
        durationMs: 'number',
        requestId: expect.any(String),
      },
    ]);
    expect(out.lines).toHaveLength(4);
    expect(out.lines[0]).toBe('shipyard → GET /users/me (attempt 1)');
    expect(out.lines[3]).toMatch(/^shipyard ← 404 GET \/projects\/\{projectId\} in \d+ ms \(X-Request-Id .+\)$/);
    expect(out.printed).toHaveLength(2);
    expect(out.leaked).toEqual([]);
  }, 60_000);

  it('tells once per operation that it is deprecated, through a hook the integrator can replace', async () => {
    const deprecated = await startServer({ contract: contractWithDeprecatedVersions() });
    try {
      const u = await userWithKey(deprecated, ['content.read']);
      const out = await script('deprecation.mjs', { SHIPYARD_URL: deprecated.baseUrl, SHIPYARD_API_KEY: u.token });
      const link = `${deprecated.baseUrl}/docs/changes#deprecate-getVersions`;
      expect(out.notices).toEqual([
        {
          operation: 'GET /platform/versions',
          since: new Date(DEPRECATED_AT).toISOString(),
          sunset: new Date(SUNSET).toISOString(),
          link,
        },
      ]);
      expect(out.warnings).toEqual([
        `Shipyard SDK: GET /platform/versions is deprecated since 2026-11-01 and may stop working after 2027-06-01. What to use instead: ${link}`,
      ]);
      expect(out.refused).toMatch(/onDeprecation must be a function/);
    } finally {
      await deprecated.close();
    }
  }, 60_000);

  it('answers every error status with a typed ShipyardError, and never shows the key', async () => {
    const ada = await userWithKey(t, ['profile.read', 'projects.read', 'projects.write']);
    const slug = uniqueName();
    const out = await script('errors.mjs', { SHIPYARD_URL: t.baseUrl, SHIPYARD_API_KEY: ada.token, SLUG: slug });
    expect(out.leaks).toEqual([]);
    expect(out.me).toBe(ada.user.username);
    const problem = (slugName: string) => `/problems/${slugName}`;
    expect(out.errors[400]).toMatchObject({ name: 'ShipyardError', status: 400, type: problem('validation') });
    expect(out.errors[400].errors.length).toBeGreaterThan(0);
    expect(out.errors[401]).toMatchObject({ status: 401, type: problem('invalid-token') });
    expect(out.errors[403]).toMatchObject({
      status: 403,
      type: problem('insufficient-scope'),
      requiredScope: 'jobs.read',
      grantedScopes: ['profile.read', 'projects.read', 'projects.write'],
    });
    expect(out.errors[404]).toMatchObject({ status: 404, type: problem('not-found'), is: true });
    expect(out.errors[409]).toMatchObject({ status: 409, type: problem('conflict') });
    for (const e of Object.values(out.errors) as Record<string, any>[]) {
      expect(e.instanceOf).toBe(true);
      expect(e.message).toBe(`${e.title}: ${e.detail}`);
      expect(e.requestId).toMatch(/\S/);
      expect(e.stack).toContain('ShipyardError');
    }
    // Without throwOnError the same error comes back in place, with its response.
    expect(out.inPlace).toEqual({ status: 403, isShipyardError: true, requiredScope: 'jobs.read' });
  }, 60_000);

  it('refuses to start without an absolute baseUrl or a key, with a clear message', async () => {
    const out = await script('setup.mjs', {});
    expect(out.noBaseUrl).toMatch(/baseUrl must be the server's absolute URL/);
    expect(out.relative).toMatch(/baseUrl must be the server's absolute URL/);
    expect(out.noKey).toMatch(/apiKey is missing/);
    expect(out.notAKey).toMatch(/apiKey is not a Shipyard key/);
    expect(out.notAKey).not.toContain('hunter2');
    expect(out.brokenKey).toMatch(/apiKey is not a Shipyard key/);
    expect(out.brokenKey).not.toContain('SECRET');
    expect(out.badTimeout).toMatch(/timeoutMs must be a whole number from 0 to 2147483647/);
    expect(out.noClient).toMatch(/no server configured/);
  });

  it('reads the public feeds without a key (apiKey: null): Atom as text, a 304 as a ShipyardError, a keyed call a 401', async () => {
    const ada = await userWithKey(t, ['projects.read', 'projects.write']);
    const created = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: uniqueName('Feeds') } });
    const out = await script('feeds.mjs', { SHIPYARD_URL: t.baseUrl, PROJECT: created.json.id });
    expect(out.atomType).toBe('string');
    expect(out.atomStart).toContain('<feed xmlns="http://www.w3.org/2005/Atom"');
    expect(out.notModified).toEqual({ status: 304, error: 304, data: null });
    expect(out.jsonTitle).toBe(created.json.name);
    expect(out.directType).toBe('string');
    expect(out.keyed.status).toBe(401);
    expect(out.anyAuthorization).toBe(false);
  });

  it('pages to the end of a list of more than two pages, and stops at maxItems', async () => {
    const ada = await userWithKey(t, ['projects.read', 'projects.write']);
    const out = await script('paginate.mjs', { SHIPYARD_URL: t.baseUrl, SHIPYARD_API_KEY: ada.token });
    expect(out.created).toBe(12);
    expect(out.all).toEqual(out.createdTitles);
    expect(out.pagesFetched).toBe(3);
    expect(out.capped).toEqual(out.createdTitles.slice(0, 7));
    expect(out.cappedPagesFetched).toBe(2);
    expect(out.functionStyle).toBe(12);
  }, 60_000);

  it('retries a create whose answer was lost with the same Idempotency-Key: it happens once', async () => {
    const ada = await userWithKey(t, ['projects.read', 'projects.write']);
    const front = await proxy(
      t.baseUrl,
      (method, path, n) => method === 'POST' && path.endsWith('/projects') && n === 1,
    );
    try {
      const name = `Once ${uniqueName()}`;
      const ownKey = `order-${uniqueName()}`;
      const out = await script('dropped.mjs', {
        SHIPYARD_URL: front.url,
        SHIPYARD_API_KEY: ada.token,
        NAME: name,
        NAME2: `${name} again`,
        OWN_KEY: ownKey,
      });
      expect(out).toMatchObject({ status: 201, replayed: 'true', named: 1, ownReplayed: 'true', ownNamed: 1 });
      const posts = front.seen.filter((s) => s.method === 'POST');
      expect(posts).toHaveLength(4);
      expect(posts.slice(2).map((p) => p.headers['idempotency-key'])).toEqual([ownKey, ownKey]);
      expect(posts[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
      expect(posts[0]!.headers['user-agent']).toMatch(
        /^shipyard-sdk-typescript\/\d+\.\d+\.\d+ \(api \d+\.\d+\.\d+; node v/,
      );
      expect(posts[0]!.headers.authorization).toBe(`Bearer ${ada.token}`);
    } finally {
      await front.close();
    }
  }, 60_000);

  it("waits out a 429's Retry-After and then succeeds; with retries off the 429 is a typed error", async () => {
    const limited = await startServer({ rateLimitPerMinute: 2, rateLimitWindowMs: 2_000 });
    try {
      const ada = await userWithKey(limited, ['profile.read']);
      const out = await script('rate-limited.mjs', { SHIPYARD_URL: limited.baseUrl, SHIPYARD_API_KEY: ada.token });
      expect(out.refused).toMatchObject({ status: 429, type: '/problems/rate-limited' });
      expect(out.refused.retryAfter).toBeGreaterThanOrEqual(1);
      expect(out.statuses).toEqual([200, 200, 429, 200]);
      expect(out.waitedMs).toBeGreaterThanOrEqual(out.retryAfterS * 1000 - 50);
      expect(out.answered).toBe(true);
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('times out on a server that never answers, as a network error (not a problem), after its retries', async () => {
    const sockets: Socket[] = [];
    const silent: TcpServer = createTcpServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as AddressInfo).port;
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    try {
      const token = await keyFor(t, (await userWithKey(t, ['profile.read'])).user.id, ['profile.read']);
      const out = await script('timeout.mjs', {
        SHIPYARD_URL: `http://127.0.0.1:${port}`,
        CLOSED_URL: `http://127.0.0.1:${closedPort}`,
        SHIPYARD_API_KEY: token,
      });
      expect(out.once).toMatchObject({ name: 'ShipyardTimeoutError', network: true, problem: false, timeoutMs: 200 });
      expect(out.once.attempts).toBe(1);
      expect(out.retried).toMatchObject({ name: 'ShipyardTimeoutError', attempts: 3 });
      expect(out.inPlace).toMatchObject({ name: 'ShipyardTimeoutError' });
      expect(out.aborted).toEqual({ message: 'the caller gave up', network: false });
      expect(out.refused).toMatchObject({ name: 'ShipyardNetworkError', network: true, problem: false });
      expect(out.refused.url).toBe(`http://127.0.0.1:${closedPort}/api/v1/users/me`);
      expect(out.refused.message).toMatch(/ECONNREFUSED/);
      expect(out.leaks).toEqual([]);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  }, 60_000);
});
