/**
 * `tenure auth token create|list|revoke` and `tenure auth role put|list|delete` (docs/security.md).
 * They need an admin token (`--auth-token` or TENURE_TOKEN). A created token's secret is printed
 * once; keep it, the cluster only stores its salted hash.
 */
import type { Command } from 'commander';
import type { AuthKind, RoleRule, TokenQuota } from '../../auth-api.js';
import { integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { UsageError } from '../exit-codes.js';

const KINDS: readonly AuthKind[] = ['lease', 'semaphore', 'election', 'kv', 'session'];

/**
 * Parses `--rule KINDS:PREFIX:ACTIONS`, e.g. `lease,semaphore:jobs.:write` (PREFIX may be empty
 * and may itself contain `:`; KINDS and ACTIONS are comma lists).
 */
export function parseRule(text: string): RoleRule {
  const first = text.indexOf(':');
  const last = text.lastIndexOf(':');
  if (first < 0 || last === first)
    throw new UsageError('--rule must be KINDS:PREFIX:ACTIONS, e.g. lease:jobs.:write');
  const kinds = text.slice(0, first).split(',');
  const actions = text.slice(last + 1).split(',');
  const badKind = kinds.find((k) => !(KINDS as readonly string[]).includes(k));
  if (badKind !== undefined)
    throw new UsageError(`--rule: kind "${badKind}" is not one of ${KINDS.join(', ')}`);
  const badAction = actions.find((a) => a !== 'read' && a !== 'write');
  if (badAction !== undefined)
    throw new UsageError(`--rule: action "${badAction}" is not read or write`);
  return {
    kinds: kinds as AuthKind[],
    prefix: text.slice(first + 1, last),
    actions: actions as ('read' | 'write')[],
  };
}

function collect<T>(parse: (text: string) => T): (text: string, prev: T[] | undefined) => T[] {
  return (text, prev) => [...(prev ?? []), parse(text)];
}

interface CreateOptions {
  role?: string[];
  rps?: number;
  leasesMax?: number;
  sessionsMax?: number;
  waitersMax?: number;
}

function quotaOf(o: CreateOptions): TokenQuota | undefined {
  const q: { -readonly [k in keyof TokenQuota]: number } = {};
  if (o.rps !== undefined) q.requestsPerSecond = o.rps;
  if (o.leasesMax !== undefined) q.leasesMax = o.leasesMax;
  if (o.sessionsMax !== undefined) q.sessionsMax = o.sessionsMax;
  if (o.waitersMax !== undefined) q.waitersMax = o.waitersMax;
  return Object.keys(q).length === 0 ? undefined : q;
}

function addTokenCommands(auth: Command, run: CliRun): void {
  const token = auth.command('token').description('tokens (bearer credentials)');
  token
    .command('create')
    .description('create a token and print its secret (shown once)')
    .argument('<name>', 'token name')
    .option('--role <role>', 'a role of the token (repeatable)', collect(String))
    .option('--rps <n>', 'quota: requests per second per node', integerArg('--rps'))
    .option('--leases-max <n>', 'quota: live lease grants', integerArg('--leases-max'))
    .option('--sessions-max <n>', 'quota: live sessions', integerArg('--sessions-max'))
    .option('--waiters-max <n>', 'quota: queued waiters', integerArg('--waiters-max'))
    .action(async (name: string, o: CreateOptions, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const quota = quotaOf(o);
      const made = await client.auth.createToken(
        { name, roles: o.role ?? [], ...(quota === undefined ? {} : { quota }) },
        callOptions(timeoutMs),
      );
      run.emit(json, made, made.secret ?? '(secret already shown by an earlier identical call)');
    });
  token
    .command('list')
    .description('list tokens with roles and quotas (never secrets)')
    .action(async (_o: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const tokens = await client.auth.listTokens(callOptions(timeoutMs));
      const lines = tokens.map(
        (t) => `${t.name}\troles=${t.roles.join(',')}\tquota=${JSON.stringify(t.quota)}`,
      );
      run.emit(json, tokens, lines.length === 0 ? '(no tokens)' : lines.join('\n'));
    });
  token
    .command('revoke')
    .description('revoke a token: every node refuses it once this answers')
    .argument('<name>', 'token name')
    .action(async (name: string, _o: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const r = await client.auth.revokeToken(name, callOptions(timeoutMs));
      run.emit(json, r, `revoked ${name}`);
    });
}

function addRoleCommands(auth: Command, run: CliRun): void {
  const role = auth.command('role').description('roles (rules by kind, name prefix and action)');
  role
    .command('put')
    .description('create or replace a role')
    .argument('<name>', 'role name')
    .option(
      '--rule <KINDS:PREFIX:ACTIONS>',
      'e.g. lease,semaphore:jobs.:write (repeatable)',
      collect(parseRule),
    )
    .action(async (name: string, o: { rule?: RoleRule[] }, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const r = await client.auth.putRole(name, o.rule ?? [], callOptions(timeoutMs));
      run.emit(json, r, `role ${name}: ${r.rules.length} rule(s)`);
    });
  role
    .command('list')
    .description('list roles with their rules')
    .action(async (_o: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const roles = await client.auth.listRoles(callOptions(timeoutMs));
      const lines = roles.map(
        (r) =>
          `${r.name}\t${r.rules.map((x) => `${x.kinds.join(',')}:${x.prefix}:${x.actions.join(',')}`).join(' ')}`,
      );
      run.emit(
        json,
        roles,
        lines.length === 0 ? '(no roles; admin is built in)' : lines.join('\n'),
      );
    });
  role
    .command('delete')
    .description('delete a role')
    .argument('<name>', 'role name')
    .action(async (name: string, _o: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const r = await client.auth.deleteRole(name, callOptions(timeoutMs));
      run.emit(json, r, `deleted role ${name}`);
    });
}

/** Adds the `auth` command group to `program`. */
export function addAuthCommands(program: Command, run: CliRun): void {
  const auth = program.command('auth').description('tokens and roles (needs an admin token)');
  addTokenCommands(auth, run);
  addRoleCommands(auth, run);
}
