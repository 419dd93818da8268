/**
 * Tokens and roles as replicated state (docs/security.md, "Tokens, roles and ownership").
 *
 * A token record holds a salted hash of the secret, never the secret: the server computes the
 * hash (a memory-hard KDF) before proposing, so `apply` stays pure and every replica stores the
 * same bytes. A role is a list of rules by kind, name prefix and action; the built-in `admin`
 * role allows everything. `isAllowed` is the one place that decides what a token may do.
 */
import type { CommandResult } from './api.js';
import type { StateError } from './errors.js';
import { exhausted, fail } from './fail.js';
import { isName, NAME_RULE } from './input-rules.js';

/** The resource families a role rule names (the watch stream's kinds). */
export type AuthKind = 'lease' | 'semaphore' | 'election' | 'kv' | 'session';
/** Every kind, in documentation order. */
export const AUTH_KINDS: readonly AuthKind[] = ['lease', 'semaphore', 'election', 'kv', 'session'];
/** `write` implies `read`. */
export type AuthAction = 'read' | 'write';
/** Every action. */
export const AUTH_ACTIONS: readonly AuthAction[] = ['read', 'write'];

/** The built-in role that allows every route, including cluster, auth, revoke and snapshots. */
export const ADMIN_ROLE = 'admin';
/**
 * The resource key (ChangeHub) published after every applied change of tokens or roles: open
 * watches and long-polls re-check their token against the new state (docs/security.md).
 */
export const AUTH_CHANGE_KEY = 'auth';

/** The token the first start with auth on creates from the operator's secret. */
export const ROOT_TOKEN_NAME = 'root';

/** Tokens at most (one record each, a few hundred bytes). */
export const TOKENS_MAX = 10_000;
/** Roles at most, besides `admin`. */
export const ROLES_MAX = 1_000;
/** Rules per role at most. */
export const RULES_PER_ROLE_MAX = 100;
/** Roles per token at most. */
export const ROLES_PER_TOKEN_MAX = 16;
/** Longest rule prefix, in characters (a name is at most 200 bytes). */
export const RULE_PREFIX_CHARS_MAX = 200;
/** Lowercase hex of 16–64 bytes: the shape of a salt and of a hash. */
const HEX_RE = /^[0-9a-f]{32,128}$/;

/** One rule of a role: these actions on names starting with `prefix` of these kinds. */
export interface RoleRule {
  readonly kinds: readonly AuthKind[];
  /** A plain string prefix of the name ('' = every name); a session's `name` for sessions. */
  readonly prefix: string;
  readonly actions: readonly AuthAction[];
}

/** Per-token limits; a field left out falls back to the server's default (docs/security.md). */
export interface TokenQuota {
  readonly requestsPerSecond?: number;
  readonly leasesMax?: number;
  readonly sessionsMax?: number;
  readonly waitersMax?: number;
}

/** What `GET /v1/auth/tokens` shows of a token: never its hash or secret. */
export interface TokenView {
  readonly name: string;
  readonly roles: readonly string[];
  readonly quota: TokenQuota | null;
}

/** A stored token: the view plus the salted hash (lowercase hex) the server verifies against. */
export interface TokenRecord extends TokenView {
  readonly hash: string;
  readonly salt: string;
}

/** A role as stored and shown. */
export interface RoleView {
  readonly name: string;
  readonly rules: readonly RoleRule[];
}

/** Auth commands. `hash`/`salt` are computed by the server; the secret never enters the log. */
export type AuthCommand =
  | {
      readonly type: 'auth.createToken';
      readonly name: string;
      readonly roles: readonly string[];
      readonly quota: TokenQuota | null;
      readonly hash: string;
      readonly salt: string;
    }
  | { readonly type: 'auth.revokeToken'; readonly name: string }
  | { readonly type: 'auth.putRole'; readonly name: string; readonly rules: readonly RoleRule[] }
  | { readonly type: 'auth.deleteRole'; readonly name: string };

/**
 * Who sent a command, with auth on: the token name and the caps the server resolved for it (its
 * quota, else the server defaults; null = no cap). Absent or null = auth off, or the server itself.
 */
export interface Principal {
  readonly token: string;
  readonly leasesMax: number | null;
  readonly sessionsMax: number | null;
  readonly waitersMax: number | null;
}

/** What a request needs: admin, or an action on a named resource of a kind. */
export type AuthNeed =
  | { readonly admin: true }
  | {
      readonly admin?: false;
      readonly kind: AuthKind;
      readonly name: string;
      readonly action: AuthAction;
    };

/** The replicated auth state: tokens and roles by name. Mutated only by `applyAuth`. */
export class AuthState {
  readonly tokens = new Map<string, TokenRecord>();
  readonly roles = new Map<string, RoleView>();
}

/**
 * True when `token` may do `need`: `admin` allows everything; otherwise some rule of one of its
 * roles covers the kind, the name's prefix and the action (`write` implies `read`).
 */
export function isAllowed(state: AuthState, token: TokenView, need: AuthNeed): boolean {
  if (token.roles.includes(ADMIN_ROLE)) return true;
  if (need.admin === true) return false;
  for (const roleName of token.roles) {
    const role = state.roles.get(roleName);
    if (role === undefined) continue;
    for (const r of role.rules) {
      if (!r.kinds.includes(need.kind) || !need.name.startsWith(r.prefix)) continue;
      if (
        r.actions.includes(need.action) ||
        (need.action === 'read' && r.actions.includes('write'))
      )
        return true;
    }
  }
  return false;
}

const OK_TYPES = new Set([
  'auth.createToken',
  'auth.revokeToken',
  'auth.putRole',
  'auth.deleteRole',
]);

/** True for the command types this module applies. */
export function isAuthCommandType(type: string): boolean {
  return OK_TYPES.has(type);
}

function invalid(field: string, message: string): StateError {
  return { code: 'invalid_argument', message: `${field}: ${message}`, details: { field } };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isCount(x: unknown): boolean {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function checkQuota(q: unknown): StateError | null {
  if (q === null) return null;
  if (!isRecord(q)) return invalid('quota', 'must be an object or null');
  for (const [k, v] of Object.entries(q)) {
    if (!['requestsPerSecond', 'leasesMax', 'sessionsMax', 'waitersMax'].includes(k))
      return invalid(`quota.${k}`, 'is not a quota field');
    if (!isCount(v)) return invalid(`quota.${k}`, 'must be a non-negative integer');
  }
  return null;
}

function checkRule(r: unknown, at: string): StateError | null {
  if (!isRecord(r)) return invalid(at, 'must be an object');
  const { kinds, prefix, actions } = r;
  if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((k) => AUTH_KINDS.includes(k)))
    return invalid(`${at}.kinds`, `must be a non-empty list of ${AUTH_KINDS.join(', ')}`);
  if (typeof prefix !== 'string' || prefix.length > RULE_PREFIX_CHARS_MAX)
    return invalid(`${at}.prefix`, `must be a string of ≤ ${RULE_PREFIX_CHARS_MAX} characters`);
  if (
    !Array.isArray(actions) ||
    actions.length === 0 ||
    !actions.every((a) => AUTH_ACTIONS.includes(a))
  )
    return invalid(`${at}.actions`, 'must be a non-empty list of read, write');
  return null;
}

/** Shape of an auth command (a replica must not trust its log); an invalid_argument, or null. */
export function checkAuthShape(cmd: Record<string, unknown>): StateError | null {
  if (!isName(cmd['name'])) return invalid('name', NAME_RULE.problem);
  switch (cmd['type']) {
    case 'auth.createToken': {
      const roles = cmd['roles'];
      if (
        !Array.isArray(roles) ||
        roles.length > ROLES_PER_TOKEN_MAX ||
        !roles.every((r) => isName(r))
      )
        return invalid('roles', `must be a list of at most ${ROLES_PER_TOKEN_MAX} role names`);
      if (typeof cmd['hash'] !== 'string' || !HEX_RE.test(cmd['hash']))
        return invalid('hash', 'must be 32–128 lowercase hex digits');
      if (typeof cmd['salt'] !== 'string' || !HEX_RE.test(cmd['salt']))
        return invalid('salt', 'must be 32–128 lowercase hex digits');
      return checkQuota(cmd['quota']);
    }
    case 'auth.putRole': {
      const rules = cmd['rules'];
      if (!Array.isArray(rules) || rules.length > RULES_PER_ROLE_MAX)
        return invalid('rules', `must be a list of at most ${RULES_PER_ROLE_MAX} rules`);
      for (let i = 0; i < rules.length; i++) {
        const e = checkRule(rules[i], `rules[${i}]`);
        if (e !== null) return e;
      }
      return null;
    }
    default:
      return null;
  }
}

/** Shape of an envelope's `principal` (absent, null, or a token name with caps). */
export function checkPrincipalShape(p: unknown): StateError | null {
  if (p === undefined || p === null) return null;
  if (!isRecord(p)) return invalid('principal', 'must be an object or null');
  if (!isName(p['token'])) return invalid('principal.token', NAME_RULE.problem);
  for (const f of ['leasesMax', 'sessionsMax', 'waitersMax']) {
    const v = p[f];
    if (v !== null && !isCount(v)) return invalid(`principal.${f}`, 'must be an integer or null');
  }
  return null;
}

/** A token's view (hash and salt left out). */
export function tokenView(t: TokenRecord): TokenView {
  return { name: t.name, roles: [...t.roles], quota: t.quota === null ? null : { ...t.quota } };
}

/**
 * Applies an auth command. createToken: `already_exists` for a taken name, `invalid_argument`
 * naming `body.roles` for an unknown role, `resource_exhausted` past TOKENS_MAX. revokeToken and
 * deleteRole: `not_found` when unknown. revokeToken: `last_admin` for the last token holding
 * `admin`. putRole and deleteRole: `invalid_argument` naming `params.name` for the built-in `admin`.
 */
export function applyAuth(state: AuthState, cmd: AuthCommand): CommandResult {
  switch (cmd.type) {
    case 'auth.createToken': {
      if (state.tokens.has(cmd.name))
        return fail('already_exists', `token ${cmd.name} already exists`, { name: cmd.name });
      const unknown = cmd.roles.find((r) => r !== ADMIN_ROLE && !state.roles.has(r));
      if (unknown !== undefined)
        return {
          ok: false,
          error: invalid('body.roles', `names role ${unknown}, which does not exist`),
        };
      if (state.tokens.size >= TOKENS_MAX) return exhausted('tokensMax', TOKENS_MAX);
      const rec: TokenRecord = {
        name: cmd.name,
        roles: [...cmd.roles],
        quota: cmd.quota === null ? null : { ...cmd.quota },
        hash: cmd.hash,
        salt: cmd.salt,
      };
      state.tokens.set(cmd.name, rec);
      return { ok: true, value: tokenView(rec) };
    }
    case 'auth.revokeToken': {
      const rec = state.tokens.get(cmd.name);
      if (rec === undefined) return fail('not_found', `no token ${cmd.name}`, { name: cmd.name });
      if (isLastAdmin(state, rec)) return lastAdmin(cmd.name);
      state.tokens.delete(cmd.name);
      return { ok: true, value: { name: cmd.name, revoked: true } };
    }
    case 'auth.putRole': {
      if (cmd.name === ADMIN_ROLE) return builtInAdmin('changed');
      if (!state.roles.has(cmd.name) && state.roles.size >= ROLES_MAX)
        return exhausted('rolesMax', ROLES_MAX);
      const role: RoleView = {
        name: cmd.name,
        rules: cmd.rules.map((r) => ({
          kinds: [...r.kinds],
          prefix: r.prefix,
          actions: [...r.actions],
        })),
      };
      state.roles.set(cmd.name, role);
      return { ok: true, value: role };
    }
    case 'auth.deleteRole': {
      if (cmd.name === ADMIN_ROLE) return builtInAdmin('deleted');
      if (!state.roles.has(cmd.name))
        return fail('not_found', `no role ${cmd.name}`, { name: cmd.name });
      const users = tokensNaming(state, cmd.name);
      if (users.length > 0) return roleInUse(cmd.name, users);
      state.roles.delete(cmd.name);
      return { ok: true, value: { name: cmd.name, deleted: true } };
    }
  }
}

/**
 * True when `rec` holds `admin` and no other token does: revoking it would lock the cluster for
 * good, since `root` is bootstrapped again only while no token exists at all (docs/security.md,
 * "The last admin token"). Decided here, in the replicated apply, so two concurrent revokes of the
 * last two admin tokens cannot both pass: the second one applied sees the first one gone.
 */
function isLastAdmin(state: AuthState, rec: TokenRecord): boolean {
  if (!rec.roles.includes(ADMIN_ROLE)) return false;
  for (const t of state.tokens.values())
    if (t.name !== rec.name && t.roles.includes(ADMIN_ROLE)) return false;
  return true;
}

function lastAdmin(name: string): CommandResult<never> {
  return fail(
    'last_admin',
    `token ${name} is the last token with the ${ADMIN_ROLE} role; create another ${ADMIN_ROLE} token first, then revoke this one`,
    { name },
  );
}

/** The built-in `admin` role is neither replaced nor deleted (`invalid_argument`, `params.name`). */
function builtInAdmin(verb: 'changed' | 'deleted'): CommandResult<never> {
  return {
    ok: false,
    error: invalid('params.name', `${ADMIN_ROLE} is built in and cannot be ${verb}`),
  };
}

/** Token names listed in a role-in-use refusal at most (the count is always whole). */
export const ROLE_USERS_SHOWN_MAX = 20;

/** Names of the tokens naming role `role`, sorted (same state ⇒ same answer on every replica). */
function tokensNaming(state: AuthState, role: string): string[] {
  const names: string[] = [];
  for (const t of state.tokens.values()) if (t.roles.includes(role)) names.push(t.name);
  return names.sort();
}

/**
 * `in_use`: a role that tokens still name is not deleted (docs/security.md, "Roles"): deleting it
 * would silently take rights from running clients, and a role made later under the same name would
 * silently give its rights to them. Names the tokens (the first ROLE_USERS_SHOWN_MAX) and the count.
 */
function roleInUse(role: string, users: readonly string[]): CommandResult<never> {
  const shown = users.slice(0, ROLE_USERS_SHOWN_MAX);
  const more = users.length > shown.length ? ` and ${users.length - shown.length} more` : '';
  return fail(
    'in_use',
    `role ${role} is named by ${users.length} token(s): ${shown.join(', ')}${more}; revoke them first, or replace the role with no rules to take its rights away`,
    { name: role, tokens: shown, tokenCount: users.length },
  );
}

/** Snapshot rows of the auth state, sorted by name (same state ⇒ same bytes). */
export function authRows(state: AuthState): { tokens: TokenRecord[]; roles: RoleView[] } {
  const byName = (a: { name: string }, b: { name: string }): number =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  return {
    tokens: [...state.tokens.values()].sort(byName),
    roles: [...state.roles.values()].sort(byName),
  };
}

/** Rebuilds the auth state from snapshot rows (absent in snapshots taken before auth existed). */
export function loadAuth(
  state: AuthState,
  rows: { tokens?: TokenRecord[]; roles?: RoleView[] } | undefined,
): void {
  for (const t of rows?.tokens ?? []) state.tokens.set(t.name, t);
  for (const r of rows?.roles ?? []) state.roles.set(r.name, r);
}
