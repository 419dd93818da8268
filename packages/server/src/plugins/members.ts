/**
 * Membership routes (docs/api.md "Membership"; procedures in docs/operations.md): list the members,
 * add a learner, promote a learner, remove a member. Changes run on the leader (forwarded like
 * writes), one at a time (409 `reconfiguration_in_progress`), and answer once committed with the
 * new member list. Adding a member that already has that address and promoting a voter are no-ops
 * that answer 200 (so `--join` may retry). `GET /v1/cluster/members/{id}` answers from this node's
 * own view, never forwarded: a starting node asks it to learn whether the cluster knows it.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RaftStatus } from '@tenure/raft';
import { NODE_ID_RULE } from '@tenure/coord-state';
import { canonicalIp, hostPort } from '../config/addresses.js';
import { cachedResolver, sameEndpoint, type Resolver } from '../cluster/endpoint-match.js';
import { SettingValueError } from '../config/setting.js';
import { HttpError, invalidArgument } from '../http-error.js';
import { emptyBodyAsObject } from '../json-body.js';
import { remainingMs } from '../request-context.js';
import { routeSchema } from '../route-schema.js';
import { readQuery } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';
import { memberViews } from '../member-view.js';

const open = { additionalProperties: true } as const;
const strict = { additionalProperties: false } as const;
const nodeId = (description: string) =>
  Type.String({ pattern: NODE_ID_RULE.pattern, maxLength: NODE_ID_RULE.charsMax, description });

const idParams = Type.Object({ id: nodeId('member id') }, strict);
const addBody = Type.Object(
  {
    id: nodeId('id of the new member'),
    raftAddress: Type.String({ maxLength: 300, description: 'its Raft address, host:port' }),
    httpAddress: Type.String({ maxLength: 300, description: 'its HTTP address, host:port' }),
  },
  strict,
);
const memberSchema = Type.Object(
  {
    id: Type.String({ description: 'node id' }),
    role: Type.Unsafe<'leader' | 'follower' | 'candidate' | 'learner'>({
      type: 'string',
      enum: ['leader', 'follower', 'candidate', 'learner'],
    }),
    httpAddress: Type.String({ description: 'host:port of the HTTP API' }),
    raftAddress: Type.String({ description: 'host:port of the Raft transport' }),
    matchIndex: Type.Optional(Type.Integer({ description: 'highest index replicated (leader)' })),
  },
  open,
);
const membersResponse = Type.Object(
  {
    members: Type.Array(memberSchema),
    configIndex: Type.Integer({
      description: 'log index of the membership in effect (0: initial)',
    }),
  },
  { ...open, description: 'the members (voters, then learners)' },
);
const probeResponse = Type.Object(
  {
    id: Type.String({ description: 'the member asked about' }),
    from: Type.String({ description: 'the node that answered' }),
    member: Type.Boolean({ description: 'a member in the membership in effect on `from`' }),
    matchIndex: Type.Optional(Type.Integer({ description: 'its replicated index (leader view)' })),
    hadData: Type.Boolean({
      description:
        '`from` saw it hold data: it acknowledged entries to `from` as leader, or `from` followed it as leader',
    }),
    configIndex: Type.Integer({ description: 'log index of that membership' }),
    commitIndex: Type.Integer({ description: 'commit index of `from`' }),
    leader: Type.Union([Type.String(), Type.Null()], { description: 'leader known to `from`' }),
  },
  { ...open, description: "one node's view of one member" },
);

/** The member list of `s` in the shape of docs/api.md. */
function membersBody(s: RaftStatus, opts: RoutePluginOptions) {
  const members = memberViews(s, opts.deps.config.peers, opts.deps.config.electionTimeoutMs).map(
    (m) => {
      const { lastContactMs: _unused, ...rest } = m;
      return rest;
    },
  );
  return { members, configIndex: s.configIndex };
}

/** Hosts that mean "every interface" when listening (canonicalIp form): nobody can dial them. */
const WILDCARD_IPS: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/**
 * `host:port` check of an address field (the one rule of config/addresses.ts), and an address the
 * other members can dial: port 0 (any port) and a wildcard host (0.0.0.0, [::]) name no listener.
 */
function address(field: string, text: string): string {
  let parsed: { host: string; port: number };
  try {
    parsed = hostPort(text);
  } catch (err) {
    if (err instanceof SettingValueError) throw invalidArgument(field, err.message);
    throw err;
  }
  if (parsed.port === 0)
    throw invalidArgument(
      field,
      `"${text}": port 0 cannot be dialled; give the port the node listens on`,
    );
  if (WILDCARD_IPS.has(canonicalIp(parsed.host)))
    throw invalidArgument(
      field,
      `"${text}": a wildcard address cannot be dialled; give the node's own address`,
    );
  return text;
}

export const memberRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { raft } = deps;
  const H = opts.schemas.headers;
  const tags = ['cluster'];

  app.get(
    '/v1/cluster/members',
    {
      schema: routeSchema(
        {
          tags,
          summary: 'List members',
          description:
            "The members in the leader's view (forwarded like a linearizable read; `consistency=stale`: this node's).",
          querystring: readQuery,
          response: { 200: membersResponse },
          errors: [400, 503, 504],
        },
        H,
      ),
    },
    async (request, reply) =>
      gw.read(request, reply, { consistency: request.query.consistency, extraMs: 0 }, () =>
        membersBody(raft.status(), opts),
      ),
  );

  app.get(
    '/v1/cluster/members/:id',
    {
      schema: routeSchema(
        {
          tags,
          summary: "This node's view of one member",
          description:
            'Whether `id` is a member in the membership in effect on this node (never forwarded); used by starting nodes.',
          params: idParams,
          response: { 200: probeResponse },
          errors: [400],
        },
        H,
      ),
    },
    async (request) => {
      const s = raft.status();
      const m = s.members.find((x) => x.id === request.params.id);
      return {
        id: request.params.id,
        from: s.id,
        member: m !== undefined,
        ...(m?.matchIndex !== undefined ? { matchIndex: m.matchIndex } : {}),
        hadData: m?.hadData === true,
        configIndex: s.configIndex,
        commitIndex: s.commitIndex,
        leader: s.leaderId,
      };
    },
  );

  app.post(
    '/v1/cluster/members',
    {
      schema: routeSchema(
        {
          tags,
          summary: 'Add a learner',
          description:
            'Adds `id` as a learner (receives the log, never votes). 200 with the members once committed; ' +
            'already a member at these addresses: 200 unchanged. 409 already_exists when the id is a ' +
            'member at other addresses, or when another member has this raftAddress or httpAddress.',
          body: addBody,
          response: { 200: membersResponse },
          errors: [400, 409, 413, 415, 503, 504],
        },
        H,
      ),
    },
    async (request, reply) => {
      const b = request.body;
      const raftAddress = address('body.raftAddress', b.raftAddress);
      const httpAddress = address('body.httpAddress', b.httpAddress);
      const resolve = cachedResolver();
      if (await sameEndpoint(httpAddress, raftAddress, resolve))
        throw invalidArgument(
          'body.httpAddress',
          'must differ from raftAddress (one port, one listener)',
        );
      return gw.onLeader(request, reply, 0, async () => {
        const known = raft.status().members.find((m) => m.id === b.id);
        if (known !== undefined) {
          if (
            known.raftAddress !== undefined &&
            known.httpAddress !== undefined &&
            (await sameEndpoint(known.raftAddress, raftAddress, resolve)) &&
            (await sameEndpoint(known.httpAddress, httpAddress, resolve))
          )
            return membersBody(raft.status(), opts);
          throw new HttpError('already_exists', `${b.id} is already a member at other addresses`, {
            raftAddress: known.raftAddress ?? null,
            httpAddress: known.httpAddress ?? null,
          });
        }
        await refuseTakenAddress(
          raft.status().members,
          b.id,
          { raftAddress, httpAddress },
          resolve,
        );
        const s = await raft.changeMembership(
          { type: 'addLearner', id: b.id, address: { id: b.id, raftAddress, httpAddress } },
          { timeoutMs: remainingMs(request.tenure) },
        );
        request.log.info({ id: b.id, raftAddress, httpAddress }, 'learner added');
        return membersBody(s, opts);
      });
    },
  );

  app.post(
    '/v1/cluster/members/:id/promote',
    {
      schema: routeSchema(
        {
          tags,
          summary: 'Promote a learner',
          description:
            'The learner becomes a voter once committed; 409 not_caught_up while it lags; a voter: 200 unchanged.',
          params: idParams,
          response: { 200: membersResponse },
          errors: [400, 404, 409, 413, 415, 503, 504],
        },
        H,
      ),
      preValidation: emptyBodyAsObject,
    },
    async (request, reply) => {
      const { id } = request.params;
      return gw.onLeader(request, reply, 0, async () => {
        const known = raft.status().members.find((m) => m.id === id);
        if (known === undefined) throw new HttpError('not_found', `${id} is not a member`);
        if (known.role !== 'learner') return membersBody(raft.status(), opts);
        const s = await raft.changeMembership(
          { type: 'promote', id },
          { timeoutMs: remainingMs(request.tenure) },
        );
        request.log.info({ id }, 'learner promoted');
        return membersBody(s, opts);
      });
    },
  );

  app.delete(
    '/v1/cluster/members/:id',
    {
      schema: routeSchema(
        {
          tags,
          summary: 'Remove a member',
          description:
            'Removes `id` (voter or learner); 200 with the members once committed. The leader removing itself hands ' +
            'leadership over first.',
          params: idParams,
          response: { 200: membersResponse },
          errors: [400, 404, 409, 413, 415, 503, 504],
        },
        H,
      ),
      preValidation: emptyBodyAsObject,
    },
    async (request, reply) => {
      const { id } = request.params;
      return gw.onLeader(request, reply, 0, async () => {
        const s = await raft.changeMembership(
          { type: 'remove', id },
          { timeoutMs: remainingMs(request.tenure) },
        );
        request.log.info({ id }, 'member removed');
        return membersBody(s, opts);
      });
    },
  );
};

/**
 * Two members must never share an address: the Raft links of both would refuse each other's
 * handshakes for good (docs/operations.md). An address of the new member matches another member's
 * Raft or HTTP address when it names the same listener (cluster/endpoint-match.ts: `localhost:7001`
 * is `127.0.0.1:7001`). Throws 409 already_exists naming the field and the member.
 */
async function refuseTakenAddress(
  members: readonly { id: string; raftAddress?: string; httpAddress?: string }[],
  id: string,
  wanted: { readonly raftAddress: string; readonly httpAddress: string },
  resolve: Resolver,
): Promise<void> {
  for (const m of members) {
    if (m.id === id) continue;
    const theirs = [m.raftAddress, m.httpAddress].filter((a): a is string => a !== undefined);
    for (const field of ['raftAddress', 'httpAddress'] as const) {
      for (const taken of theirs) {
        if (!(await sameEndpoint(wanted[field], taken, resolve))) continue;
        throw new HttpError(
          'already_exists',
          `${field} ${wanted[field]} is member ${m.id}'s address ${taken}`,
          { field: `body.${field}`, member: m.id },
        );
      }
    }
  }
}
