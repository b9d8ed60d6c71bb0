/**
 * One delivery attempt: the event's body, signed per Standard Webhooks with the subscription's
 * secret (and the previous one while a rotation overlaps), POSTed to the address that was just
 * checked (pinned: a second lookup cannot send it elsewhere). No redirects are followed; the
 * attempt ends after 10 seconds; at most the first 1,024 bytes of the answer are read.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { ResolvedAddress } from '../kernel/public-address.js';

const ATTEMPT_TIMEOUT_MS = 10_000;
const EXCERPT_BYTES = 1024;

export type AttemptOutcome = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
};

/** The three Standard Webhooks headers for `body`, signed now with each secret (newest first). */
export function signedHeaders(eventId: string, body: string, secrets: readonly string[]): Record<string, string> {
  const now = new Date();
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, now, body)).join(' '),
  };
}

export function postEvent(
  url: URL,
  to: ResolvedAddress,
  body: string,
  headers: Record<string, string>,
  timeoutMs = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptOutcome> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [to]);
    else callback(null, to.address, to.family);
  };
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      resolve(outcome);
    };
    const req = request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Shipyard-Webhooks/1',
        },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
          const ok = status >= 200 && status < 300;
          finish({
            ok,
            statusCode: status,
            error: ok
              ? null
              : status >= 300 && status < 400
                ? `answered ${status} (redirects are not followed)`
                : `answered ${status}`,
            excerpt: excerpt || null,
          });
        };
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          chunks.push(chunk);
          if (size >= EXCERPT_BYTES) done();
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const deadline = setTimeout(
      () =>
        finish({
          ok: false,
          statusCode: null,
          error: `no answer within ${timeoutMs / 1000} seconds`,
          excerpt: null,
        }),
      timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, statusCode: null, error: `could not connect (${err.code ?? err.message})`, excerpt: null }),
    );
    req.end(body);
  });
}
