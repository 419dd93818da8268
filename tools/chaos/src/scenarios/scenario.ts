/**
 * What a named scenario is (docs/failure-scenarios.md BC-XX): a scripted client and fault sequence
 * against a fresh cluster, judged by its own expectations (one verdict named after the case)
 * plus the general checkers over the history it recorded.
 */
import type { CheckResult, Violation } from '../types.js';
import type { Session } from '../runner/session.js';

/** A scenario's own verdict. */
export type ScenarioVerdict = CheckResult;

/** A registered scenario. */
export interface Scenario {
  /** Case number, e.g. `BC-08`. */
  readonly name: string;
  readonly title: string;
  /** Faults it needs (for --list). */
  readonly faults: string;
  /** Start nodes under libfaketime with a timestamp file (wall-clock steps). */
  readonly wallClockFaults?: boolean;
  /** Extra server flags for every node of the scenario's cluster (e.g. snapshot settings). */
  readonly serverArgs?: readonly string[];
  /**
   * Runs the scenario on an open session (cluster up, leader known). `repetitions` scales the
   * number of rounds (docs/failure-scenarios.md asks for ≥ 20 in full runs; the test slice uses fewer).
   * Must heal what it injects; may throw only on harness errors.
   */
  run(
    session: Session,
    options: { readonly repetitions: number; readonly log: (line: string) => void },
  ): Promise<ScenarioVerdict>;
}

/** Collects violations and stats into a verdict. */
export class VerdictBuilder {
  readonly violations: Violation[] = [];
  readonly stats: Record<string, number | string> = {};

  /** Records a violation when `condition` is false. Returns `condition`. */
  expect(
    condition: boolean,
    property: string,
    message: string,
    extra: Omit<Violation, 'property' | 'message'> = {},
  ): boolean {
    if (!condition) this.violations.push({ property, message, ...extra });
    return condition;
  }

  /** Adds `by` to a counter stat. */
  count(stat: string, by = 1): void {
    this.stats[stat] = Number(this.stats[stat] ?? 0) + by;
  }

  build(): ScenarioVerdict {
    return { ok: this.violations.length === 0, violations: this.violations, stats: this.stats };
  }
}
