/**
 * The programs test/sdk-package.test.ts writes into an integrator's project: plain ESM against
 * the installed @shipyard/sdk, each printing one JSON line of what it saw.
 */

const LEAKS = `
import { inspect } from 'node:util';
const key = process.env.SHIPYARD_API_KEY ?? '';
const secret = key.slice('shipyard_pat_'.length);
const leaks = [];
function checkLeaks(label, err) {
  const views = [String(err), err?.message, err?.stack, JSON.stringify(err), inspect(err, { showHidden: true, depth: 10 })];
  if (secret && views.some((v) => typeof v === 'string' && v.includes(secret))) leaks.push(label);
}
`;

const ERRORS = `
import { createShipyard, ShipyardError } from '@shipyard/sdk';
${LEAKS}
const shipyard = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: key });
const errors = {};
async function expectError(status, call) {
  try {
    await call();
    errors[status] = { thrown: false };
  } catch (e) {
    checkLeaks(status, e);
    errors[status] = {
      instanceOf: e instanceof ShipyardError, name: e.name, status: e.status, type: e.type, title: e.title,
      detail: e.detail, errors: e.errors, requiredScope: e.requiredScope, grantedScopes: e.grantedScopes,
      requestId: e.requestId, message: e.message, stack: e.stack, is: e.is('not-found'),
    };
  }
}
const me = await shipyard.getCurrentUser({ throwOnError: true });
await expectError(400, () => shipyard.createProject({ body: { name: 'x', color: 'red' }, throwOnError: true }));
const bogus = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: 'shipyard_pat_' + 'A'.repeat(38) });
await expectError(401, () => bogus.getCurrentUser({ throwOnError: true }));
await expectError(403, () => shipyard.listJobs({ throwOnError: true }));
await expectError(404, () => shipyard.getProject({ path: { projectId: '00000000-0000-4000-8000-000000000000' }, throwOnError: true }));
await shipyard.createProject({ body: { name: 'Twice', slug: process.env.SLUG }, throwOnError: true });
await expectError(409, () => shipyard.createProject({ body: { name: 'Twice', slug: process.env.SLUG }, throwOnError: true }));
const jobs = await shipyard.listJobs();
// A result is logged as a whole as often as an error: neither holds the request's Authorization header.
checkLeaks('inPlace', jobs);
checkLeaks('success', me);
const inPlace = { status: jobs.response.status, isShipyardError: jobs.error instanceof ShipyardError, requiredScope: jobs.error?.requiredScope };
console.log(JSON.stringify({ me: me.data.username, errors, inPlace, leaks }));
`;

const SETUP = `
import { createShipyard, getCurrentUser } from '@shipyard/sdk';
const message = async (f) => { try { await f(); return 'no error'; } catch (e) { return e.message; } };
console.log(JSON.stringify({
  noBaseUrl: await message(() => createShipyard({ apiKey: 'shipyard_pat_x' })),
  relative: await message(() => createShipyard({ baseUrl: '/api/v1', apiKey: 'shipyard_pat_x' })),
  noKey: await message(() => createShipyard({ baseUrl: 'http://127.0.0.1:9' })),
  notAKey: await message(() => createShipyard({ baseUrl: 'http://127.0.0.1:9', apiKey: 'hunter2' })),
  brokenKey: await message(() => createShipyard({ baseUrl: 'http://127.0.0.1:9', apiKey: 'shipyard_pat_SECRETSECRET\0' })),
  badTimeout: await message(() => createShipyard({ baseUrl: 'http://127.0.0.1:9', apiKey: 'shipyard_pat_' + 'a'.repeat(38), timeoutMs: Infinity })),
  noClient: await message(() => getCurrentUser()),
}));
`;

const PAGINATE = `
import { createShipyard, paginate, listMilestones } from '@shipyard/sdk';
let pages = 0;
const counting = (input, init) => {
  if (new URL(input.url ?? input).pathname.endsWith('/milestones') && (input.method ?? 'GET') === 'GET') pages++;
  return fetch(input, init);
};
const shipyard = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY, fetch: counting });
const { data: project } = await shipyard.createProject({ body: { name: 'Paged' }, throwOnError: true });
const createdTitles = [];
for (let i = 1; i <= 12; i++) {
  const { data } = await shipyard.createMilestone({ path: { projectId: project.id }, body: { title: 'Step ' + i }, throwOnError: true });
  createdTitles.push(data.title);
}
const all = [];
for await (const m of paginate(shipyard.listMilestones, { path: { projectId: project.id }, query: { limit: 5 } })) all.push(m.title);
const pagesFetched = pages;
pages = 0;
const capped = [];
for await (const m of paginate(shipyard.listMilestones, { path: { projectId: project.id }, query: { limit: 5 } }, { maxItems: 7 })) capped.push(m.title);
const cappedPagesFetched = pages;
let functionStyle = 0;
for await (const _ of paginate(listMilestones, { client: shipyard.client, path: { projectId: project.id }, query: { limit: 5 } })) functionStyle++;
console.log(JSON.stringify({ created: createdTitles.length, createdTitles, all, pagesFetched, capped, cappedPagesFetched, functionStyle }));
`;

const DROPPED = `
import { createShipyard } from '@shipyard/sdk';
const shipyard = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY });
const created = await shipyard.createProject({ body: { name: process.env.NAME }, throwOnError: true });
// The caller's own key, given as a Headers object, makes the same create safe across two runs.
const own = { body: { name: process.env.NAME2 }, headers: new Headers({ 'Idempotency-Key': process.env.OWN_KEY }), throwOnError: true };
await shipyard.createProject(own);
const again = await shipyard.createProject(own);
const mine = await shipyard.listProjects({ query: { owner: 'me', limit: 100 }, throwOnError: true });
console.log(JSON.stringify({
  status: created.response.status,
  replayed: created.response.headers.get('Idempotent-Replayed'),
  named: mine.data.items.filter((p) => p.name === process.env.NAME).length,
  ownReplayed: again.response.headers.get('Idempotent-Replayed'),
  ownNamed: mine.data.items.filter((p) => p.name === process.env.NAME2).length,
}));
`;

const FEEDS = `
import { createShipyard, getProjectAtomFeed } from '@shipyard/sdk';
const sent = [];
const recording = (input, init) => {
  const request = new Request(input, init);
  sent.push(request.headers.has('authorization'));
  return fetch(request);
};
const feeds = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: null, fetch: recording });
const path = { projectId: process.env.PROJECT };
const atom = await feeds.getProjectAtomFeed({ path, throwOnError: true });
const etag = atom.response.headers.get('etag');
const again = await feeds.getProjectAtomFeed({ path, headers: { 'If-None-Match': etag } });
const json = await feeds.getProjectJsonFeed({ path, throwOnError: true });
// The generated function, given the keyless client: the same text.
const direct = await getProjectAtomFeed({ client: feeds.client, path });
const keyed = await feeds.getCurrentUser();
console.log(JSON.stringify({
  atomType: typeof atom.data,
  atomStart: atom.data.slice(0, 200),
  notModified: { status: again.response.status, error: again.error?.status, data: again.data ?? null },
  jsonTitle: json.data.title,
  directType: typeof direct.data,
  keyed: { status: keyed.response.status, code: keyed.error?.code },
  anyAuthorization: sent.some(Boolean),
}));
`;

const RATE_LIMITED = `
import { createShipyard } from '@shipyard/sdk';
const statuses = [];
let refusedAt = 0;
let retriedAt = 0;
let retryAfterS = 0;
const watching = async (input, init) => {
  if (refusedAt && !retriedAt) retriedAt = Date.now();
  const response = await fetch(input, init);
  statuses.push(response.status);
  if (response.status === 429 && !refusedAt) { refusedAt = Date.now(); retryAfterS = Number(response.headers.get('Retry-After')); }
  return response;
};
const patient = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY, fetch: watching });
const impatient = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY, maxRetries: 0 });
await patient.getCurrentUser({ throwOnError: true });
await patient.getCurrentUser({ throwOnError: true });
const third = await patient.getCurrentUser({ throwOnError: true });
let refused;
for (let i = 0; i < 5 && !refused; i++) {
  try { await impatient.getCurrentUser({ throwOnError: true }); } catch (e) { refused = { status: e.status, type: e.type, retryAfter: e.retryAfter }; }
}
console.log(JSON.stringify({ statuses, waitedMs: retriedAt - refusedAt, retryAfterS, answered: Boolean(third.data.username), refused }));
`;

const TIMEOUT = `
import { createShipyard, ShipyardError, ShipyardNetworkError } from '@shipyard/sdk';
${LEAKS}
const describe = (e) => { checkLeaks(e?.name, e); return { name: e.name, network: e instanceof ShipyardNetworkError, problem: e instanceof ShipyardError, timeoutMs: e.timeoutMs, attempts: e.attempts, url: e.url, message: e.message }; };
const silent = createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: key, timeoutMs: 200, maxRetries: 0 });
let once, retried, inPlace, refused;
try { await silent.getCurrentUser({ throwOnError: true }); } catch (e) { once = describe(e); }
try { await silent.getCurrentUser({ throwOnError: true, maxRetries: 2, timeoutMs: 100 }); } catch (e) { retried = describe(e); }
try { await silent.getCurrentUser(); } catch (e) { inPlace = describe(e); }
let aborted;
const caller = new AbortController();
setTimeout(() => caller.abort(new Error('the caller gave up')), 100);
try { await silent.getCurrentUser({ signal: caller.signal, timeoutMs: 10_000, maxRetries: 2 }); } catch (e) { aborted = { message: e.message, network: e instanceof ShipyardNetworkError }; }
const nobody = createShipyard({ baseUrl: process.env.CLOSED_URL, apiKey: key, maxRetries: 1 });
try { await nobody.getCurrentUser(); } catch (e) { refused = describe(e); }
console.log(JSON.stringify({ once, retried, inPlace, aborted, refused, leaks }));
`;

const DEPRECATION = `
import { createShipyard } from '@shipyard/sdk';
const settings = { baseUrl: process.env.SHIPYARD_URL, apiKey: process.env.SHIPYARD_API_KEY };
const notices = [];
const own = createShipyard({ ...settings, onDeprecation: (n) => notices.push({ ...n, since: n.since?.toISOString(), sunset: n.sunset?.toISOString() }) });
await own.getVersions({ throwOnError: true });
await own.getVersions({ throwOnError: true });
await own.getLimits({ throwOnError: true });
const warnings = [];
console.warn = (...args) => warnings.push(args.join(' '));
const plain = createShipyard(settings);
await plain.getVersions({ throwOnError: true });
await plain.getVersions({ throwOnError: true });
const silent = createShipyard({ ...settings, onDeprecation: () => {} });
await silent.getVersions({ throwOnError: true });
let refused = '';
try { createShipyard({ ...settings, onDeprecation: 'quiet' }); } catch (e) { refused = e.message; }
console.log(JSON.stringify({ notices, warnings, refused }));
`;

const HOOKS = `
import { createShipyard } from '@shipyard/sdk';
const key = process.env.SHIPYARD_API_KEY;
const requests = [];
const responses = [];
const lines = [];
const shipyard = createShipyard({
  baseUrl: process.env.SHIPYARD_URL,
  apiKey: key,
  onRequest: (e) => requests.push(e),
  onResponse: (e) => responses.push({ ...e, durationMs: typeof e.durationMs }),
  debug: (line) => lines.push(line),
});
await shipyard.getCurrentUser({ throwOnError: true });
await shipyard.getProject({ path: { projectId: '0196a3f2-6c1e-7b52-9d1a-2f4c8e1b7a10' } });
const printed = [];
console.debug = (...args) => printed.push(args.join(' '));
await createShipyard({ baseUrl: process.env.SHIPYARD_URL, apiKey: key, debug: true }).getCurrentUser();
const secret = key.slice('shipyard_pat_'.length);
const leaked = [...lines, ...printed, JSON.stringify(requests), JSON.stringify(responses)].filter((l) => l.includes(secret));
console.log(JSON.stringify({ requests, responses, lines, printed, leaked }));
`;

/**
 * err.is(…) on problems as servers sent them before API 1.3.0 (absolute URIs, no code) and since
 * (references, with a code): by type slug, and by code.
 */
const IS = `
import { ShipyardError } from '@shipyard/sdk';
const error = (type, code) =>
  new ShipyardError({ type, code, title: 'Not found', status: 404, detail: 'No such project.' }, new Response(null, { status: 404 }));
const full = new ShipyardError(
  { type: '/problems/conflict', code: 'roadmap-full', title: 'Conflict', status: 409, detail: 'The roadmap is full.' },
  new Response(null, { status: 409 }),
);
console.log(JSON.stringify({
  reference: error('/problems/not-found', 'not-found').is('not-found'),
  absolute: error('https://shipyard.dev/problems/not-found').is('not-found'),
  other: error('/problems/not-found', 'not-found').is('conflict'),
  elsewhere: error('https://elsewhere.example/problems/not-found').is('not-found'),
  code: full.code,
  byCode: full.is('roadmap-full'),
  byType: full.is('conflict'),
  otherCode: full.is('username-taken'),
  codeIsNotType: error('/problems/not-found', 'unknown-project').is('unknown-project'),
}));
`;

export const SCRIPTS: Record<string, string> = {
  'is.mjs': IS,
  'hooks.mjs': HOOKS,
  'deprecation.mjs': DEPRECATION,
  'errors.mjs': ERRORS,
  'setup.mjs': SETUP,
  'feeds.mjs': FEEDS,
  'paginate.mjs': PAGINATE,
  'dropped.mjs': DROPPED,
  'rate-limited.mjs': RATE_LIMITED,
  'timeout.mjs': TIMEOUT,
};

/** TypeScript an integrator writes; `@ts-expect-error` lines prove the types are not `any`. */
export const TYPED_USE = `
import {
  createShipyard, paginate, listMilestones, ShipyardError, ShipyardNetworkError, type Milestone,
  verifyWebhook, ShipyardWebhookError,
} from '@shipyard/sdk';

export async function receive(secret: string, body: string, headers: Headers): Promise<void> {
  try {
    const event = await verifyWebhook(secret, body, headers);
    if (event.type === 'milestone.updated') {
      const title: string = event.data.milestone.title;
      const moved: number | null = event.data.previousPosition;
      console.log(title, moved, event.sequence, event.data.url);
    } else if (event.type === 'build_log.created') {
      console.log(event.data.buildLog.body, event.data.truncated);
    } else if (event.type === 'ping') {
      // @ts-expect-error a ping carries no milestone (the event is narrowed by its type)
      console.log(event.data.milestone);
    }
  } catch (e) {
    if (e instanceof ShipyardWebhookError) console.log(e.reason);
  }
}

const shipyard = createShipyard({ baseUrl: 'http://localhost:3000', apiKey: 'shipyard_pat_x' });

export async function use(projectId: string): Promise<void> {
  const r = await shipyard.getProject({ path: { projectId } });
  const status: number = r.response.status;
  if (r.error) {
    const e: ShipyardError = r.error;
    console.log(e.requiredScope, e.grantedScopes, e.requestId, e.retryAfter, e.errors.length, status);
  } else {
    const name: string = r.data.name;
    console.log(name);
  }
  const { data } = await shipyard.getProject({ path: { projectId }, throwOnError: true, timeoutMs: 500 });
  console.log(data.slug);
  const me = await shipyard.getCurrentUser();
  console.log(me.data?.username);
  for await (const m of paginate(shipyard.listMilestones, { path: { projectId } }, { maxItems: 3 })) {
    const milestone: Milestone = m;
    // @ts-expect-error a Milestone is not a number (the item is typed, not any)
    const n: number = m;
    console.log(milestone.title, n);
  }
  for await (const m of paginate(listMilestones, { client: shipyard.client, path: { projectId } })) console.log(m.status);
  // @ts-expect-error getProject is not a list
  paginate(shipyard.getProject, { path: { projectId } });
  // @ts-expect-error listMilestones needs its path
  paginate(shipyard.listMilestones);
  // @ts-expect-error projectId is required
  await shipyard.getProject({ path: {} });
  // @ts-expect-error data may be undefined until the error is ruled out
  console.log(r.data.name);
  // @ts-expect-error no such operation
  console.log(shipyard.getNothing);
  // Without a key, the public operations only: a feed, but not the caller's profile.
  const feeds = createShipyard({ baseUrl: 'http://localhost:3000', apiKey: null });
  const atom = await feeds.getProjectAtomFeed({ path: { projectId } });
  console.log(atom.response.status);
  // @ts-expect-error a keyed operation is not on a client without a key
  await feeds.getCurrentUser();
  // @ts-expect-error hiding a post is the web application's (x-session-only): every key is refused
  await shipyard.hidePost({ path: { postId: projectId } });
  try {
    await shipyard.listJobs({ throwOnError: true, maxRetries: 0 });
  } catch (e) {
    if (e instanceof ShipyardNetworkError) console.log(e.url, e.attempts);
    else if (e instanceof ShipyardError && e.is('insufficient-scope')) console.log(e.requiredScope);
  }
}
`;
