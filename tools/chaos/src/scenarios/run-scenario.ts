/**
 * Runs one registered scenario on a fresh session: open (cluster up), run the script, heal
 * everything, then the session's checkers plus the scenario's own verdict.
 */
import { openSession, type SessionOptions, type SessionResult } from '../runner/session.js';
import { findScenario } from './registry.js';

/** Options of `runScenario`. */
export interface ScenarioRunOptions extends Omit<
  SessionOptions,
  'scenario' | 'wallClockFaults' | 'serverArgs'
> {
  readonly repetitions: number;
  readonly keepData?: boolean;
}

/** Runs scenario `name` (e.g. `BC-08`). Throws on an unknown name or a setup failure. */
export async function runScenario(
  name: string,
  options: ScenarioRunOptions,
): Promise<SessionResult> {
  const scenario = findScenario(name);
  const session = await openSession({
    ...options,
    scenario: scenario.name,
    wallClockFaults: scenario.wallClockFaults ?? false,
    ...(scenario.serverArgs !== undefined ? { serverArgs: scenario.serverArgs } : {}),
  });
  const startMs = performance.now();
  let verdict;
  try {
    verdict = await scenario.run(session, { repetitions: options.repetitions, log: options.log });
  } catch (error) {
    verdict = {
      ok: false,
      violations: [
        {
          property: 'harness',
          message: `scenario threw: ${(error as Error).stack ?? String(error)}`,
        },
      ],
      stats: {},
    };
  } finally {
    await session.healAll();
  }
  return session.finish(
    [],
    [{ checker: scenario.name, ...verdict, elapsedMs: performance.now() - startMs }],
    { keepData: options.keepData ?? false },
  );
}
