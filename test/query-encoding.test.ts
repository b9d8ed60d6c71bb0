/**
 * Query strings are form-encoded, as clients write them: URLSearchParams (and the clients built on
 * it, Orval's fetch client among them), Python's urlencode, HTML forms and Scalar's "try it" send a
 * space as `+`, and encodeURIComponent (this SDK's serializer) leaves `!'()*` unescaped. Each of
 * these spellings reads the same value as the percent-encoded one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as api from '../codegen/generated/api/sdk.gen.js';
import { raw, uniqueName, userWithKey, type TestUser, useServer } from './harness.js';

const { t } = useServer();
let ada: TestUser;
/** A word nobody else uses, so the shared database of a CI run cannot disturb what is found. */
let w: string;
let postId: string;
let jobId: string;
beforeAll(async () => {
  ada = await userWithKey(t);
  w = `zq${uniqueName('').replace(/-/g, '')}`;
  postId = (
    await api.createPost({
      client: ada.client,
      body: { title: `Analytical engine ${w}`, body: "Babbage's mill (1837)*" },
    })
  ).data!.id;
  jobId = (
    await api.createJob({
      client: ada.client,
      body: {
        title: `TypeScript engineer ${w}`,
        company: 'Engines Ltd',
        description: 'Build the engine API.',
        remotePolicy: 'onsite',
        employmentType: 'full_time',
        applyUrl: 'https://jobs.example.com/1',
        location: `New York ${w}`,
      },
    })
  ).data!.id;
});

const get = (path: string) => raw(t, 'GET', path, { token: ada.token });
const ids = (res: { json: { items: { id: string }[] } }) => res.json.items.map((i) => i.id);

describe('a query string written the form way', () => {
  it('takes + for a space, in search and in every filter of jobs', async () => {
    const search = await get(`/search?q=analytical+engine+${w}`);
    expect(search.status, search.text).toBe(200);
    expect(ids(search)).toEqual([postId]);
    const jobs = await get(`/jobs?q=typescript+engineer+${w}&location=New+York+${w}`);
    expect(jobs.status, jobs.text).toBe(200);
    expect(ids(jobs)).toEqual([jobId]);
  });

  it('reads what URLSearchParams writes as the value the client meant', async () => {
    const query = new URLSearchParams({ location: `New York ${w}`, q: `engineer ${w}*` });
    expect(query.toString()).toContain('+');
    const res = await get(`/jobs?${query}`);
    expect(res.status, res.text).toBe(200);
    expect(ids(res)).toEqual([jobId]);
    // The value arrived whole: a location that does not match finds nothing, rather than being cut at the `+`.
    const none = await get(`/jobs?${new URLSearchParams({ location: `New York ${w} Brooklyn` })}`);
    expect(none.status, none.text).toBe(200);
    expect(ids(none)).toEqual([]);
  });

  it("takes the characters encodeURIComponent leaves as they are (!'()*), through the SDK too", async () => {
    for (const q of [`babbage's ${w}`, `(mill) ${w}!`, `${w}*`]) {
      const res = await api.search({ client: ada.client, query: { q, type: 'post' } });
      expect(res.response?.status, `${q}: ${JSON.stringify(res.error)}`).toBe(200);
    }
    const apostrophe = await get(`/search?q=babbage's+${w}&type=post`);
    expect(apostrophe.status, apostrophe.text).toBe(200);
    expect(ids(apostrophe)).toEqual([postId]);
  });

  it('keeps a literal plus as %2B, and the same value whatever the spelling', async () => {
    const spellings = [`location=New%20York%20${w}`, `location=New+York+${w}`, `location=New+York%20${w}`];
    for (const query of spellings) {
      const res = await get(`/jobs?${query}`);
      expect(res.status, `${query}: ${res.text}`).toBe(200);
      expect(ids(res), query).toEqual([jobId]);
    }
    const comma = await get(`/search?q=analytical,engine,${w}&type=post`);
    expect(comma.status, comma.text).toBe(200);
    const plus = await get(`/jobs?location=New%2BYork%2B${w}`);
    expect(plus.status, plus.text).toBe(200);
    expect(ids(plus)).toEqual([]);
  });

  it('still answers a value outside the contract with a 400 that names it', async () => {
    const res = await get('/jobs?status=open+all');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining('status') })]),
    );
    const broken = await get('/search?q=%E0%A4%A');
    expect(broken.status).toBe(400);
    expect(broken.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
