/**
 * One delivery attempt: the event's body, signed per Standard Webhooks with the subscription's
 * secret (and the previous one while a rotation overlaps), POSTed to the address that was just
 * checked (pinned: a second lookup cannot send it elsewhere). No redirects are followed; the
 * attempt ends after 10 seconds; at most the first 1,024 bytes of the answer are read.
 */
// `request` through the modules' default exports, which are the modules themselves: what
// OpenTelemetry's http instrumentation wraps (a client span, and the trace passed on to the
// receiver in `traceparent`). A named import is bound to the unwrapped function.
import http, { type AgentOptions, type ClientRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import https, { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Webhook } from 'standardwebhooks';
import type { ResolvedAddress } from '../kernel/public-address.js';

const ATTEMPT_TIMEOUT_MS = 10_000;
const EXCERPT_BYTES = 1024;

export type AttemptOutcome = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
};

/** The three Standard Webhooks headers for `body`, signed now with each secret's signer (newest first). */
export function signedHeaders(eventId: string, body: string, signers: readonly Webhook[]): Record<string, string> {
  const now = new Date();
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signers.map((signer) => signer.sign(eventId, now, body)).join(' '),
  };
}

/**
 * Connections kept between attempts, pooled by the address each was opened to as well as by host
 * and port (Node's own agents pool by host and port only): a kept connection only ever carries a
 * request to the address that was checked for that request. The 5 s idle timeout is the one Node
 * gives its default agent, shortened by a receiver's own `Keep-Alive: timeout` hint.
 */
type Pinned = { pinnedAddress?: string };
const pinnedName = (name: string, options: unknown) =>
  `${name}|${(options as Pinned | undefined)?.pinnedAddress ?? ''}`;
class PinnedHttpAgent extends HttpAgent {
  override getName(options?: AgentOptions & Pinned): string {
    return pinnedName(super.getName(options), options);
  }
}
class PinnedHttpsAgent extends HttpsAgent {
  override getName(options?: HttpsAgentOptions & Pinned): string {
    return pinnedName(super.getName(options), options);
  }
}
const keptConnections = {
  'http:': new PinnedHttpAgent({ keepAlive: true, timeout: 5_000 }),
  'https:': new PinnedHttpsAgent({ keepAlive: true, timeout: 5_000 }),
};

/**
 * POSTs the event, on a kept connection to the same address when there is one. A kept connection
 * that the receiver closed just as it was taken fails with ECONNRESET or EPIPE before any answer;
 * the request is then sent once more on a new connection (`agent: false`), within the same
 * deadline, rather than counted as a failed attempt.
 */
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
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    let req: ClientRequest;
    // An answer read to its end leaves the connection to be kept; any other end closes it.
    const finish = (outcome: AttemptOutcome, readToEnd = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (!readToEnd) req.destroy();
      resolve(outcome);
    };
    const send = (fresh: boolean) => {
      let answered = false;
      const options = {
        method: 'POST',
        lookup: pinned,
        agent: fresh ? false : keptConnections[url.protocol as keyof typeof keptConnections],
        pinnedAddress: to.address,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Shipyard-Webhooks/1',
        },
      };
      const r = request(url, options, (res: IncomingMessage) => {
        answered = true;
        readAnswer(res, finish);
      });
      req = r;
      r.on('error', (err: NodeJS.ErrnoException) => {
        const dropped = err.code === 'ECONNRESET' || err.code === 'EPIPE';
        if (r.reusedSocket && dropped && !answered && !fresh && !settled) send(true);
        else if (r === req)
          finish({
            ok: false,
            statusCode: null,
            error: `could not connect (${err.code ?? err.message})`,
            excerpt: null,
          });
      });
      r.end(body);
    };
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
    send(false);
  });
}

/** The answer's status and at most its first EXCERPT_BYTES (the rest is not read). */
function readAnswer(res: IncomingMessage, finish: (outcome: AttemptOutcome, readToEnd?: boolean) => void): void {
  const status = res.statusCode ?? 0;
  const chunks: Buffer[] = [];
  let size = 0;
  const done = (readToEnd = false) => {
    const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
    const ok = status >= 200 && status < 300;
    finish(
      {
        ok,
        statusCode: status,
        error: ok
          ? null
          : status >= 300 && status < 400
            ? `answered ${status} (redirects are not followed)`
            : `answered ${status}`,
        excerpt: excerpt || null,
      },
      readToEnd,
    );
  };
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    chunks.push(chunk);
    if (size >= EXCERPT_BYTES) done();
  });
  res.on('end', () => done(true));
  res.on('error', () => done());
}
