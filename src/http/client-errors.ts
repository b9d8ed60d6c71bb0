/**
 * Requests Node's HTTP parser refuses before the application sees them (a request line with raw
 * non-ASCII bytes, a malformed header, headers too large): answered as every other error is, with
 * application/problem+json, instead of Node's bare `400 Bad Request`.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { RequestHandler } from 'express';
import { ProblemError } from '../kernel/problem.js';

const STATUS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout', 'The request took too long to arrive.'],
};

function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const [status, title, detail] = STATUS[err.code ?? ''] ?? [
      400,
      'Bad request',
      'The request is not valid HTTP (its request line or headers could not be read).',
    ];
    const body = JSON.stringify(
      new ProblemError(status, status === 400 ? 'malformed-request' : 'request-rejected', title, detail).toProblem(),
    );
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * The HTTP server for the app: Node's own check for a missing Host header answers a bare 400,
 * so it is turned off here and `requireHost` answers in our way instead.
 */
export function httpServer(app: RequestListener): Server {
  const server = createServer({ requireHostHeader: false }, app);
  answerClientErrors(server);
  return server;
}

/** HTTP/1.1 requires a Host header (RFC 9112 §3.2): a request without one is a 400 problem. */
export const requireHost: RequestHandler = (req, res, next) => {
  if (req.headers.host || req.httpVersion === '1.0') return next();
  res
    .status(400)
    .type('application/problem+json')
    .json(
      new ProblemError(400, 'malformed-request', 'Bad request', 'An HTTP/1.1 request needs a Host header.').toProblem(),
    );
};
