/**
 * Auth routes (docs/api.md, Authentication; docs/security.md): tokens under `/v1/auth/tokens`,
 * roles under `/v1/auth/roles`. All need the `admin` role (auth/access.ts). Creating a token
 * answers its secret once; the log, the snapshot and every listing hold only its salted hash.
 * Creating and revoking are log entries: they hold on every node once the answer is sent.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ADMIN_ROLE,
  AUTH_ACTIONS,
  AUTH_KINDS,
  NAME_RULE,
  ROLES_PER_TOKEN_MAX,
  RULES_PER_ROLE_MAX,
  type RoleView,
  type TokenView,
} from '@tenure/coord-state';
import { hashSecret, newSecret } from '../auth/secrets.js';
import { unwrap } from '../gateway.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import { namePrefix, readQuery } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

const strict = { additionalProperties: false } as const;
const open = { additionalProperties: true } as const;
const name = (description: string) =>
  Type.String({ pattern: NAME_RULE.pattern, maxLength: NAME_RULE.charsMax, description });
const count = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 100_000_000, description });

const quota = Type.Object(
  {
    requestsPerSecond: Type.Optional(count('requests per second on one node (0 = unlimited)')),
    leasesMax: Type.Optional(count('live lease grants')),
    sessionsMax: Type.Optional(count('live sessions')),
    waitersMax: Type.Optional(count('queued waiters')),
  },
  { ...strict, description: 'limits; a field left out takes the server default' },
);
const rule = Type.Object(
  {
    kinds: Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...AUTH_KINDS] }), {
      minItems: 1,
      maxItems: AUTH_KINDS.length,
    }),
    prefix: namePrefix('name prefix ("" = all); characters of names only'),
    actions: Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...AUTH_ACTIONS] }), {
      minItems: 1,
      maxItems: AUTH_ACTIONS.length,
    }),
  },
  strict,
);
const tokenBody = Type.Object(
  {
    name: name('token name'),
    roles: Type.Array(name('role name'), { maxItems: ROLES_PER_TOKEN_MAX }),
    quota: Type.Optional(quota),
  },
  strict,
);
const roleBody = Type.Object({ rules: Type.Array(rule, { maxItems: RULES_PER_ROLE_MAX }) }, strict);
const nameParam = Type.Object({ name: name('token or role name') }, strict);
const tokenView = Type.Object(
  {
    name: Type.String(),
    roles: Type.Array(Type.String()),
    quota: Type.Unknown({ description: 'the token quota, or null' }),
  },
  { ...open, description: 'a token (never its secret)' },
);
const created = Type.Object(
  {
    name: Type.String(),
    roles: Type.Array(Type.String()),
    quota: Type.Unknown(),
    secret: Type.Optional(
      Type.String({ description: 'the bearer token: shown once, absent on an idempotent replay' }),
    ),
  },
  { ...open, description: 'the created token with its secret' },
);
const roleView = Type.Object(
  { name: Type.String(), rules: Type.Array(Type.Unknown()) },
  { ...open, description: 'a role with its rules' },
);
const ERRORS = [...R.WRITE_ERRORS, 404] as const;

export const authRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { coord } = deps;
  const H = opts.schemas.headers;

  app.post(
    '/v1/auth/tokens',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'Create a token',
          description:
            'Creates a token with roles and an optional quota and answers its secret, the only time it is shown. 409 already_exists for a taken name.',
          body: tokenBody,
          response: { 200: created },
          errors: ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        const secret = newSecret(b.name);
        const { hash, salt } = await hashSecret(secret);
        const c = await gw.propose(request, {
          type: 'auth.createToken',
          name: b.name,
          roles: b.roles,
          quota: b.quota ?? null,
          hash,
          salt,
        });
        const view = unwrap<TokenView>(c.result);
        return c.result.replayed === true ? view : { ...view, secret };
      });
    },
  );

  app.get(
    '/v1/auth/tokens',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'List tokens',
          description: 'Every token with its roles and quota, never a secret or hash.',
          querystring: readQuery,
          response: {
            200: Type.Object(
              { tokens: Type.Array(tokenView) },
              { ...open, description: 'every token' },
            ),
          },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, () => ({ tokens: coord.authTokens() }));
    },
  );

  app.delete(
    '/v1/auth/tokens/:name',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'Revoke a token',
          description:
            'Deletes the token: every node refuses it (401) once the answer is sent. Grants it holds live on until released by an admin revoke or expiry.',
          params: nameParam,
          response: {
            200: Type.Object(
              { name: Type.String(), revoked: Type.Boolean() },
              { ...open, description: 'the token is revoked' },
            ),
          },
          errors: ERRORS,
        },
        H,
      ),
    },
    async (request, reply) =>
      gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<{ name: string; revoked: true }>(request, {
          type: 'auth.revokeToken',
          name: request.params.name,
        });
        return value;
      }),
  );

  app.put(
    '/v1/auth/roles/:name',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'Create or replace a role',
          description: `Rules by kind (${AUTH_KINDS.join(', ')}), name prefix and action (read, write; write implies read). "${ADMIN_ROLE}" is built in.`,
          params: nameParam,
          body: roleBody,
          response: { 200: roleView },
          errors: ERRORS,
        },
        H,
      ),
    },
    async (request, reply) =>
      gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<RoleView>(request, {
          type: 'auth.putRole',
          name: request.params.name,
          rules: request.body.rules as RoleView['rules'],
        });
        return value;
      }),
  );

  app.get(
    '/v1/auth/roles',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'List roles',
          description: `Every stored role with its rules (the built-in "${ADMIN_ROLE}" allows everything and is not listed).`,
          querystring: readQuery,
          response: {
            200: Type.Object(
              { roles: Type.Array(roleView) },
              { ...open, description: 'every role' },
            ),
          },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, () => ({ roles: coord.authRoles() }));
    },
  );

  app.delete(
    '/v1/auth/roles/:name',
    {
      schema: routeSchema(
        {
          tags: ['auth'],
          summary: 'Delete a role',
          description:
            'Refused with 409 in_use, naming the tokens, while tokens still name the role: revoke them first, or PUT the role with no rules to take its rights away.',
          params: nameParam,
          response: {
            200: Type.Object(
              { name: Type.String(), deleted: Type.Boolean() },
              { ...open, description: 'the role is deleted' },
            ),
          },
          errors: ERRORS,
        },
        H,
      ),
    },
    async (request, reply) =>
      gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<{ name: string; deleted: true }>(request, {
          type: 'auth.deleteRole',
          name: request.params.name,
        });
        return value;
      }),
  );
};
