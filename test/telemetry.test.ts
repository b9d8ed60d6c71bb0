/**
 * OpenTelemetry as an operator turns it on: the built server (`bin/shipyard serve`) started with
 * the SDK's standard variables and METRICS_PORT, exporting to an OTLP/HTTP receiver in this
 * process. It proves the spans (a REST request named by its route template, an MCP tool call by
 * its tool, the database statements under them, a webhook delivery in the trace of the write
 * that caused it), a caller's `traceparent` continued into a problem's `traceId`, and the
 * Prometheus exposition: route templates, and no id, key or user in any label.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { databaseOfItsOwn, freePort, ownProcessEnv } from './harness.js';
import { hashToken } from '../src/keys/tokens.js';
import { openDatabase } from '../src/db/database.js';
import { SecurityEvent } from '../src/security-log/security-event.entity.js';

type Attribute = { key: string; value: Record<string, unknown> };
type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Attribute[];
};

const STARTING_MS = 120_000;

/** An OTLP/HTTP receiver (http/json): every span it was sent. */
class Receiver {
  spans: Span[] = [];
  metricNames = new Set<string>();
  #server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const doc = JSON.parse(body || '{}');
      if (req.url === '/v1/traces')
        for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) this.spans.push(...ss.spans);
      if (req.url === '/v1/metrics')
        for (const rm of doc.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) this.metricNames.add(m.name);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  async listen(): Promise<number> {
    const port = await freePort();
    await new Promise<void>((r) => this.#server.listen(port, '127.0.0.1', r));
    return port;
  }
  close() {
    this.#server.close();
  }
}

const attr = (span: Span, key: string): unknown => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

async function until<T>(find: () => T | undefined, ms = 15_000): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bin/shipyard', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('OpenTelemetry, configured by the standard variables', () => {
  const receiver = new Receiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'shipyard-otel-'));
  let server: ChildProcess | undefined;
  let log = '';
  let api = '';
  let metricsUrl = '';
  let token = '';
  let env: NodeJS.ProcessEnv = {};
  let dropDatabase = async () => {};
  const username = `otel${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const own = await databaseOfItsOwn('otel');
    dropDatabase = own.drop;
    const [receiverPort, port, metricsPort] = [await receiver.listen(), await freePort(), await freePort()];
    env = {
      ...ownProcessEnv(port, dataDir),
      WEBHOOK_ALLOW_LOCAL_URLS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'shipyard-under-test',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
      METRICS_PORT: String(metricsPort),
      // Low, so that a few bad keys make a 429 for the rate-limit metric.
      FAILED_AUTH_PER_MINUTE: '2',
    };
    if (own.databaseUrl) env.DATABASE_URL = own.databaseUrl;
    else delete env.DATABASE_URL;
    const user = await run(['users', 'create', '--username', username, '--email', `${username}@example.test`], env);
    expect(user.stderr).toBe('');
    const key = await run(
      ['keys', 'create', '--username', username, '--scopes', 'projects.read,projects.write', '--expires-in-days', '7'],
      env,
    );
    token = JSON.parse(key.stdout).token;
    server = spawn('bin/shipyard', ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stderr!.on('data', (d) => (log += d));
    await until(() => log.includes('shipyard listening') || undefined, STARTING_MS);
    expect(log).toContain('shipyard listening');
    api = `http://127.0.0.1:${port}/api/v1`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  }, STARTING_MS + 30_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    receiver.close();
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${api}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    });

  it('continues a caller’s trace: a 404 names its trace id, and its span is named by the route template', async () => {
    const trace = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await call(`/projects/${randomUUID()}`, { headers: { traceparent: `00-${trace}-${parent}-01` } });
    expect(res.status).toBe(404);
    const problem = await res.json();
    expect(problem).toMatchObject({
      code: 'unknown-project',
      traceId: trace,
      requestId: res.headers.get('x-request-id'),
    });
    const span = await until(() => receiver.spans.find((s) => s.traceId === trace && s.kind === 2));
    expect(span).toMatchObject({ name: 'GET /api/v1/projects/{projectId}', parentSpanId: parent });
    expect(attr(span!, 'http.route')).toBe('/api/v1/projects/{projectId}');
    expect(attr(span!, 'http.response.status_code')).toBe(404);
    // Its log line carries the same trace id (log lines go out in batches, a tenth of a second apart at most).
    const traced = new RegExp(`"traceId":"${trace}"`);
    await until(() => traced.test(log) || undefined);
    expect(log).toMatch(traced);
  });

  it('keeps a request in its trace when its chunked body ends only after the pipeline began', async () => {
    const trace = randomBytes(16).toString('hex');
    // Warm: the request below must find the pipeline waiting for its body, not still authenticating.
    await call(`/projects/${randomUUID()}`, { method: 'DELETE' });
    const sent = request(`${api}/projects/${randomUUID()}`, {
      method: 'DELETE',
      headers: {
        authorization: `Bearer ${token}`,
        traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01`,
        'transfer-encoding': 'chunked',
      },
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) =>
      sent.on('response', resolve).on('error', reject),
    );
    sent.flushHeaders();
    // The empty body's last chunk, in a packet of its own once the request is under way.
    await new Promise((r) => setTimeout(r, 1000));
    sent.end();
    const res = await answered;
    let body = '';
    for await (const chunk of res) body += chunk;
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(body)).toMatchObject({ code: 'unknown-project', traceId: trace });
    const span = await until(() => receiver.spans.find((s) => s.traceId === trace && s.kind === 2));
    expect(span!.name).toBe('DELETE /api/v1/projects/{projectId}');
    // The statements that looked for the project are in the trace too.
    expect(receiver.spans.some((s) => s.traceId === trace && s.parentSpanId === span!.spanId)).toBe(true);
  });

  let writeTrace = '';
  it('traces a write with its statements', async () => {
    const res = await call('/projects', {
      method: 'POST',
      body: JSON.stringify({ name: 'Traced', slug: `traced-${randomBytes(3).toString('hex')}` }),
    });
    expect(res.status).toBe(201);
    const project = await res.json();
    const server = await until(() =>
      receiver.spans.find(
        (s) => s.kind === 2 && attr(s, 'http.route') === '/api/v1/projects' && s.name === 'POST /api/v1/projects',
      ),
    );
    expect(server).toBeDefined();
    const statements = await until(() => {
      const found = receiver.spans.filter(
        (s) => s.traceId === server!.traceId && attr(s, 'db.system.name') === 'postgresql',
      );
      return found.length ? found : undefined;
    });
    expect(statements!.length).toBeGreaterThan(0);
    expect(statements!.some((s) => String(attr(s, 'db.query.text')).toLowerCase().includes('insert'))).toBe(true);
    expect(project.id).toBeTruthy();
    writeTrace = server!.traceId;
  });

  it('delivers a webhook in the trace of the write that caused it, and passes the trace on to its receiver', async () => {
    const heard: string[] = [];
    const hook = createServer((req, res) => {
      heard.push(String(req.headers.traceparent ?? ''));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    const hookPort = await freePort();
    await new Promise<void>((r) => hook.listen(hookPort, '127.0.0.1', r));
    try {
      const project = await (
        await call('/projects', {
          method: 'POST',
          body: JSON.stringify({ name: 'Hooked', slug: `hooked-${randomBytes(3).toString('hex')}` }),
        })
      ).json();
      // A receiver's secret in its path and query: never exported.
      const subscribed = await call(`/projects/${project.id}/webhooks`, {
        method: 'POST',
        body: JSON.stringify({
          url: `http://127.0.0.1:${hookPort}/hook/receiver-secret-in-path?sig=receiver-secret-in-query`,
          events: ['milestone.created'],
        }),
      });
      expect(subscribed.status).toBe(201);
      const trace = randomBytes(16).toString('hex');
      const created = await call(`/projects/${project.id}/milestones`, {
        method: 'POST',
        headers: { traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01` },
        body: JSON.stringify({ title: 'Traced all the way' }),
      });
      expect(created.status).toBe(201);
      const delivery = await until(() =>
        receiver.spans.find((s) => s.traceId === trace && s.name === 'webhook deliver'),
      );
      expect(attr(delivery!, 'shipyard.webhook.event_type')).toBe('milestone.created');
      await until(() => (heard.some((h) => h.includes(trace)) ? true : undefined));
      expect(heard.find((h) => h.includes(trace))).toMatch(new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
      const post = await until(() =>
        receiver.spans.find((s) => s.parentSpanId === delivery!.spanId && s.name === 'POST'),
      );
      expect(attr(post!, 'url.full')).toBe(`http://127.0.0.1:${hookPort}`);
      expect(JSON.stringify(receiver.spans)).not.toContain('receiver-secret-in');
    } finally {
      hook.close();
    }
  });

  it('spans each MCP tool call, named by its tool, inside the request’s span', async () => {
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const res = await fetch(`${api}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_my_projects', arguments: {} },
      }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.result.isError ?? false).toBe(false);
    const tool = await until(() => receiver.spans.find((s) => s.name === 'tools/call list_my_projects'));
    expect(attr(tool!, 'gen_ai.tool.name')).toBe('list_my_projects');
    expect(attr(tool!, 'mcp.protocol.version')).toBe('2025-11-25');
    const request = receiver.spans.find((s) => s.spanId === tool!.parentSpanId);
    expect(request).toMatchObject({ name: 'POST /api/v1/mcp', kind: 2 });
    expect(attr(request!, 'mcp.method.name')).toBe('tools/call');
  });

  it('never exports a literal of a statement, nor a value sent in a query: no key hash, no token', async () => {
    await call('/projects??leaked=query-secret-value', {
      headers: { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` },
    });
    await until(() => receiver.spans.find((s) => s.traceId === 'ab'.repeat(16)));
    expect(JSON.stringify(receiver.spans)).not.toContain('query-secret-value');
    await until(() =>
      receiver.spans.some((s) => String(attr(s, 'db.query.text')).includes('token_hash')) ? true : undefined,
    );
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain(hashToken(token));
    expect(exported).not.toContain(token);
    expect(exported).not.toContain('shipyard_pat_');
  });

  it('serves Prometheus metrics on METRICS_PORT only, by route template, with no id, key or user in a label', async () => {
    for (let i = 0; i < 3; i++)
      await fetch(`${api}/projects`, { headers: { authorization: 'Bearer shipyard_pat_nope' } });
    expect(log).toContain(`Prometheus metrics at ${metricsUrl}`);
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^http_server_request_duration_bucket\{.*http_route="\/api\/v1\/projects\/\{projectId\}"/m);
    expect(text).toMatch(/^mcp_server_operation_duration_count\{.*gen_ai_tool_name="list_my_projects"/m);
    expect(text).toMatch(/^shipyard_key_cache_lookups_total\{/m);
    expect(text).toMatch(/^db_client_operation_duration_count\{/m);
    expect(text).toMatch(/^process_memory_usage/m);
    expect(text).toMatch(/^shipyard_rate_limit_refusals_total\{.*shipyard_budget="failed_auth"/m);
    expect(text).toMatch(/^shipyard_webhook_deliveries_total\{.*shipyard_outcome="delivered"/m);
    // Not by receiver: a subscriber chooses its host and port.
    expect(text).not.toMatch(/^http_client_request_duration/m);
    // Every request counted is named by its route; the scrapes are not counted.
    expect(
      text.split('\n').filter((l) => l.startsWith('http_server_request_duration_count{') && !l.includes('http_route=')),
    ).toEqual([]);
    // Every metric and label the dashboard and the alert rules (docs/telemetry/) query is one the server serves.
    const docs = ['docs/telemetry/grafana-dashboard.json', 'docs/telemetry/alerts.yml'].map((f) =>
      readFileSync(f, 'utf8'),
    );
    const queried = new Set(
      docs.flatMap(
        (d) => d.match(/\b(?:http_server|mcp_server|db_client|shipyard|nodejs|process|v8js)_[a-z0-9_]+/g) ?? [],
      ),
    );
    expect(queried.size).toBeGreaterThan(10);
    for (const name of queried)
      expect(text, name).toMatch(new RegExp(`^${name}(_bucket|_count|_sum)?[{ ]|[{,]${name}="`, 'm'));
    expect(text).toMatch(/^db_client_connection_count\{.*db_client_connection_state="used"/m);
    expect(text).toMatch(/^target_info\{.*service_name="shipyard-under-test"/m);
    expect(text).toMatch(/^nodejs_eventloop_delay_p99/m);
    // target_info describes the process (its instance id, its command line), once: not a metric's label.
    const series = text.split('\n').filter((line) => !line.startsWith('target_info'));
    const labels = series.flatMap((line) => [...line.matchAll(/="([^"]*)"/g)].map((m) => m[1]!));
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
    expect(labels.filter((v) => uuid.test(v) || v.includes(username) || v.includes('shipyard_pat_'))).toEqual([]);
    // Never on the public port.
    const publicPort = await fetch(api.replace('/api/v1', '/metrics'));
    expect(publicPort.headers.get('content-type')).not.toMatch(/^text\/plain; version=/);
    // And by OTLP too, since the variables ask for it.
    await until(() => (receiver.metricNames.has('http.server.request.duration') ? true : undefined));
    expect(receiver.metricNames).toContain('http.server.request.duration');
  });

  it('stops on SIGTERM with exit 0, and the write’s security-log entry keeps its trace id', async () => {
    const exited = new Promise<number | null>((r) => server!.once('exit', (code) => r(code)));
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    const db = await openDatabase({
      databaseUrl: env.DATABASE_URL,
      dataDir,
      command: 'the telemetry test',
      migrate: false,
      refusePending: true,
    });
    try {
      const entry = await db.orm.em.fork().findOne(SecurityEvent, { operation: 'createProject' });
      expect(entry?.traceId).toBe(writeTrace);
    } finally {
      await db.close();
    }
  });

  it(
    'says at start when METRICS_PORT is taken, and serves without metrics',
    async () => {
      // The port of the metrics is another process's now (the server above has stopped).
      const holder = createServer((_req, res) => res.end('someone else')).listen(
        Number(new URL(metricsUrl).port),
        '127.0.0.1',
      );
      await new Promise((r) => holder.once('listening', r));
      const again = spawn('bin/shipyard', ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      again.stderr!.on('data', (d) => (said += d));
      try {
        await until(() => said.includes('shipyard listening') || undefined, STARTING_MS);
        const started = said.split('\n').find((l) => l.includes('shipyard listening'))!;
        expect(JSON.parse(started).telemetry).toContain(`no Prometheus metrics (${metricsUrl} could not listen)`);
        expect(said).toContain('the metrics could not listen');
        expect((await fetch(`${api.replace('/api/v1', '')}/healthz`)).status).toBe(200);
      } finally {
        const exited = new Promise((r) => again.once('exit', r));
        again.kill('SIGTERM');
        await exited;
        holder.close();
      }
    },
    STARTING_MS + 30_000,
  );
});
