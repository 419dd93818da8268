/**
 * The membership fault of the simulator (dissertation ch. 4): asked of whoever believes it leads,
 * at random moments (during partitions, crashes and pauses like every other fault):
 * - add a learner: a node outside every membership any node holds — wiped first, since a removed id
 *   may come back only with empty data (and so with no bootstrap voters, as `--join` starts);
 * - promote a learner (lagging ones too: the core must refuse them with `not_caught_up`);
 * - remove a member, the leader itself 30 % of the time;
 * - remove a voter that is down (an operator replacing a dead node; FaultProfile.removeDownVoterWeight);
 * - wipe a learner's data in place (it never votes, so losing its log is safe; the leader must notice
 *   its shorter log and resend it — the matchIndex clamp bug leaves it stuck).
 * The core refuses what the §4.1 rules forbid; the refusal is traced, not an error. A leader that
 * accepted a change may be cut off at once (FaultProfile.isolateAfterChangeProbability), leaving the
 * change uncommitted in its log alone while the others elect a new leader.
 */
import { decodeMembership, isMember } from '../core/membership.js';
import type { Membership, MembershipChange } from '../core/membership.js';
import type { NodeId } from '../core/types.js';
import type { SimRandom } from './prng.js';
import type { FaultProfile } from './sim-faults.js';
import type { SimNode } from './sim-node.js';

/** What the membership fault needs from the simulation. */
export interface MembershipTargets {
  readonly nodes: readonly SimNode[];
  leader(): SimNode | null;
  note(line: string): void;
  /** Cut `node` off from every other node for a while (SimFaults.isolate). */
  isolate(node: SimNode): void;
}

/** The knobs of the fault schedule that shape membership faults. */
export type MembershipKnobs = Pick<
  FaultProfile,
  'isolateAfterChangeProbability' | 'removeDownVoterWeight'
>;

/** Inject one membership fault (see the file comment). */
export function injectMembershipFault(
  targets: MembershipTargets,
  random: SimRandom,
  knobs: MembershipKnobs,
): void {
  const leader = targets.leader();
  const cs = leader?.configuration() ?? null;
  if (leader === null || cs === null) return;
  const m = cs.membership;
  // Keep at least two voters so the cluster can still survive something.
  const removable = [...m.voters, ...m.learners].filter(
    (id) => !m.voters.includes(id) || m.voters.length > 2,
  );
  const changeBy = (change: MembershipChange): void => {
    const accepted = propose(targets, leader, change);
    const p = knobs.isolateAfterChangeProbability;
    if (accepted && p > 0 && random.chance(p)) {
      targets.note(`membership: ${leader.id} cut off right after accepting the change`);
      targets.isolate(leader);
    }
  };
  const actions: (readonly [number, () => void])[] = [
    [3, () => addLearner(targets, leader, random, changeBy)],
  ];
  if (m.learners.length > 0) {
    actions.push([3, () => changeBy({ type: 'promote', id: random.pick(m.learners) })]);
    actions.push([1, () => wipeLearner(targets, random.pick(m.learners), random)]);
  }
  if (removable.length > 0) {
    actions.push([
      3,
      () => {
        const id =
          removable.includes(leader.id) && random.chance(0.3) ? leader.id : random.pick(removable);
        changeBy({ type: 'remove', id });
      },
    ]);
  }
  const downVoters = removable.filter(
    (id) => m.voters.includes(id) && !targets.nodes.find((n) => n.id === id)!.up,
  );
  if (downVoters.length > 0 && knobs.removeDownVoterWeight > 0) {
    actions.push([
      knobs.removeDownVoterWeight,
      () => changeBy({ type: 'remove', id: random.pick(downVoters) }),
    ]);
  }
  const total = actions.reduce((sum, [w]) => sum + w, 0);
  let roll = random.between(0, total);
  for (const [weight, act] of actions) {
    if (roll < weight) return act();
    roll -= weight;
  }
}

function wipeLearner(targets: MembershipTargets, id: NodeId, random: SimRandom): void {
  const node = targets.nodes.find((n) => n.id === id)!;
  if (!node.up) return;
  targets.note(`membership: wipe learner ${node.id} in place`);
  node.wipe(random.fork());
}

/** Ask `leader` for `change`; true if it accepted (appended) it. */
function propose(targets: MembershipTargets, leader: SimNode, change: MembershipChange): boolean {
  const result = leader.changeMembership(change);
  const outcome =
    result === null ? 'not running' : result.ok ? `at index ${result.index}` : result.reason;
  targets.note(`membership: ${leader.id} ${change.type} ${change.id} → ${outcome}`);
  return result?.ok === true;
}

/** Add a node no log names as a member; wipe it first so it returns empty. */
function addLearner(
  targets: MembershipTargets,
  leader: SimNode,
  random: SimRandom,
  changeBy: (change: MembershipChange) => void,
): void {
  const outsiders = targets.nodes.filter((n) => n.up && !memberAnywhere(targets, n.id));
  if (outsiders.length === 0) return;
  const node = random.pick(outsiders);
  if (node.lastIndex() > 0) {
    targets.note(`membership: wipe ${node.id} before it rejoins`);
    node.wipe(random.fork());
  }
  changeBy({ type: 'addLearner', id: node.id });
}

/** True if the newest membership in any node's log (or its bootstrap voters) names `id`. */
function memberAnywhere(targets: MembershipTargets, id: NodeId): boolean {
  return targets.nodes.some((n) => isMember(newestMembership(n), id));
}

function newestMembership(node: SimNode): Membership {
  const log = node.storage.volatileView;
  for (let i = log.lastIndex; i >= 1; i--) {
    const e = log.entryAt(i)!;
    if (e.type !== 'config') continue;
    const m = decodeMembership(e.data);
    if (m !== null) return m;
  }
  return { voters: node.bootstrapVoters, learners: [] };
}
