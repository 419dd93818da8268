/**
 * What each route needs with auth on (docs/security.md): the one place that maps a request to
 * its needs, by URL, so a new route is covered by where it lives rather than by remembering to
 * declare it. A route may still declare `config: { access }` to override the table.
 *
 * - `/healthz`, `/readyz`, and `GET /v1/cluster/members/{id}` (a starting node asks it whether it
 *   lost its data or was removed, before it can hold any token): open to everyone.
 * - `GET /v1/cluster`, `/metrics`, `/docs…`: any valid token.
 * - cluster changes (`/v1/cluster/…`), membership, auth, revoke, snapshot and backup: `admin`.
 * - `/v1/leases`, `/v1/semaphores`, `/v1/elections`, `/v1/kv`, `/v1/sessions`: `read` for GET,
 *   else `write`, on the kind, for the route's name (a list: its `prefix`; a session: its name).
 * - `/v1/fence/check`: `read` on the kind it names; `/v1/watch`: `read` on every kind it asks.
 * - anything else under `/v1`: `admin` (a route nobody mapped is closed, not open).
 */
import { AUTH_KINDS, type AuthKind, type AuthNeed } from '@tenure/coord-state';

/** One need of a request; `shown` is how a 403 names the resource when not by `name` alone. */
export type Need = AuthNeed & { readonly shown?: string };

/** What a request needs: nothing, any valid token, or every one of `needs`. */
export type Access =
  { readonly open: true } | { readonly anyToken: true } | { readonly needs: readonly Need[] };

/** The parts of a request the table looks at (route URL pattern, parsed params, body, query). */
export interface AccessRequest {
  readonly method: string;
  /** The route's URL pattern (`/v1/leases/:name/renew`), or the raw path for unknown routes. */
  readonly route: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  readonly query: Readonly<Record<string, unknown>>;
  /** The name of a live session (for rules by session name), or null when unknown. */
  readonly sessionName: (sessionId: string) => string | null;
}

const ADMIN: Access = { needs: [{ admin: true }] };
const KIND_OF_FAMILY: Readonly<Record<string, AuthKind>> = {
  leases: 'lease',
  semaphores: 'semaphore',
  elections: 'election',
  kv: 'kv',
  sessions: 'session',
};
const ADMIN_FAMILIES = new Set(['auth', 'cluster', 'members', 'membership', 'snapshot', 'backup']);

function str(x: unknown): string | null {
  return typeof x === 'string' ? x : null;
}

function field(x: unknown, key: string): unknown {
  return typeof x === 'object' && x !== null ? (x as Record<string, unknown>)[key] : undefined;
}

/**
 * The name a request acts on for rules by prefix, and how a 403 names it: a session by its id
 * (its rules match its `name`, which may be empty or unknown), with the name when it has one.
 */
function nameOf(r: AccessRequest, kind: AuthKind): { name: string; shown?: string } {
  const p = r.params;
  const named = str(p['name']) ?? str(p['group']) ?? str(p['key']);
  if (named !== null) return { name: named };
  if (kind === 'session') {
    const id = str(p['sessionId']) ?? str(p['id']);
    if (id === null) return { name: str(field(r.body, 'name')) ?? '' };
    const name = r.sessionName(id) ?? '';
    return { name, shown: name === '' ? id : `${id} (named "${name}")` };
  }
  return { name: str(r.query['prefix']) ?? '' };
}

function watchNeeds(r: AccessRequest): Access {
  const asked = str(r.query['kinds']);
  const kinds =
    asked === null
      ? AUTH_KINDS
      : AUTH_KINDS.filter((k) => asked.split(',').some((a) => a.trim() === k));
  const prefix = str(r.query['prefix']) ?? '';
  return { needs: kinds.map((kind) => ({ kind, name: prefix, action: 'read' as const })) };
}

function fenceNeeds(r: AccessRequest): Access {
  for (const kind of ['lease', 'election', 'semaphore'] as const) {
    const name = str(field(r.body, kind));
    if (name !== null) return { needs: [{ kind, name, action: 'read' }] };
  }
  return { needs: [{ kind: 'lease', name: '', action: 'read' }] };
}

/** The needs of a request (see the module doc for the table). */
export function accessFor(r: AccessRequest): Access {
  const path = r.route.split('?')[0]!;
  if (path === '/healthz' || path === '/readyz') return { open: true };
  if (path === '/v1/cluster/members/:id' && r.method === 'GET') return { open: true };
  if (path === '/metrics' || path === '/docs' || path.startsWith('/docs/'))
    return { anyToken: true };
  if (path === '/v1/cluster' && r.method === 'GET') return { anyToken: true };
  const parts = path.split('/');
  if (parts[1] !== 'v1') return ADMIN;
  const family = parts[2] ?? '';
  if (ADMIN_FAMILIES.has(family) || parts[parts.length - 1] === 'revoke') return ADMIN;
  if (family === 'watch') return watchNeeds(r);
  if (family === 'fence') return fenceNeeds(r);
  const kind = KIND_OF_FAMILY[family];
  if (kind === undefined) return ADMIN;
  const action = r.method === 'GET' || r.method === 'HEAD' ? 'read' : 'write';
  return { needs: [{ kind, action, ...nameOf(r, kind) }] };
}

/** The 403 message for a need that was not met: the action and kind, or `admin`. */
export function describeNeed(need: Need): string {
  if (need.admin === true) return 'this route needs the admin role';
  return `this token may not ${need.action} ${need.kind} ${need.shown ?? `"${need.name}"`}`;
}
