/**
 * Turn Fastify/ajv validation errors into one SPEC §3 `invalid_argument` message that names the
 * field (`body.ttlMs must be an integer between 100 and 3600000`).
 */
import {
  NAME_PREFIX_RULE,
  NAME_RULE,
  NODE_ID_RULE,
  PRINTABLE_RULE,
  type StringRule,
} from '@tenure/coord-state';

/** The shared string rules by pattern: a pattern violation states the rule's problem. */
const RULES_BY_PATTERN: ReadonlyMap<string, StringRule> = new Map(
  [NAME_RULE, NAME_PREFIX_RULE, PRINTABLE_RULE, NODE_ID_RULE].map((r) => [r.pattern, r]),
);

interface AjvErrorLike {
  readonly instancePath?: string;
  readonly keyword?: string;
  readonly params?: Record<string, unknown>;
  readonly message?: string;
  readonly parentSchema?: Record<string, unknown>;
}

/** Field path like `body.fence.fencingToken` (slashes of the JSON pointer become dots). */
function fieldOf(context: string, e: AjvErrorLike): string {
  const path = (e.instancePath ?? '').split('/').filter((s) => s.length > 0);
  const p = e.params ?? {};
  if (e.keyword === 'required' && typeof p.missingProperty === 'string')
    path.push(p.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string')
    path.push(p.additionalProperty);
  return [context === 'querystring' ? 'query' : context, ...path].join('.');
}

/** The field and human message for the first validation error. */
export function describeValidation(
  context: string,
  errors: readonly AjvErrorLike[],
): { field: string; message: string } {
  const e = errors[0] ?? {};
  const field = fieldOf(context, e);
  const p = e.params ?? {};
  const s = e.parentSchema ?? {};
  let problem: string;
  switch (e.keyword) {
    case 'required':
      problem = 'is required';
      break;
    case 'additionalProperties':
      problem = 'is not allowed (unknown field)';
      break;
    case 'type':
      problem = `must be ${/^[aeio]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`;
      break;
    case 'minimum':
    case 'maximum':
      problem =
        typeof s.minimum === 'number' && typeof s.maximum === 'number'
          ? `must be between ${s.minimum} and ${s.maximum}`
          : `must be ${e.keyword === 'minimum' ? '≥' : '≤'} ${String(p.limit)}`;
      break;
    case 'pattern':
      if (RULES_BY_PATTERN.has(String(p.pattern)))
        problem = RULES_BY_PATTERN.get(String(p.pattern))!.problem;
      else if (String(p.pattern).startsWith('^[0-9]')) problem = 'must be a non-negative integer';
      else problem = `has an invalid format (must match ${String(p.pattern)})`;
      break;
    case 'maxLength':
      problem = `must be at most ${String(p.limit)} characters`;
      break;
    case 'minLength':
      problem = `must be at least ${String(p.limit)} characters`;
      break;
    case 'anyOf':
    case 'const':
    case 'enum':
      problem = 'has a value that is not allowed';
      break;
    default:
      problem = e.message ?? 'is invalid';
  }
  return { field, message: `${field} ${problem}` };
}
