/**
 * Answers to requests node:http refuses before Fastify sees them (Fastify's `clientErrorHandler`):
 * headers over the size limit, a malformed Content-Length, bytes that are not HTTP/1.1. They are
 * written in the error shape (docs/api.md, Errors) straight to the socket, which is then closed.
 * Header overflow keeps HTTP's own status 431 with code `invalid_argument`.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { errorBody } from './http-error.js';

/** The answer to headers over `--header-bytes-max` (node:http's check or header-bytes.ts). */
export const HEADER_OVERFLOW = {
  status: 431,
  field: 'headers',
  problem: 'are over the size limit',
};

/** The error-shape body of HEADER_OVERFLOW. */
export function headerOverflowBody(): string {
  const a = HEADER_OVERFLOW;
  return JSON.stringify(
    errorBody('invalid_argument', `${a.field} ${a.problem}`, { field: a.field }),
  );
}

/** node:http parser error codes (llhttp `HPE_…`) and the answer each gets. */
function answerOf(code: string | undefined): { status: number; field: string; problem: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return HEADER_OVERFLOW;
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, field: 'header Content-Length', problem: 'is not a valid length' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { status: 400, field: 'header Transfer-Encoding', problem: 'is not valid' };
    default:
      // Also what bytes past a body longer than its Content-Length read as: the next request.
      return {
        status: 400,
        field: 'request',
        problem: 'is not valid HTTP/1.1 (or a body was longer than its Content-Length)',
      };
  }
}

/** Fastify `clientErrorHandler`: answer in the error shape, then close the connection. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  // A reset or an already closed socket: nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    let status: number;
    let body: string;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      body = JSON.stringify(errorBody('timeout', 'the request was not received in time'));
    } else {
      const a = answerOf(err.code);
      status = a.status;
      const message = `${a.field} ${a.problem}`;
      body = JSON.stringify(errorBody('invalid_argument', message, { field: a.field }));
    }
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
