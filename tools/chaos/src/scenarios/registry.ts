/**
 * The scenario registry: docs/failure-scenarios.md case number → automated scenario, for
 * `npm run chaos -- --scenario BC-08` and `--list`.
 */
import type { Scenario } from './scenario.js';
import { bc02 } from './bc-02.js';
import { bc03 } from './bc-03.js';
import { bc05 } from './bc-05.js';
import { bc07 } from './bc-07.js';
import { bc08 } from './bc-08.js';
import { bc10 } from './bc-10.js';
import { bc11 } from './bc-11.js';
import { bc20 } from './bc-20.js';
import { bc22 } from './bc-22.js';
import { bc25 } from './bc-25.js';
import { bc26 } from './bc-26.js';

/** Every automated scenario, by case number. */
export const scenarios: readonly Scenario[] = [
  bc02,
  bc03,
  bc05,
  bc07,
  bc08,
  bc10,
  bc11,
  bc20,
  bc22,
  bc25,
  bc26,
];

/** The scenario named `name` (case-insensitive, `BC-8` and `bc08` accepted). Throws listing the known ones. */
export function findScenario(name: string): Scenario {
  const m = /^bc-?0*(\d+)$/i.exec(name.trim());
  const wanted = m === null ? name.trim().toUpperCase() : `BC-${m[1]!.padStart(2, '0')}`;
  const found = scenarios.find((s) => s.name === wanted);
  if (found === undefined)
    throw new Error(`unknown scenario ${name} (known: ${scenarios.map((s) => s.name).join(', ')})`);
  return found;
}
