/**
 * Turn Fastify/Ajv validation errors into one `invalid_argument` message that names the field
 * (`body.ttlMs must be between 100 and 3600000`; docs/api.md, Errors). Fields are `body.…`,
 * `query.…`, `params.…` or `header <Name>`; a string rule of coord-state states its own problem.
 */
import {
  NAME_PREFIX_RULE,
  NAME_RULE,
  NODE_ID_RULE,
  PRINTABLE_RULE,
  type StringRule,
} from '@tenure/coord-state';
import { HEADER_NAMES, HEADER_PROBLEMS } from './schemas.js';

/** The shared string rules by pattern: a pattern violation states the rule's problem. */
const RULES_BY_PATTERN: ReadonlyMap<string, StringRule> = new Map(
  [NAME_RULE, NAME_PREFIX_RULE, PRINTABLE_RULE, NODE_ID_RULE].map((r) => [r.pattern, r]),
);

/** The parts of an Ajv error (with `verbose: true`) that a message uses. */
export interface AjvErrorLike {
  readonly instancePath?: string;
  readonly keyword?: string;
  readonly params?: Record<string, unknown>;
  readonly message?: string;
  readonly parentSchema?: Record<string, unknown>;
  readonly data?: unknown;
}

/** Field of an error: `body.fence.fencingToken`, `query.limit`, `header Request-Timeout-Ms`. */
function fieldOf(context: string, e: AjvErrorLike): string {
  const path = (e.instancePath ?? '').split('/').filter((s) => s.length > 0);
  const p = e.params ?? {};
  if (e.keyword === 'required' && typeof p.missingProperty === 'string')
    path.push(p.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string')
    path.push(p.additionalProperty);
  if (context === 'headers') return `header ${path.map((h) => HEADER_NAMES[h] ?? h).join('.')}`;
  return [context === 'querystring' ? 'query' : context, ...path].join('.');
}

function rangeProblem(e: AjvErrorLike): string {
  const s = e.parentSchema ?? {};
  if (typeof s.minimum === 'number' && typeof s.maximum === 'number')
    return `must be between ${s.minimum} and ${s.maximum}`;
  return `must be ${e.keyword === 'minimum' ? '≥' : '≤'} ${String(e.params?.limit)}`;
}

function patternProblem(e: AjvErrorLike): string {
  const pattern = String(e.params?.pattern);
  return RULES_BY_PATTERN.get(pattern)?.problem ?? `has an invalid format (must match ${pattern})`;
}

function typeProblem(e: AjvErrorLike): string {
  const type = String(e.params?.type);
  return `must be ${/^[aeio]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** Problem text by Ajv keyword. */
const PROBLEMS: Readonly<Record<string, (e: AjvErrorLike) => string>> = {
  required: () => 'is required',
  additionalProperties: () => 'is not allowed (unknown field)',
  type: typeProblem,
  minimum: rangeProblem,
  maximum: rangeProblem,
  pattern: patternProblem,
  maxLength: (e) => `must be at most ${String(e.params?.limit)} characters`,
  minLength: (e) => `must be at least ${String(e.params?.limit)} characters`,
  anyOf: () => 'has a value that is not allowed',
  const: () => 'has a value that is not allowed',
  enum: () => 'has a value that is not allowed',
};

/** The field and human message for the first validation error of `context` (a request part). */
export function describeValidation(
  context: string,
  errors: readonly AjvErrorLike[],
): { field: string; message: string } {
  const e = errors[0] ?? {};
  const field = fieldOf(context, e);
  // A query parameter given twice arrives as an array, which no query schema accepts.
  const repeated = context === 'querystring' && Array.isArray(e.data) && e.instancePath !== '';
  const header = context === 'headers' ? (e.instancePath ?? '').split('/')[1] : undefined;
  const stated = header !== undefined ? HEADER_PROBLEMS[header] : undefined;
  const problem = repeated
    ? 'must be given once'
    : (stated ?? PROBLEMS[e.keyword ?? '']?.(e) ?? e.message ?? 'is invalid');
  return { field, message: `${field} ${problem}` };
}
