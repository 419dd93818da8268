/**
 * `buildApp(deps)`: the Fastify application of one node, never listening (tests use `app.inject`,
 * node.ts calls `listen`). One plugin per concern: leases, elections, fencing/KV, cluster and
 * operations, sessions, semaphores, holder history and revoke, OpenAPI docs; one error handler rendering every failure through the error tables as
 * `{"error": {"code", "message", ...details}}` (docs/api.md, Errors); every response carries
 * `Tenure-Leader` when the leader is known.
 */
import { AssertionError } from 'node:assert';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ServerDeps } from './deps.js';
import { clientErrorHandler } from './client-error.js';
import { toHttpError } from './error-tables.js';
import { Gateway } from './gateway.js';
import { ConnectionGuard } from './connection-guard.js';
import { LongPolls } from './long-polls.js';
import { httpAddressOf } from './member-view.js';
import { nodeServerFactory } from './node-server.js';
import { errorBody, internalError, noLeader } from './http-error.js';
import { parseJsonBody } from './json-body.js';
import { openapiOptions } from './openapi.js';
import { installArrivalChecks } from './arrival-headers.js';
import { installAuth } from './auth/auth-hooks.js';
import { authRoutes } from './plugins/auth.js';
import { clusterRoutes } from './plugins/cluster.js';
import { memberRoutes } from './plugins/members.js';
import { electionRoutes } from './plugins/elections.js';
import { fenceKvRoutes } from './plugins/fence-kv.js';
import { historyRevokeRoutes } from './plugins/history-revoke.js';
import { leaseRoutes } from './plugins/leases.js';
import { snapshotRoutes } from './plugins/snapshot.js';
import { semaphoreRoutes } from './plugins/semaphores.js';
import { sessionRoutes } from './plugins/sessions.js';
import { watchRoutes } from './plugins/watch.js';
import { buildRequestContext } from './request-context.js';
import { appSchemas } from './schemas.js';
import { validatorCompiler } from './validator.js';

/** Names up to 200 bytes plus room for a useful 400 on longer ones (docs/api.md, Input rules). */
const PARAM_LENGTH_MAX = 2048;

/**
 * Answer `err` in the error shape. A failed assertion is a bug that must stop the process: it
 * goes to `onFatal` (or, without one, is rethrown outside any promise so the process crashes) and
 * the connection is cut — it is never turned into a 500. Any other unmapped error is `internal`.
 */
function sendError(
  deps: ServerDeps,
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (err instanceof AssertionError) {
    request.log.fatal({ err, url: request.url }, 'assertion failed');
    if (deps.onFatal !== undefined) deps.onFatal(err);
    else
      setImmediate(() => {
        throw err;
      });
    reply.hijack();
    reply.raw.destroy();
    return;
  }
  let e = toHttpError(err);
  if (e === null) {
    request.log.error({ err, url: request.url }, 'request failed with an internal error');
    e = internalError();
  }
  void reply
    .code(e.statusCode)
    .headers(e.headers)
    .send(errorBody(e.code, e.message, e.details));
}

/** The connection bounds of the node, refusals counted in the metrics. */
function connectionGuard(deps: ServerDeps): ConnectionGuard {
  return new ConnectionGuard({
    perAddressMax: deps.config.connectionsPerAddressMax,
    nodeMax: deps.config.connectionsMax,
    log: deps.logger.child({ component: 'http' }),
    onRefused: (reason) => deps.metrics.connectionsRefused.inc({ reason }),
  });
}

/**
 * Build the app. Resolves once every plugin is registered (`app.ready()` is left to the caller).
 * The instance never listens by itself.
 */
export async function buildApp(deps: ServerDeps): Promise<FastifyInstance> {
  const { config, raft } = deps;
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'http' }),
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: PARAM_LENGTH_MAX },
    bodyLimit: config.bodyBytesMax,
    // The server and its timeouts and bounds: node-server.ts (docs/security.md, Abuse resistance).
    // node:http's requestTimeout covers receiving a request only, never the wait for its answer:
    // long-polls, waits and watches end by their own deadlines.
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.receiveTimeoutMs,
    connectionTimeout: config.socketIdleTimeoutMs,
    serverFactory: nodeServerFactory(config, connectionGuard(deps)),
    // Malformed URLs (bad percent-encoding) never reach the router: answer in the error shape.
    frameworkErrors: (err: FastifyError, request, reply) => {
      sendError(deps, err, request as FastifyRequest, reply as FastifyReply);
    },
    // Oversized headers and malformed HTTP are refused by node:http: answer in the error shape too.
    clientErrorHandler,
    // Valid JSON with a `__proto__` / `constructor.prototype` key is parsed as plain data
    // (JSON.parse makes own properties; nothing is polluted) instead of being called "not valid
    // JSON": strict body schemas reject such keys as unknown fields, and free-form values
    // (`value`) get a precise 400 naming the `__proto__` key (json-limits.ts); a
    // `constructor.prototype` key inside a value is ordinary data and is stored as is.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    // A stopping node answers new requests itself, in the error shape (the onRequest hook below),
    // not with Fastify's own 503 body.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());
  // Only application/json bodies, in UTF-8 (other content types get 415).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  const gateway = new Gateway(deps);
  // Graceful stop (app.close): requests that arrive on open connections during the drain are
  // refused before routing — 503 no_leader, nothing applied, retry on another node (docs/api.md);
  // the ones already running finish.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? noLeader('this node is stopping; retry on another node') : undefined);
  });

  app.decorateRequest('tenure', null as never);
  installArrivalChecks(app as unknown as FastifyInstance, {
    proof: gateway.forwardProof,
    isOtherNode: (id) =>
      id !== config.nodeId &&
      httpAddressOf(config.peers, id, (m) => raft.memberAddress(m)) !== null,
  });
  installAuth(app as unknown as FastifyInstance, config, deps.coord);
  // Hooks in callback style (not async): no promise and microtask per hook and request, which the
  // api-bench profile showed on the hot path. The leader id for Tenure-Leader is cached from
  // onLeaderChange instead of building a whole raft.status() per response.
  let leaderId = raft.status().leaderId;
  raft.onLeaderChange((id) => {
    leaderId = id;
  });
  // After validation: the headers are checked (and the timeout coerced to a number); the deadline
  // still counts from the request's arrival.
  const timeouts = { defaultMs: config.requestTimeoutMsDefault, maxMs: config.requestTimeoutMsMax };
  app.addHook('preHandler', (request, reply, done) => {
    try {
      const startMs = performance.now() - reply.elapsedTime;
      request.tenure = buildRequestContext(request, reply, startMs, timeouts);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (leaderId !== null) void reply.header('tenure-leader', leaderId);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    const status = String(reply.statusCode);
    deps.metrics.httpSeconds.observe(
      { method: request.method, route, status },
      reply.elapsedTime / 1000,
    );
    if (config.accessLog === 'on')
      request.log.info(
        {
          method: request.method,
          route,
          url: request.url.slice(0, 300),
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime),
        },
        'request',
      );
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    sendError(deps, err, request, reply);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply
      .code(404)
      .send(errorBody('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );

  await app.register(swagger, openapiOptions());
  await app.register(swaggerUi, { routePrefix: '/docs' });
  const longPolls = new LongPolls(config.longPollsMax);
  const opts = { deps, gateway, schemas: appSchemas(config), longPolls };
  await app.register(leaseRoutes, opts);
  await app.register(electionRoutes, opts);
  await app.register(fenceKvRoutes, opts);
  await app.register(clusterRoutes, opts);
  await app.register(snapshotRoutes, opts);
  await app.register(sessionRoutes, opts);
  await app.register(semaphoreRoutes, opts);
  await app.register(historyRevokeRoutes, opts);
  await app.register(watchRoutes, opts);
  await app.register(memberRoutes, opts);
  await app.register(authRoutes, opts);
  return app as unknown as FastifyInstance;
}
