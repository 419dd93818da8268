/**
 * `buildApp(deps)`: the Fastify application of one node, never listening (tests use `app.inject`,
 * node.ts calls `listen`). One plugin per concern: leases, elections, fencing/KV, cluster and
 * operations, OpenAPI docs; one error handler rendering every failure as SPEC §3's
 * `{"error": {"code", "message", ...details}}`; every response carries `Tenure-Leader` when known.
 */
import { AssertionError } from 'node:assert';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ServerDeps } from './deps.js';
import { Gateway } from './gateway.js';
import { errorBody, HttpError } from './http-error.js';
import { parseJsonBody } from './json-body.js';
import { openapiOptions } from './openapi.js';
import { clusterRoutes } from './plugins/cluster.js';
import { electionRoutes } from './plugins/elections.js';
import { fenceKvRoutes } from './plugins/fence-kv.js';
import { leaseRoutes } from './plugins/leases.js';
import { raftErrorCode } from './raft-errors.js';
import { buildRequestContext } from './request-context.js';
import { appSchemas } from './schemas.js';
import { describeValidation } from './validation-message.js';
import { validatorCompiler } from './validator.js';

/** Names up to 200 bytes plus room for a useful 400 on longer ones (SPEC §3). */
const PARAM_LENGTH_MAX = 2048;

/** Map any thrown value to (status, body, headers). Never a 500 for bad input. */
function toErrorReply(err: unknown): {
  status: number;
  body: { error: Record<string, unknown> };
  headers: Record<string, string>;
  bug: boolean;
} {
  if (err instanceof HttpError)
    return {
      status: err.statusCode,
      body: errorBody(err.code, err.message, err.details),
      headers: { ...err.headers },
      bug: false,
    };
  const fe = err as Partial<FastifyError> & { validation?: unknown[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const { field, message } = describeValidation(
      fe.validationContext ?? 'body',
      fe.validation as never[],
    );
    return {
      status: 400,
      body: errorBody('invalid_argument', message, { field }),
      headers: {},
      bug: false,
    };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: errorBody('unsupported_media_type', 'the request body must be application/json'),
        headers: {},
        bug: false,
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: errorBody('payload_too_large', 'the request body is over the size limit'),
        headers: {},
        bug: false,
      };
    case 'FST_ERR_BAD_URL':
      return {
        status: 400,
        body: errorBody('invalid_argument', `url ${fe.message ?? 'is malformed'}`, {
          field: 'url',
        }),
        headers: {},
        bug: false,
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 400,
        body: errorBody('invalid_argument', 'body is empty but content-type is application/json', {
          field: 'body',
        }),
        headers: {},
        bug: false,
      };
  }
  switch (raftErrorCode(err)) {
    case 'not_leader':
    case 'stopped':
      return {
        status: 503,
        body: errorBody('no_leader', (err as Error).message),
        headers: { 'retry-after': '1' },
        bug: false,
      };
    case 'timeout':
      return {
        status: 504,
        body: errorBody(
          'timeout',
          'not known to be committed within the deadline; outcome unknown, retry with the same Idempotency-Key',
        ),
        headers: {},
        bug: false,
      };
    case 'resource_exhausted':
      return {
        status: 429,
        body: errorBody('resource_exhausted', (err as Error).message),
        headers: { 'retry-after': '1' },
        bug: false,
      };
    default:
      break;
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status === 413)
    return {
      status,
      body: errorBody('payload_too_large', fe.message ?? 'payload too large'),
      headers: {},
      bug: false,
    };
  if (status === 415)
    return {
      status,
      body: errorBody('unsupported_media_type', fe.message ?? 'unsupported media type'),
      headers: {},
      bug: false,
    };
  if (status === 404)
    return {
      status,
      body: errorBody('not_found', fe.message ?? 'not found'),
      headers: {},
      bug: false,
    };
  if (status >= 400 && status < 500) {
    const message =
      fe.name === 'SyntaxError' || /JSON/i.test(fe.message ?? '')
        ? `body is not valid JSON: ${fe.message ?? ''}`
        : (fe.message ?? 'bad request');
    return {
      status: 400,
      body: errorBody('invalid_argument', message, { field: 'body' }),
      headers: {},
      bug: false,
    };
  }
  return { status: 500, body: errorBody('internal', 'internal error'), headers: {}, bug: true };
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
    keepAliveTimeout: 65_000,
    // Long-polls and waits may last waitMs/timeoutMs + the deadline.
    requestTimeout: 0,
    // Malformed URLs (bad percent-encoding) never reach the router: answer in the error shape.
    frameworkErrors: (err, _request, reply) => {
      const r = toErrorReply(err);
      const res = reply as unknown as FastifyReply;
      void res.code(r.status).headers(r.headers).send(r.body);
    },
    // Valid JSON with a `__proto__` / `constructor.prototype` key is parsed as plain data
    // (JSON.parse makes own properties; nothing is polluted) instead of being called "not valid
    // JSON": strict body schemas reject such keys as unknown fields, and free-form values
    // (`value`) get a precise 400 naming the `__proto__` key (json-limits.ts); a
    // `constructor.prototype` key inside a value is ordinary data and is stored as is.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
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

  app.decorateRequest('tenure', null as never);
  // Hooks in callback style (not async): no promise and microtask per hook and request, which the
  // api-bench profile showed on the hot path. The leader id for Tenure-Leader is cached from
  // onLeaderChange instead of building a whole raft.status() per response.
  let leaderId = raft.status().leaderId;
  raft.onLeaderChange((id) => {
    leaderId = id;
  });
  // After validation: the headers are checked (and the timeout coerced to a number); the deadline
  // still counts from the request's arrival.
  app.addHook('preHandler', (request, reply, done) => {
    try {
      const startMs = performance.now() - reply.elapsedTime;
      request.tenure = buildRequestContext(request, reply, startMs, config.requestTimeoutMsDefault);
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
    deps.metrics.httpSeconds.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });

  app.setErrorHandler(async (err, request, reply) => {
    const r = toErrorReply(err);
    if (r.bug) {
      request.log.error({ err, url: request.url }, 'request failed with an internal error');
      if (err instanceof AssertionError) deps.onFatal?.(err);
    }
    return reply.code(r.status).headers(r.headers).send(r.body);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply
      .code(404)
      .send(errorBody('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );

  await app.register(swagger, openapiOptions());
  await app.register(swaggerUi, { routePrefix: '/docs' });
  const opts = { deps, gateway, schemas: appSchemas(config) };
  await app.register(leaseRoutes, opts);
  await app.register(electionRoutes, opts);
  await app.register(fenceKvRoutes, opts);
  await app.register(clusterRoutes, opts);
  return app as unknown as FastifyInstance;
}
