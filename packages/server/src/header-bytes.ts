/**
 * The `--header-bytes-max` bound on the whole request head (docs/security.md, Abuse resistance).
 * node:http's `maxHeaderSize` counts only the URL and the header names and values, not the
 * separators (`: ` and CRLF), so many short headers could send several times the limit
 * (2,000 headers of a few bytes: ~23 KB under a 16 KiB limit). Here the head is counted as sent in
 * its usual form, `METHOD url HTTP/1.1`, `Name: value` lines, CRLFs, and a larger one gets 431 in
 * the error shape before any route runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER_OVERFLOW, headerOverflowBody } from './client-error.js';

/** Bytes of the request line plus headers of `req` in the usual form (header text is latin1). */
export function requestHeadBytes(req: IncomingMessage): number {
  // "METHOD url HTTP/1.1\r\n" and the empty line that ends the head.
  let bytes = (req.method ?? '').length + (req.url ?? '').length + 11 + 2;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) bytes += raw[i]!.length + raw[i + 1]!.length + 4;
  return bytes;
}

/** `handler`, but a request whose head is over `headerBytesMax` gets 431 and a closed connection. */
export function boundHeadBytes(
  headerBytesMax: number,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (requestHeadBytes(req) <= headerBytesMax) {
      handler(req, res);
      return;
    }
    const body = headerOverflowBody();
    res.writeHead(HEADER_OVERFLOW.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  };
}
