/**
 * Server-Sent Events frames of the streaming watch (docs/api.md, "Streaming watch"; the format is
 * the WHATWG HTML "server-sent events" section). Event data is one line of JSON (JSON.stringify
 * never emits a raw newline), so every frame is `field: value` lines and a blank line.
 */
import type { LoggedEvent } from './event-log.js';

/** Name of the SSE event that only moves the resume point (`id:`) forward; no change in it. */
export const PROGRESS_EVENT = 'progress';

/** A comment line that keeps idle connections (and proxies) open; parsers ignore it. */
export const KEEPALIVE_FRAME = ': keepalive\n\n';

/** One change. `withId`: it is the last event of its revision in this stream, so it carries `id:`. */
export function changeFrame(event: LoggedEvent, withId: boolean): string {
  return withId ? `id: ${event.revision}\ndata: ${event.data}\n\n` : `data: ${event.data}\n\n`;
}

/**
 * The stream's position without a change: every matching change up to `revision` has been sent.
 * A named event, so a browser EventSource's `onmessage` never sees it but still records the id.
 */
export function progressFrame(revision: number): string {
  return `event: ${PROGRESS_EVENT}\nid: ${revision}\ndata: ${JSON.stringify({ revision })}\n\n`;
}

/** `compacted`: changes after the asked revision are no longer all kept here; the stream ends. */
export function compactedFrame(fromRevision: number, oldestRevision: number): string {
  return `data: ${JSON.stringify({ type: 'compacted', fromRevision, oldestRevision })}\n\n`;
}

/** `overflow`: the reader fell too far behind; resume from `revision` (also the `id:`). */
export function overflowFrame(revision: number): string {
  return `id: ${revision}\ndata: ${JSON.stringify({ type: 'overflow', revision })}\n\n`;
}

/** Name of the SSE event that ends a stream whose token lost the right to it. */
export const ERROR_EVENT = 'error';

/**
 * The stream's token was revoked (`unauthorized`) or its roles no longer allow the watch
 * (`forbidden`): the error body of docs/api.md (`{"error": {code, message}}`), then the end.
 */
export function errorFrame(code: string, message: string): string {
  return `event: ${ERROR_EVENT}\ndata: ${JSON.stringify({ error: { code, message } })}\n\n`;
}
