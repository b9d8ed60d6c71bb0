/**
 * A webhook receiver on loopback: what it was sent, verified with the Standard Webhooks library
 * and parsed with the contract's schema for the event's type. It answers what the test says (a
 * status, after a delay, or never), and counts deliveries of one event that overlapped in time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type * as types from '../codegen/generated/api/types.gen.js';
import {
  zBuildLogEvent,
  zMemberEvent,
  zMilestoneEvent,
  zPingEvent,
  zProjectEvent,
} from '../codegen/generated/api/zod.gen.js';

export type Event =
  | types.MilestoneEvent
  | types.BuildLogEvent
  | types.ProjectEvent
  | types.MemberEvent
  | types.PingEvent;

/** The event parsed with the contract's schema for its type. */
function parseEvent(json: unknown): Event {
  const type = (json as { type: string }).type;
  const schema = type.startsWith('milestone.')
    ? zMilestoneEvent
    : type.startsWith('build_log.')
      ? zBuildLogEvent
      : type === 'project.updated'
        ? zProjectEvent
        : type.startsWith('project.member')
          ? zMemberEvent
          : zPingEvent;
  return schema.parse(json) as Event;
}

/**
 * What the receiver does with the nth request (from 1): answer a status, after `delayMs`; `hang`
 * never answers; `drop` closes the connection without answering (as a server closing an idle
 * kept connection does at the moment a request arrives on it).
 */
export type Answer = { status: number; delayMs?: number } | 'hang' | 'drop';

export class Receiver {
  /** Every request, with when it arrived (ms since the epoch). */
  readonly received: { headers: Record<string, string>; body: string; at: number }[] = [];
  /** How many connections the deliveries came on. */
  connections = 0;
  answer: (n: number, webhookId: string) => Answer = () => ({ status: 200 });
  /** Requests that arrived while another one for the same webhook-id was still being answered. */
  overlaps = 0;
  readonly #inFlight = new Map<string, number>();
  server!: Server;
  url = '';
  port = 0;

  async start(port = 0, host = '127.0.0.1') {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const now = (this.#inFlight.get(id) ?? 0) + 1;
        if (now > 1) this.overlaps++;
        this.#inFlight.set(id, now);
        const done = () => this.#inFlight.set(id, (this.#inFlight.get(id) ?? 1) - 1);
        res.on('close', done);
        this.received.push({
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        const answer = this.answer(this.received.length, id);
        if (answer === 'hang') return;
        if (answer === 'drop') {
          req.socket.destroy();
          return;
        }
        setTimeout(
          () => res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('thanks'),
          answer.delayMs ?? 0,
        );
      });
    });
    this.server.on('connection', () => this.connections++);
    // Kept connections stay open as long as the sender keeps them: a test of a kept connection
    // does not depend on how fast the machine is.
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server.listen(port, host, r));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${host}:${this.port}/hook`;
  }

  /** Every delivery verified with `secret` (throws on one that is not), parsed against the contract. */
  events(secret: string): Event[] {
    const wh = new Webhook(secret);
    return this.received.map(({ headers, body }) => parseEvent(wh.verify(body, headers)));
  }

  async until(count: number, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`received ${this.received.length} of ${count} deliveries`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(r));
  }
}

/** Receivers made as tests need them, each listening on a port of its own, all closed at the end. */
export class Receivers {
  readonly #all: Receiver[] = [];
  async fresh(): Promise<Receiver> {
    const r = new Receiver();
    await r.start();
    this.#all.push(r);
    return r;
  }
  closeAll() {
    return Promise.all(this.#all.map((r) => r.close()));
  }
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
