/**
 * The workload module of the chaos harness (types.ts module contract): `createWorkload` and
 * `createHistory` for the runner.
 */
import type { HistoryFactory, WorkloadFactory } from '../types.js';
import { createTenureWorkload } from './tenure-workload.js';
import { createRecorder } from './history.js';

export {
  createTenureWorkload,
  defaultWorkloadOptions,
  type TenureWorkloadOptions,
} from './tenure-workload.js';
export { createRecorder, type HistoryRecorder } from './history.js';
export { Requester, type RequestSpec, type RequestResult } from './request.js';

/** types.ts `WorkloadFactory`: the mixed Tenure workload (knobs via `options.workload`, see TenureWorkloadOptions). */
export const createWorkload: WorkloadFactory = (options) => createTenureWorkload(options);

/** types.ts `HistoryFactory`: an in-memory recorder on the run clock. */
export const createHistory: HistoryFactory = (clock) => createRecorder(clock);
