/**
 * `GET /v1/watch` (docs/api.md, "Streaming watch"): every committed change, as Server-Sent Events,
 * from this node's event log. Any node serves it from its own applied entries (no forwarding), so
 * a watch through a follower never goes back in revision. Resume by `fromRevision` or the
 * `Last-Event-ID` header (the header wins: a browser's EventSource sends it on reconnect with the
 * original URL). At most `watchesMax` watches per node (429 `resource_exhausted` beyond). With
 * auth on, every write is authorized against the auth state current then, and every open stream
 * is checked again when tokens or roles change: a revoked token or a lost right ends the stream
 * with an `error` event (docs/security.md).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AUTH_CHANGE_KEY, NAME_PREFIX_RULE } from '@tenure/coord-state';
import { stillAuthorized } from '../auth/auth-hooks.js';
import { HttpError } from '../http-error.js';
import { routeSchema } from '../route-schema.js';
import { EventLog } from '../watch/event-log.js';
import { KINDS_PATTERN, watchFilter } from '../watch/watch-filter.js';
import { WatchRegistry } from '../watch/watch-registry.js';
import { WatchStream, type SseSink } from '../watch/watch-stream.js';
import type { RoutePluginOptions } from './leases.js';

const strict = { additionalProperties: false } as const;
const revision = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

/** Query of `GET /v1/watch`. */
export const watchQuery = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({
        pattern: NAME_PREFIX_RULE.pattern,
        maxLength: NAME_PREFIX_RULE.charsMax,
        description:
          'only changes of names (lease, semaphore, group, key, session id) with this prefix',
      }),
    ),
    kinds: Type.Optional(
      Type.String({
        pattern: KINDS_PATTERN,
        description: 'comma-separated kinds: lease, semaphore, election, kv, session (default all)',
      }),
    ),
    fromRevision: Type.Optional(
      revision('start with every change after this revision (default: with the next change)'),
    ),
    renewals: Type.Optional(
      Type.Boolean({ description: 'also send `renewed` events (default false)' }),
    ),
  },
  strict,
);

const sseResponse = Type.Unsafe<string>({
  description:
    'text/event-stream: one `data:` JSON event per change ({revision, kind, name, type, ...}), `id:` ' +
    'the revision on the last event of each revision; `event: progress` moves the resume point; ' +
    '`: keepalive` comments; `compacted` or `overflow` events end the stream; with auth on, ' +
    '`event: error` (the error body, `unauthorized` or `forbidden`) ends it when the token is ' +
    'revoked or its roles no longer allow the watch',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
});

export const watchRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps } = opts;
  const { config, coord, hub, raft } = deps;
  const H = opts.schemas.headers;
  // Read the applied index and subscribe in one synchronous step: no entry can slip between them.
  const log = new EventLog(raft.status().appliedIndex, {
    eventsMax: config.watchLogEventsMax,
    bytesMax: config.watchLogBytesMax,
  });
  const unsubscribe = hub.onEntry({
    entry: (index, events) => log.append(index, events),
    restored: (index) => log.reset(index),
  });
  const registry = new WatchRegistry({
    watchesMax: config.watchesMax,
    keepaliveMs: config.watchKeepaliveMs,
  });
  // Auth listeners run inside apply: end the refused streams just after it, once per burst.
  let recheckScheduled = false;
  const unsubscribeAuth = hub.subscribe(AUTH_CHANGE_KEY, () => {
    if (recheckScheduled) return;
    recheckScheduled = true;
    setImmediate(() => {
      recheckScheduled = false;
      registry.reauthorize();
    });
  });
  let leaderId = raft.status().leaderId;
  raft.onLeaderChange((id) => {
    leaderId = id;
  });
  app.addHook('preClose', (done) => {
    registry.closeAll();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    unsubscribe();
    unsubscribeAuth();
    done();
  });

  const base = routeSchema(
    {
      tags: ['watch'],
      summary: 'Stream changes (Server-Sent Events)',
      description:
        'Every committed change passing the filters, in log order, as text/event-stream. Resume with ' +
        'fromRevision or Last-Event-ID; a revision older than this node keeps gets a `compacted` event ' +
        'and the end; a reader too slow to keep up gets `overflow` and the end. 429 when this node ' +
        'has its most watches open.',
      querystring: watchQuery,
      response: { 200: Type.String() },
      errors: [400, 429],
    },
    H,
  );
  const schema = {
    ...base,
    headers: Type.Object({
      ...H.properties,
      'last-event-id': Type.Optional(
        Type.String({
          pattern: '^[0-9]{1,16}$',
          description: 'resume after this revision (the last `id:` seen); wins over fromRevision',
        }),
      ),
    }),
    response: { ...base.response, 200: sseResponse },
  };

  app.get('/v1/watch', { schema }, (request, reply) => {
    const lastEventId = request.headers['last-event-id'];
    const fromRevision =
      lastEventId !== undefined ? Number(lastEventId) : (request.query.fromRevision ?? null);
    if (fromRevision !== null && !Number.isSafeInteger(fromRevision))
      throw new HttpError('invalid_argument', 'header Last-Event-ID is too large', {
        field: 'header Last-Event-ID',
      });
    if (registry.full())
      throw new HttpError(
        'resource_exhausted',
        `this node has its most watches open (${config.watchesMax}); retry later or on another node`,
        { limit: config.watchesMax },
        { 'retry-after': '1' },
      );
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      ...(leaderId === null ? {} : { 'tenure-leader': leaderId }),
    });
    const sink: SseSink = {
      write: (chunk) => res.write(chunk),
      onDrain: (fn) => void res.once('drain', fn),
      end: () => res.end(),
    };
    const stream = new WatchStream(log, sink, {
      filter: watchFilter(request.query),
      bufferEventsMax: config.watchBufferEventsMax,
      onEnd: () => registry.remove(stream),
      authorize: () => stillAuthorized(request, coord),
    });
    registry.add(stream);
    res.once('close', () => stream.close());
    stream.start(fromRevision);
  });
};
