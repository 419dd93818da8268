/**
 * Holder and candidate ids (docs/api.md: 1–200 printable characters, unique per process incarnation).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A process-incarnation id `${hostname}:${pid}:${uuid}`: a restarted process never reuses one, so a
 * new incarnation is never mistaken for the old holder (BC-11). Hostname is cut to 64 characters and
 * non-printable characters are replaced, keeping the id within docs/api.md's 200 characters.
 */
export function processIncarnationId(): string {
  const host =
    hostname()
      .replace(/[^\x21-\x7e]/g, '_')
      .slice(0, 64) || 'host';
  return `${host}:${process.pid}:${randomUUID()}`;
}
