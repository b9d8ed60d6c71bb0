import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ShipyardWebhookError, verifySignedBody as verifyWebhook } from '../../codegen/sdk/src/webhooks.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ id: 'e1', type: 'ping', data: { subscriptionId: 's', message: 'hi' } });

/** Signed by the Standard Webhooks reference library, as the server signs. */
function signed(at = new Date(), secrets = [secret], id = 'e1') {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

const reason = (p: Promise<unknown>) =>
  p.then(
    () => 'verified',
    (err: unknown) => (err instanceof ShipyardWebhookError ? err.reason : String(err)),
  );

describe('verifyWebhook (the SDK)', () => {
  it('verifies what the reference library signs, from a plain object, Node headers or fetch Headers', async () => {
    const headers = signed();
    expect(await verifyWebhook(secret, body, headers)).toMatchObject({ type: 'ping' });
    expect(await verifyWebhook(secret, new TextEncoder().encode(body), new Headers(headers))).toMatchObject({
      id: 'e1',
    });
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await reason(verifyWebhook(secret, body, upper))).toBe('verified');
  });

  it('takes either secret while a rotation overlaps, and refuses a third', async () => {
    const old = `whsec_${randomBytes(32).toString('base64')}`;
    const headers = signed(new Date(), [secret, old]);
    expect(await reason(verifyWebhook(secret, body, headers))).toBe('verified');
    expect(await reason(verifyWebhook(old, body, headers))).toBe('verified');
    expect(await reason(verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, body, headers))).toBe(
      'bad-signature',
    );
  });

  it('refuses a changed body, another id, a stale or future timestamp, and missing headers', async () => {
    const headers = signed();
    expect(await reason(verifyWebhook(secret, body.replace('hi', 'ho'), headers))).toBe('bad-signature');
    expect(await reason(verifyWebhook(secret, body, { ...headers, 'webhook-id': 'e2' }))).toBe('bad-signature');
    expect(await reason(verifyWebhook(secret, body, signed(new Date(Date.now() - 301_000))))).toBe('too-old');
    expect(await reason(verifyWebhook(secret, body, signed(new Date(Date.now() + 301_000))))).toBe('too-new');
    expect(await reason(verifyWebhook(secret, body, signed(new Date(Date.now() - 299_000))))).toBe('verified');
    expect(await reason(verifyWebhook(secret, body, { 'webhook-id': 'e1' }))).toBe('missing-headers');
    expect(await reason(verifyWebhook(secret, body, { ...headers, 'webhook-timestamp': 'soon' }))).toBe(
      'bad-timestamp',
    );
  });
});
