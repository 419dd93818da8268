/** Human-readable lines and JSON error objects the CLI prints. Pure functions of their input. */
import type {
  ClusterMember,
  ClusterView,
  ElectionView,
  HistoryGrant,
  LeaseView,
  LeaseWatchView,
  MembersView,
  SemaphoreView,
  SessionView,
  SharedLeaseView,
} from '../contract.js';
import { formatDurationMs } from '../duration.js';
import { TenureError } from '../errors.js';
import { UsageError } from './exit-codes.js';

/** How the CLI is given a token (docs/security.md), said after a 401. */
const TOKEN_HINT = ' (give a token with --auth-token <token> or TENURE_TOKEN)';

/**
 * `code: message` of a TenureError (with the outcome-unknown warning, or after `unauthorized`
 * how to give a token), else the message.
 */
export function describeError(error: unknown): string {
  if (error instanceof TenureError)
    return `${error.code}: ${error.message}${error.outcomeUnknown ? ' (outcome unknown: the operation may have taken effect)' : ''}${error.code === 'unauthorized' ? TOKEN_HINT : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/** The `error` object of `--json` output: code, status, message, outcomeUnknown and the details. */
export function errorJson(error: unknown): Record<string, unknown> {
  if (error instanceof TenureError)
    return {
      code: error.code,
      status: error.status,
      message: error.message,
      outcomeUnknown: error.outcomeUnknown,
      ...error.details,
    };
  if (error instanceof UsageError) return { code: 'usage', message: error.message };
  return { code: 'error', message: error instanceof Error ? error.message : String(error) };
}

/** One line for a live grant; a shared name: one line per shared holder under a header. */
export function formatLease(view: LeaseView | SharedLeaseView): string {
  if ('holders' in view)
    return [
      `${view.name} mode=shared holders=${view.holders.length}`,
      ...view.holders.map(
        (h) =>
          `  holder=${h.holder} fencingToken=${h.fencingToken} remaining=${formatDurationMs(h.remainingMs)}${h.session === undefined ? '' : ` session=${h.session}`}`,
      ),
    ].join('\n');
  const session = (view as { session?: string }).session;
  const ttl = session === undefined ? formatDurationMs(view.ttlMs) : `session ${session}`;
  return `${view.name} holder=${view.holder} fencingToken=${view.fencingToken} ttl=${ttl} remaining=${formatDurationMs(view.remainingMs)}`;
}

/** A semaphore: limit, waiters, then one line per live permit. */
export function formatSemaphore(view: SemaphoreView): string {
  return [
    `${view.name} limit=${view.limit} holders=${view.holders.length} waiters=${view.waiters}`,
    ...view.holders.map(
      (h) =>
        `  holder=${h.holder} fencingToken=${h.fencingToken} remaining=${formatDurationMs(h.remainingMs)}${h.session === undefined ? '' : ` session=${h.session}`}`,
    ),
  ].join('\n');
}

/** A session: ttl and time left, then what is bound to it. */
export function formatSession(view: SessionView): string {
  const bound = [
    ...view.leases.map((l) => `  lease ${l.name} fencingToken=${l.fencingToken}`),
    ...view.semaphores.map((s) => `  semaphore ${s.name} fencingToken=${s.fencingToken}`),
    ...view.candidacies.map((c) => `  candidacy ${c.group}`),
  ];
  return [
    `${view.sessionId}${view.name === null ? '' : ` name=${view.name}`} ttl=${formatDurationMs(view.ttlMs)} remaining=${formatDurationMs(view.remainingMs)}`,
    ...bound,
  ].join('\n');
}

/** One line per grant of a holder history, newest first: who, token, times (cluster ms), end. */
export function formatHistory(name: string, grants: readonly HistoryGrant[]): string {
  if (grants.length === 0) return `${name}: never granted (or its history was dropped)`;
  return grants
    .map((g) => {
      const who = g.holder ?? g.candidate ?? '?';
      const end = g.endReason === null ? 'live' : `ended=${g.endedAtMs} reason=${g.endReason}`;
      const extra = `${g.mode === undefined ? '' : ` mode=${g.mode}`}${g.session === undefined ? '' : ` session=${g.session}`}`;
      return `${name} holder=${who} fencingToken=${g.fencingToken} granted=${g.grantedAtMs} ${end}${extra}`;
    })
    .join('\n');
}

/** One line for a watched lease (free, or its holder and token). */
export function formatWatch(view: LeaseWatchView): string {
  return view.holder === null
    ? `${view.name} free`
    : `${view.name} holder=${view.holder} fencingToken=${view.fencingToken}`;
}

/** One line for an election: leader (value, token), number of candidates, revision. */
export function formatElection(view: ElectionView): string {
  const leader =
    view.leader === null
      ? 'none'
      : `${view.leader.candidate} value=${JSON.stringify(view.leader.value)} fencingToken=${view.leader.fencingToken}`;
  return `${view.group} leader=${leader} candidates=${view.candidates.length} revision=${view.revision}`;
}

/** The answering node's view of the cluster, one member per line (progress fields when known). */
export function formatCluster(view: ClusterView): string {
  const lines = [
    `answered by ${view.id}: leader=${view.leader ?? 'none'} term=${view.term} commitIndex=${view.commitIndex} appliedIndex=${view.appliedIndex}`,
  ];
  return [...lines, ...view.members.map(formatMember)].join('\n');
}

/** `tenure cluster members|add|promote|remove` text: one member per line, then the config index. */
export function formatMembers(view: MembersView): string {
  return [`members (configIndex ${view.configIndex}):`, ...view.members.map(formatMember)].join(
    '\n',
  );
}

/**
 * One member line: id, role, addresses, then the leader's view when the answer carries it
 * (`reachable=yes|no`, `lag=N entries`, `matchIndex`, `lastContact`; docs/api.md, Cluster and
 * operations).
 */
export function formatMember(m: ClusterMember): string {
  const extra = [
    m.reachable === undefined ? '' : ` reachable=${m.reachable ? 'yes' : 'no'}`,
    m.lagEntries === undefined ? '' : ` lag=${m.lagEntries}`,
    m.matchIndex === undefined ? '' : ` matchIndex=${m.matchIndex}`,
    m.lastContactMs === undefined ? '' : ` lastContact=${formatDurationMs(m.lastContactMs)}`,
  ].join('');
  return `  ${m.id.padEnd(6)} ${m.role.padEnd(9)} http=${m.httpAddress} raft=${m.raftAddress}${extra}`;
}
