/**
 * Election commands and candidacy expiry (docs/api.md Elections). The leader is the oldest live
 * candidacy; each new leadership gets a new, higher fencing token (the group's epoch); proclaim
 * changes the value and the revision, never the token. `revision` is the log index of the last
 * change of leader or leader value, so it increases even across retirement of the group.
 */
import assert from 'node:assert';
import type {
  CampaignValue,
  CommandResult,
  ElectionCommand,
  ElectionLeader,
  ElectionView,
} from './api.js';
import type { Core } from './core.js';
import { endEventType } from './events.js';
import { fail } from './fail.js';
import { nextFencingToken } from './fencing.js';
import type { GrantEndReason } from './history.js';
import {
  electionKey,
  type ApplyContext,
  type Candidacy,
  type ElectionRecord,
  type SessionRecord,
} from './model.js';
import type { ProclaimValue, ResignValue, RevokeValue } from './results.js';
import { ownerFor, refuseOther } from './ownership.js';
import { isSession, keepSessionAlive, sessionForGrant } from './session-members.js';
import { jsonSizeBytes } from './validate.js';

type Campaign = Extract<ElectionCommand, { type: 'election.campaign' }>;
type Renew = Extract<ElectionCommand, { type: 'election.renew' }>;
type Resign = Extract<ElectionCommand, { type: 'election.resign' }>;
type Proclaim = Extract<ElectionCommand, { type: 'election.proclaim' }>;
type Revoke = Extract<ElectionCommand, { type: 'election.revoke' }>;

/** The leader of a group as docs/api.md shows it, or null. */
export function leaderView(rec: ElectionRecord): ElectionLeader | null {
  const c = rec.leader;
  return c === null
    ? null
    : { candidate: c.candidate, value: c.value, fencingToken: rec.leaderToken };
}

/** docs/api.md `GET /v1/elections/{group}` view of a live group. */
export function electionView(rec: ElectionRecord): ElectionView {
  const candidates = [...rec.candidates.values()].map((c) => ({
    candidate: c.candidate,
    value: c.value,
  }));
  return { group: rec.group, leader: leaderView(rec), candidates, revision: rec.revision };
}

function campaignValue(rec: ElectionRecord, c: Candidacy): CampaignValue {
  const leader = leaderView(rec);
  const session = c.session === null ? {} : { session: c.session.sessionId };
  if (rec.leader === c)
    return {
      group: rec.group,
      candidate: c.candidate,
      elected: true,
      fencingToken: rec.leaderToken,
      leader,
      ...session,
    };
  return { group: rec.group, candidate: c.candidate, elected: false, leader, ...session };
}

function tooLarge(core: Core, value: unknown): CommandResult<never> | null {
  const sizeBytes = jsonSizeBytes(value as never);
  if (sizeBytes <= core.limits.valueBytesMax) return null;
  return fail(
    'payload_too_large',
    `value: ${sizeBytes} bytes is over the ${core.limits.valueBytesMax}-byte limit`,
    { field: 'value', sizeBytes, sizeBytesMax: core.limits.valueBytesMax },
  );
}

/**
 * Removes a candidacy; a leader's removal ends its leadership with `reason` at `endedAtMs`
 * (holder history and a change event). Does not settle.
 */
function removeCandidacy(
  core: Core,
  ctx: ApplyContext,
  c: Candidacy,
  reason: GrantEndReason,
  endedAtMs: number,
): void {
  const rec = c.election;
  assert(rec.candidates.get(c.candidate) === c, 'election: removing an unknown candidacy');
  rec.candidates.delete(c.candidate);
  core.wake.remove(c);
  c.session?.members.delete(c);
  core.candidatesCount--;
  if (rec.leader === c) {
    core.history.add(electionKey(rec.group), {
      holder: c.candidate,
      fencingToken: rec.leaderToken,
      grantedAtMs: rec.leaderSinceMs,
      endedAtMs,
      reason,
      mode: null,
      session: c.session?.sessionId ?? null,
    });
    ctx.events.push({
      kind: 'election',
      name: rec.group,
      type: endEventType(reason),
      candidate: c.candidate,
      fencingToken: rec.leaderToken,
      endReason: reason,
      ...(c.session === null ? {} : { session: c.session.sessionId }),
    });
    rec.leader = null;
    rec.leaderToken = 0;
    rec.leaderSinceMs = 0;
    rec.revision = ctx.index;
  }
  ctx.changed.add(electionKey(rec.group));
}

/**
 * Brings a group to rest: with no leader, the oldest candidacy becomes leader with a new token;
 * an empty group is retired (its revision remembered, bounded by retiredElectionsMax).
 */
export function settleElection(core: Core, ctx: ApplyContext, rec: ElectionRecord): void {
  if (rec.leader === null) {
    const first = rec.candidates.values().next();
    if (!first.done) {
      const c = first.value;
      rec.leader = c;
      rec.leaderToken = nextFencingToken(ctx.index, rec.lastFencingToken);
      rec.lastFencingToken = rec.leaderToken;
      rec.leaderSinceMs = ctx.nowMs;
      rec.revision = ctx.index;
      ctx.changed.add(electionKey(rec.group));
      ctx.events.push({
        kind: 'election',
        name: rec.group,
        type: 'elected',
        candidate: c.candidate,
        fencingToken: rec.leaderToken,
        value: c.value,
        ...(c.session === null ? {} : { session: c.session.sessionId }),
      });
    }
  }
  if (rec.candidates.size === 0) {
    core.elections.delete(rec.group);
    if (core.limits.retiredElectionsMax === 0) return;
    while (core.retiredElections.size >= core.limits.retiredElectionsMax)
      core.retiredElections.shift();
    core.retiredElections.set(rec.group, rec.revision);
  }
}

/** docs/api.md campaign: joins the queue (or refreshes ttl, and value when non-null) and answers the status. */
export function electionCampaign(
  core: Core,
  ctx: ApplyContext,
  cmd: Campaign,
): CommandResult<CampaignValue> {
  const big = tooLarge(core, cmd.value);
  if (big) return big;
  let rec = core.elections.get(cmd.group);
  const existing = rec?.candidates.get(cmd.candidate);
  if (rec !== undefined && existing !== undefined) {
    const refused = refuseOther(
      ctx,
      existing.owner,
      `candidacy of ${cmd.candidate} in ${cmd.group}`,
    );
    if (refused !== null) return refused;
    // A repeat refreshes the candidacy (its binding stays: a session-bound one keeps its session alive).
    if (existing.session === null && cmd.ttlMs !== null) existing.ttlMs = cmd.ttlMs;
    refresh(core, ctx, existing);
    if (cmd.value !== null && JSON.stringify(cmd.value) !== JSON.stringify(existing.value)) {
      existing.value = cmd.value;
      if (rec.leader === existing) {
        rec.revision = ctx.index;
        valueEvent(ctx, rec);
      }
    }
    return { ok: true, value: campaignValue(rec, existing) };
  }
  let session: SessionRecord | null = null;
  if ((cmd.session ?? null) !== null) {
    const s = sessionForGrant(core, cmd.session!);
    if (!isSession(s)) return s;
    const refused = refuseOther(ctx, s.owner, `session ${cmd.session}`);
    if (refused !== null) return refused;
    session = s;
  }
  if (rec === undefined) {
    if (core.elections.size >= core.limits.electionsMax)
      return fail('resource_exhausted', `electionsMax (${core.limits.electionsMax}) reached`, {
        limit: 'electionsMax',
      });
    rec = {
      group: cmd.group,
      candidates: new Map(),
      leader: null,
      leaderToken: 0,
      leaderSinceMs: 0,
      revision: core.retiredElections.get(cmd.group) ?? 0,
      lastFencingToken: 0,
    };
    core.retiredElections.delete(cmd.group);
    core.elections.set(cmd.group, rec);
  } else if (rec.candidates.size >= core.limits.candidatesPerGroupMax) {
    return fail(
      'resource_exhausted',
      `candidatesPerGroupMax (${core.limits.candidatesPerGroupMax}) reached for group ${cmd.group}`,
      { limit: 'candidatesPerGroupMax' },
    );
  }
  const c: Candidacy = {
    kind: 'candidacy',
    owner: ownerFor(ctx),
    election: rec,
    candidate: cmd.candidate,
    value: cmd.value,
    ttlMs: session === null ? cmd.ttlMs : null,
    session,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  rec.candidates.set(c.candidate, c);
  core.candidatesCount++;
  if (session === null) core.scheduleWake(c, ctx.nowMs + cmd.ttlMs!);
  else session.members.add(c);
  ctx.changed.add(electionKey(rec.group));
  settleElection(core, ctx, rec);
  return { ok: true, value: campaignValue(rec, c) };
}

/** docs/api.md election renew: keeps the candidacy alive for its ttl; unknown candidate → not_holder. */
export function electionRenew(
  core: Core,
  ctx: ApplyContext,
  cmd: Renew,
): CommandResult<CampaignValue> {
  const rec = core.elections.get(cmd.group);
  const c = rec?.candidates.get(cmd.candidate);
  if (rec === undefined || c === undefined)
    return fail('not_holder', `${cmd.candidate} is not a candidate in ${cmd.group}`, {
      leader: rec?.leader?.candidate ?? null,
    });
  const refused = refuseOther(ctx, c.owner, `candidacy of ${cmd.candidate} in ${cmd.group}`);
  if (refused !== null) return refused;
  refresh(core, ctx, c);
  return { ok: true, value: campaignValue(rec, c) };
}

/** docs/api.md resign: leaves the queue; a resigning leader passes leadership on with a new token. */
export function electionResign(
  core: Core,
  ctx: ApplyContext,
  cmd: Resign,
): CommandResult<ResignValue> {
  const rec = core.elections.get(cmd.group);
  const c = rec?.candidates.get(cmd.candidate);
  if (rec === undefined || c === undefined)
    return fail('not_holder', `${cmd.candidate} is not a candidate in ${cmd.group}`, {
      leader: rec?.leader?.candidate ?? null,
    });
  const refused = refuseOther(ctx, c.owner, `candidacy of ${cmd.candidate} in ${cmd.group}`);
  if (refused !== null) return refused;
  removeCandidacy(core, ctx, c, 'resigned', ctx.nowMs);
  settleElection(core, ctx, rec);
  return { ok: true, value: { group: cmd.group, resigned: true } };
}

/** docs/api.md proclaim: the leader with its current token sets the value (revision changes, token does not). */
export function electionProclaim(
  core: Core,
  ctx: ApplyContext,
  cmd: Proclaim,
): CommandResult<ProclaimValue> {
  const rec = core.elections.get(cmd.group);
  if (
    rec === undefined ||
    rec.leader === null ||
    rec.leader.candidate !== cmd.candidate ||
    rec.leaderToken !== cmd.fencingToken
  ) {
    return fail(
      'not_holder',
      `${cmd.candidate} is not the leader of ${cmd.group} with token ${cmd.fencingToken}`,
      { leader: rec?.leader?.candidate ?? null },
    );
  }
  const refused = refuseOther(ctx, rec.leader.owner, `leadership of ${cmd.group}`);
  if (refused !== null) return refused;
  const big = tooLarge(core, cmd.value);
  if (big) return big;
  rec.leader.value = cmd.value;
  rec.revision = ctx.index;
  ctx.changed.add(electionKey(rec.group));
  valueEvent(ctx, rec);
  return { ok: true, value: { group: cmd.group, leader: leaderView(rec)! } };
}

/**
 * Operator revoke (docs/primitives.md): ends the current leadership (only if it carries
 * `fencingToken`, when given; else not_holder) as if the leader's candidacy had expired; the
 * next candidate leads with a new token. Nothing to revoke → `revoked: []`.
 */
export function electionRevoke(
  core: Core,
  ctx: ApplyContext,
  cmd: Revoke,
): CommandResult<RevokeValue> {
  const rec = core.elections.get(cmd.group);
  const leader = rec?.leader ?? null;
  if (
    rec === undefined ||
    leader === null ||
    (cmd.fencingToken ?? rec.leaderToken) !== rec.leaderToken
  ) {
    if (cmd.fencingToken === null) return { ok: true, value: { group: cmd.group, revoked: [] } };
    return fail(
      'not_holder',
      `election ${cmd.group} has no live leadership with token ${cmd.fencingToken}`,
      { leader: leader?.candidate ?? null },
    );
  }
  const token = rec.leaderToken;
  removeCandidacy(core, ctx, leader, 'revoked', ctx.nowMs);
  settleElection(core, ctx, rec);
  return { ok: true, value: { group: cmd.group, revoked: [token] } };
}

/** Expiry phase: a candidacy was not renewed within its ttl. */
export function expireCandidacy(core: Core, ctx: ApplyContext, c: Candidacy): void {
  removeCandidacy(core, ctx, c, 'expired', c.dueMs);
}

/** Its session ended: the candidacy is withdrawn (a leadership ends `session_ended`). No settle. */
export function withdrawCandidacyBySession(
  core: Core,
  ctx: ApplyContext,
  c: Candidacy,
  endedAtMs: number,
): void {
  removeCandidacy(core, ctx, c, 'session_ended', endedAtMs);
}

/** Keeps a candidacy alive: by its ttl from now, or (session-bound) through its session. */
function refresh(core: Core, ctx: ApplyContext, c: Candidacy): void {
  if (c.session !== null) keepSessionAlive(core, ctx, c.session);
  else core.scheduleWake(c, ctx.nowMs + c.ttlMs!);
  ctx.changed.add(electionKey(c.election.group));
  ctx.events.push({
    kind: 'election',
    name: c.election.group,
    type: 'renewed',
    candidate: c.candidate,
    ...(c.session === null ? { ttlMs: c.ttlMs } : { ttlMs: null, session: c.session.sessionId }),
  });
}

function valueEvent(ctx: ApplyContext, rec: ElectionRecord): void {
  ctx.events.push({
    kind: 'election',
    name: rec.group,
    type: 'value',
    candidate: rec.leader!.candidate,
    fencingToken: rec.leaderToken,
    value: rec.leader!.value,
  });
}
