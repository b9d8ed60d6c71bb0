/**
 * The operator's longest key lifetime (KEY_MAX_DAYS), held on every way a key is made: the keys
 * form (its choices and its date picker), the OAuth consent (its choices and the exchange), and
 * reported by GET /platform/limits. The CLI's is in test/cli.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { raw, userWithKey, useServer } from './harness.js';
import { type Browser, signedUpBrowser } from './cookie-browser.js';
import { loadConfig } from '../src/config.js';

const { t } = useServer({ keyMaxDays: 30, publicUrlAtItsPort: true });
let site: string;
beforeAll(async () => {
  site = t.baseUrl.replace('127.0.0.1', 'localhost');
});

async function person(): Promise<Browser> {
  return (await signedUpBrowser(t.baseUrl)).b;
}

describe('KEY_MAX_DAYS', () => {
  it('may lower the longest lifetime, never raise it', () => {
    expect(loadConfig({}).keyMaxDays).toBe(366);
    expect(loadConfig({ KEY_MAX_DAYS: '90' }).keyMaxDays).toBe(90);
    expect(() => loadConfig({ KEY_MAX_DAYS: '400' })).toThrow(/lower .* not raise/);
    expect(() => loadConfig({ KEY_MAX_DAYS: '0' })).toThrow(/positive whole number/);
  });

  it('bounds the keys form and says so in the limits', async () => {
    const b = await person();
    const form = await b.get('/settings/keys/new');
    const options = [...form.text.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    expect(options).toEqual(['7', '30', 'date']);
    expect(form.text).toContain('at most 30 days ahead');
    const tooLong = await b.post('/settings/keys', {
      _csrf: b.csrf(),
      name: 'long',
      scopes: ['jobs.read'],
      expiry: '90',
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('A key expires in a whole number of days from 1 to 30, not 90.');
    const { token } = await userWithKey(t, ['content.read']);
    const limits = await raw(t, 'GET', '/platform/limits', { token });
    expect(limits.json.keyLifetimeDays).toBe(30);
  });

  it('bounds what the OAuth consent offers and what it takes', async () => {
    const registered = await fetch(`${site}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Bounded', redirect_uris: ['http://127.0.0.1:53685/cb'] }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id,
      redirect_uri: 'http://127.0.0.1:53685/cb',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'projects.read',
    });
    const b = await person();
    const started = await b.get(`/authorize?${q}`);
    const consent = await b.get(started.location!);
    const options = [...consent.text.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    expect(options).toEqual(['7', '30']);
    expect(consent.text).toContain('At most 30 days');
    const request = new URL(started.location!, site).searchParams.get('request')!;
    const refused = await b.post('/oauth/consent', {
      _csrf: b.csrf(),
      request,
      scopes: ['projects.read'],
      expiry: '365',
      decision: 'approve',
    });
    expect(refused.status).toBe(400);
  });
});
