/**
 * `client.watch()`: the streaming watch (docs/api.md, "Streaming watch") as an async iterator of
 * changes that resumes by itself. It reads `GET /v1/watch` as Server-Sent Events (parsed by
 * eventsource-parser) and remembers the revision it has fully seen; when the stream breaks (the node
 * died or stopped, the reader fell behind and got `overflow`, no byte for `idleTimeoutMs`) it
 * reconnects, to the next endpoint, from that revision — so every change is yielded exactly once,
 * in log order, across nodes and leader changes.
 *
 * A revision's events are held back until its last one (the one carrying `id:`) has arrived, so a
 * stream cut in the middle of a revision never yields part of it twice.
 *
 * `compacted` (no node still keeps the changes after the revision to resume from) is surfaced as a
 * thrown `WatchCompactedError`, never skipped: the caller re-reads the state it needs and watches
 * again from the revision of that read. An error is used rather than a final event so that a loop
 * that forgets to look for it cannot mistake it for a normal end.
 *
 * With auth on, a stream whose token is revoked or loses the right ends with `event: error` (the
 * error body of docs/api.md): it is thrown as the TenureError it names (`unauthorized` 401,
 * `forbidden` 403), like the same answer to a new request — reconnecting cannot fix it.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ChangeEvent, ChangeKind } from './contract.js';
import { errorFromBody, errorFromResponse, TenureError } from './errors.js';
import type { Logger } from './logger.js';
import { backoffOrStop, resumingIterator } from './resuming-iterator.js';

/** One change: the event of docs/api.md with the revision (log index) of the entry that made it. */
export type WatchEvent = ChangeEvent & { readonly revision: number };

/** Options of `client.watch`. */
export interface ChangeWatchOptions {
  /** Only names (lease, semaphore, group, key, session id) starting with this. */
  readonly prefix?: string;
  /** Only these kinds (default all). */
  readonly kinds?: readonly ChangeKind[];
  /** Start with every change after this revision (default: with the next change). */
  readonly fromRevision?: number;
  /** Also yield `renewed` events (default false). */
  readonly renewals?: boolean;
  /** Ends the iteration (no error) when aborted. */
  readonly signal?: AbortSignal;
  /** Reconnect when nothing (not even a keepalive) arrived for this long (ms; default 45,000). */
  readonly idleTimeoutMs?: number;
}

/**
 * Thrown by a watch iterator when the changes after `fromRevision` are no longer kept by any
 * endpoint (docs/api.md "compacted"): `oldestRevision` is the oldest revision a node can resume from.
 */
export class WatchCompactedError extends TenureError {
  readonly fromRevision: number;
  readonly oldestRevision: number;
  constructor(fromRevision: number, oldestRevision: number) {
    super(
      `changes after revision ${fromRevision} are no longer kept (oldest resumable: ${oldestRevision}); re-read the state and watch again from its revision`,
      { code: 'compacted', status: null, details: { fromRevision, oldestRevision } },
    );
    this.name = 'WatchCompactedError';
    this.fromRevision = fromRevision;
    this.oldestRevision = oldestRevision;
  }
}

/** What the watch needs from its client. */
export interface ChangeWatchDeps {
  readonly endpoints: readonly string[];
  readonly fetch: typeof fetch;
  readonly sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly logger: Logger;
}

const IDLE_TIMEOUT_MS_DEFAULT = 45_000;
const RECONNECT_POLICY = { attempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 50, maxDelayMs: 2000 };

/** How one connection ended. */
type ConnectionEnd =
  | { readonly kind: 'broken'; readonly error?: unknown }
  | { readonly kind: 'compacted'; readonly oldestRevision: number };

/** The query string of a watch from `position` (null: from the next change). */
function watchPath(opts: ChangeWatchOptions, position: number | null): string {
  const q = new URLSearchParams();
  if (opts.prefix !== undefined && opts.prefix !== '') q.set('prefix', opts.prefix);
  if (opts.kinds !== undefined && opts.kinds.length > 0) q.set('kinds', opts.kinds.join(','));
  if (opts.renewals === true) q.set('renewals', 'true');
  if (position !== null) q.set('fromRevision', String(position));
  const text = q.toString();
  return text.length === 0 ? '/v1/watch' : `/v1/watch?${text}`;
}

/**
 * Iterates the changes passing `opts`' filters, resuming across failures (see the file comment).
 * Throws WatchCompactedError, or TenureError for an answer that retrying cannot fix (400).
 */
export function watchChanges(
  opts: ChangeWatchOptions,
  deps: ChangeWatchDeps,
): AsyncIterableIterator<WatchEvent> {
  return resumingIterator(opts.signal, (signal) => changes(opts, deps, signal));
}

/** The resuming loop of `watchChanges` under `signal`: one connection after another. */
async function* changes(
  opts: ChangeWatchOptions,
  deps: ChangeWatchDeps,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent, void, undefined> {
  const idleTimeoutMs = opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS_DEFAULT;
  let position: number | null = opts.fromRevision ?? null;
  let endpointIndex = 0;
  let failures = 0;
  /** Endpoints that answered `compacted` for the current position, with their oldest revision. */
  let compactedAt = new Map<string, number>();
  while (!signal.aborted) {
    const endpoint = deps.endpoints[endpointIndex % deps.endpoints.length]!;
    const connection = connect(endpoint, watchPath(opts, position), signal, idleTimeoutMs, deps);
    let progressed = false;
    let end: ConnectionEnd;
    try {
      for (;;) {
        const next = await connection.next();
        if (next.done) {
          end = next.value;
          break;
        }
        const batch = next.value;
        if (batch.revision !== null && (position === null || batch.revision > position)) {
          position = batch.revision;
          progressed = true;
          compactedAt = new Map();
        }
        for (const event of batch.events) yield event;
      }
    } finally {
      await connection.return(undefined as never);
    }
    if (signal.aborted) return;
    endpointIndex++;
    if (end.kind === 'compacted') {
      compactedAt.set(endpoint, end.oldestRevision);
      // The lowest oldest revision of the nodes that answered: the furthest back any can resume.
      if (compactedAt.size >= deps.endpoints.length)
        throw new WatchCompactedError(position ?? 0, Math.min(...compactedAt.values()));
      continue;
    }
    if (progressed) failures = 0;
    deps.logger.debug?.({ endpoint, position, error: end.error }, 'watch reconnecting');
    if (!(await backoffOrStop(deps, RECONNECT_POLICY, failures++, signal))) return;
  }
}

/** One connection: yields whole revisions (or a bare position), returns how it ended. */
async function* connect(
  endpoint: string,
  path: string,
  signal: AbortSignal,
  idleTimeoutMs: number,
  deps: ChangeWatchDeps,
): AsyncGenerator<{ revision: number | null; events: WatchEvent[] }, ConnectionEnd, undefined> {
  const local = new AbortController();
  const abortLocal = (): void => local.abort();
  signal.addEventListener('abort', abortLocal, { once: true });
  let idle: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    clearTimeout(idle);
    idle = setTimeout(() => local.abort(new Error('watch idle')), idleTimeoutMs);
  };
  try {
    armIdle();
    let response: Response;
    try {
      response = await deps.fetch(endpoint + path, {
        headers: { accept: 'text/event-stream' },
        signal: local.signal,
      });
    } catch (error) {
      return { kind: 'broken', error };
    }
    if (response.status !== 200) {
      const text = await response.text().catch(() => '');
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = { raw: text.slice(0, 200) };
      }
      const error = errorFromResponse(response.status, body);
      // 4xx other than 429 is a wrong request: retrying cannot fix it.
      if (response.status >= 400 && response.status < 500 && response.status !== 429) throw error;
      return { kind: 'broken', error };
    }
    const parsed: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => parsed.push(m) });
    let pending: WatchEvent[] = [];
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          return { kind: 'broken', error };
        }
        if (chunk.done) return { kind: 'broken' };
        armIdle();
        parser.feed(chunk.value);
        for (const m of parsed.splice(0)) {
          const data = JSON.parse(m.data) as Record<string, unknown>;
          const id = m.id === undefined ? null : Number(m.id);
          if (m.event === 'progress') {
            yield { revision: id, events: [] };
          } else if (m.event === 'error') {
            throw errorFromBody(data);
          } else if (data['type'] === 'compacted') {
            return { kind: 'compacted', oldestRevision: data['oldestRevision'] as number };
          } else if (data['type'] === 'overflow') {
            yield { revision: data['revision'] as number, events: [] };
            return { kind: 'broken' };
          } else {
            pending.push(data as unknown as WatchEvent);
            if (id !== null) {
              const events = pending;
              pending = [];
              yield { revision: id, events };
            }
          }
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', abortLocal);
    local.abort();
  }
}
