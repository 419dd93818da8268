/**
 * `client.auth`: tokens and roles (docs/api.md, Authentication; docs/security.md). Every call needs
 * a client made with an admin token. `createToken` answers the secret once (absent on an
 * idempotent replay of the same call).
 */
import type { CallOptions } from './transport.js';

/** Kinds a role rule names. */
export type AuthKind = 'lease' | 'semaphore' | 'election' | 'kv' | 'session';

/** One rule: these actions (write implies read) on names of these kinds starting with `prefix`. */
export interface RoleRule {
  readonly kinds: readonly AuthKind[];
  readonly prefix: string;
  readonly actions: readonly ('read' | 'write')[];
}

/** Per-token limits; a field left out takes the server's default. */
export interface TokenQuota {
  readonly requestsPerSecond?: number;
  readonly leasesMax?: number;
  readonly sessionsMax?: number;
  readonly waitersMax?: number;
}

/** A token as listed (never its secret). */
export interface TokenInfo {
  readonly name: string;
  readonly roles: readonly string[];
  readonly quota: TokenQuota | null;
}

/** A created token: its secret is shown this once. */
export interface CreatedToken extends TokenInfo {
  readonly secret?: string;
}

/** A role with its rules. */
export interface RoleInfo {
  readonly name: string;
  readonly rules: readonly RoleRule[];
}

/** Options of a mutating auth call (an explicit key makes a retry from another process safe). */
export interface AuthCallOptions extends CallOptions {
  readonly idempotencyKey?: string;
}

/** The auth routes as methods. */
export interface AuthApi {
  createToken(
    spec: { name: string; roles: readonly string[]; quota?: TokenQuota },
    options?: AuthCallOptions,
  ): Promise<CreatedToken>;
  listTokens(options?: CallOptions): Promise<TokenInfo[]>;
  revokeToken(name: string, options?: AuthCallOptions): Promise<{ name: string; revoked: true }>;
  putRole(name: string, rules: readonly RoleRule[], options?: AuthCallOptions): Promise<RoleInfo>;
  listRoles(options?: CallOptions): Promise<RoleInfo[]>;
  deleteRole(name: string, options?: AuthCallOptions): Promise<{ name: string; deleted: true }>;
}

/** How `authApi` reaches the server (the client's own mutate and read paths). */
export interface AuthTransport {
  mutate<T>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: unknown,
    options: AuthCallOptions,
  ): Promise<T>;
  read<T>(path: string, options: CallOptions): Promise<T>;
}

/** Builds `client.auth` over the client's transport. */
export function authApi(t: AuthTransport): AuthApi {
  const enc = encodeURIComponent;
  return {
    createToken: (spec, o = {}) => t.mutate('POST', '/v1/auth/tokens', spec, o),
    listTokens: async (o = {}) =>
      (await t.read<{ tokens: TokenInfo[] }>('/v1/auth/tokens', o)).tokens,
    revokeToken: (name, o = {}) => t.mutate('DELETE', `/v1/auth/tokens/${enc(name)}`, undefined, o),
    putRole: (name, rules, o = {}) => t.mutate('PUT', `/v1/auth/roles/${enc(name)}`, { rules }, o),
    listRoles: async (o = {}) => (await t.read<{ roles: RoleInfo[] }>('/v1/auth/roles', o)).roles,
    deleteRole: (name, o = {}) => t.mutate('DELETE', `/v1/auth/roles/${enc(name)}`, undefined, o),
  };
}
