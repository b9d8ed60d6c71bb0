/**
 * Requests Node's HTTP parser refuses before the application sees them (a request line with raw
 * non-ASCII bytes, a malformed header, headers too large): answered as every other error is, with
 * application/problem+json, instead of Node's bare `400 Bad Request`.
 */
import type { Server } from 'node:http';
import { PROBLEM_BASE } from './problem.js';

const STATUS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout', 'The request took too long to arrive.'],
};

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const [status, title, detail] = STATUS[err.code ?? ''] ?? [
      400,
      'Bad request',
      'The request is not valid HTTP (its request line or headers could not be read).',
    ];
    const body = JSON.stringify({
      type: `${PROBLEM_BASE}${status === 400 ? 'malformed-request' : 'request-rejected'}`,
      title,
      status,
      detail,
    });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
