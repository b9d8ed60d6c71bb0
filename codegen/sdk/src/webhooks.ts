/**
 * Verifying a webhook from Shipyard (Standard Webhooks, v1): the signature over
 * `webhook-id.webhook-timestamp.body` with the subscription's `whsec_…` secret, and a timestamp
 * within 5 minutes of now. Returns the event, typed by its `type`. Uses Web Crypto, so it runs
 * in Node 20+, Deno, Bun, workers and browsers alike, with no dependency. The SDK exports it
 * typed as `verifyWebhook` (./index.ts).
 */
/** The webhook could not be trusted: `reason` says why, in a word code can rely on. */
export class ShipyardWebhookError extends Error {
  override readonly name = 'ShipyardWebhookError';
  constructor(
    readonly reason: 'missing-headers' | 'bad-timestamp' | 'too-old' | 'too-new' | 'bad-signature' | 'not-json',
    message: string,
  ) {
    super(message);
  }
}

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyOptions = {
  /** Seconds a timestamp may be from now (default 300, as Standard Webhooks says). */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
};

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0)) as Uint8Array<ArrayBuffer>;
const toBase64 = (bytes: ArrayBuffer): string => btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** Compares without stopping at the first difference, so the time taken says nothing about the signature. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The event in `body` (the raw text as received, not re-serialised JSON) once its signature and
 * timestamp check out; throws a ShipyardWebhookError otherwise. While a rotated secret overlaps,
 * a delivery carries two signatures, and either secret verifies it.
 */
export async function verifySignedBody<T>(
  secret: string,
  body: string | Uint8Array,
  headers: WebhookHeaders,
  options: VerifyOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new ShipyardWebhookError(
      'missing-headers',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  if (!/^\d{1,12}$/.test(timestamp))
    throw new ShipyardWebhookError('bad-timestamp', 'webhook-timestamp is not Unix seconds');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (now - Number(timestamp) > tolerance)
    throw new ShipyardWebhookError('too-old', `signed more than ${tolerance} seconds ago (a replay, or a slow clock)`);
  if (Number(timestamp) - now > tolerance)
    throw new ShipyardWebhookError('too-new', `signed more than ${tolerance} seconds from now (check the clock)`);
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const key = await crypto.subtle.importKey(
    'raw',
    fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const expected = toBase64(
    await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${text}`)),
  );
  const matches = signatures.split(' ').some((s) => s.startsWith('v1,') && sameText(s.slice(3), expected));
  if (!matches) throw new ShipyardWebhookError('bad-signature', 'no signature matches this secret');
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ShipyardWebhookError('not-json', 'the body is not JSON');
  }
}
