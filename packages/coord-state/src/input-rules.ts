/**
 * The input rules of Tenure, written once: names, holder/candidate ids, node ids, JSON values. The
 * state machine checks commands with them (validate.ts) and the HTTP server builds its route
 * schemas from the same patterns and constants, so the gateway and the replicas can never disagree
 * on what is valid (docs/api.md, "Input rules"). Patterns are JSON-Schema strings (Ajv compiles
 * them with the `u` flag, as this module does); predicates are for code.
 */
import type { JsonValue } from './api.js';

/** A string rule: a pattern (Unicode mode), its length bound and the problem a message states. */
export interface StringRule {
  /** JSON-Schema pattern, anchored, compiled in Unicode mode (`u`): lengths count code points. */
  readonly pattern: string;
  readonly charsMax: number;
  /** What a message says after the field name, e.g. `body.holder must be 1-200 ...`. */
  readonly problem: string;
}

/** Resource names (lease, election group, KV key): 1–200 bytes of [A-Za-z0-9._:-], letter/digit first. */
export const NAME_RULE: StringRule = {
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$',
  charsMax: 200,
  problem: 'must be 1-200 characters of [A-Za-z0-9._:-], starting with a letter or digit',
};

/** A name prefix in listings: 0–200 characters of the name set. */
export const NAME_PREFIX_RULE: StringRule = {
  pattern: '^[A-Za-z0-9._:-]{0,200}$',
  charsMax: 200,
  problem: 'must be 0-200 characters of [A-Za-z0-9._:-]',
};

/**
 * holder / candidate ids: 1–200 printable characters — no control characters (Unicode Cc) and no
 * lone UTF-16 surrogates (Cs). A lone surrogate is not well-formed Unicode: UTF-8 encoding turns it
 * into U+FFFD, so two distinct holders would collapse into one after encoding and share a grant.
 */
export const PRINTABLE_RULE: StringRule = {
  pattern: '^[^\\p{Cc}\\p{Cs}]{1,200}$',
  charsMax: 200,
  problem: 'must be 1-200 printable characters (no control characters or lone UTF-16 surrogates)',
};

/** Node ids of cluster members: 1–64 characters of [A-Za-z0-9_-], letter/digit first. */
export const NODE_ID_RULE: StringRule = {
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$',
  charsMax: 64,
  problem: 'must be 1-64 characters of [A-Za-z0-9_-], starting with a letter or digit',
};

/** Nesting bound of JSON values (KV values, election values): arrays/objects ≤ 64 levels deep. */
export const JSON_DEPTH_MAX = 64;

const NAME_RE = new RegExp(NAME_RULE.pattern, 'u');
const PRINTABLE_RE = new RegExp(PRINTABLE_RULE.pattern, 'u');
const NODE_ID_RE = new RegExp(NODE_ID_RULE.pattern, 'u');
/** A lone surrogate (`String.prototype.isWellFormed` is Node 20 but not in the ES2023 typings). */
const LONE_SURROGATE_RE = /\p{Cs}/u;

/** True iff `v` is a resource name (NAME_RULE). */
export function isName(v: unknown): v is string {
  return typeof v === 'string' && NAME_RE.test(v);
}

/** True iff `v` is a holder / candidate id (PRINTABLE_RULE). */
export function isPrintableId(v: unknown): v is string {
  return typeof v === 'string' && PRINTABLE_RE.test(v);
}

/** True iff `v` is a node id (NODE_ID_RULE). */
export function isNodeId(v: unknown): v is string {
  return typeof v === 'string' && NODE_ID_RE.test(v);
}

/** True iff `s` is well-formed Unicode (no lone surrogates), i.e. survives UTF-8 unchanged. */
export function isWellFormedString(s: string): boolean {
  return !LONE_SURROGATE_RE.test(s);
}

/** Where in a JSON value a problem is: object keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[];

/** Why a value is not a storable JSON value, and where. */
export interface JsonValueProblem {
  readonly path: JsonPath;
  readonly problem: string;
}

/** One node of the walk; `parent`/`key` rebuild the path only when a problem is found. */
interface Frame {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: Frame | null;
  readonly key: string | number;
}

function pathOf(frame: Frame | null, last?: string): JsonPath {
  const out: (string | number)[] = last === undefined ? [] : [last];
  for (let f = frame; f !== null && f.parent !== null; f = f.parent) out.push(f.key);
  return out.reverse();
}

/** The problem of one scalar, or of an object's own shape (not its children), or null. */
function ownProblem(f: Frame): JsonValueProblem | null {
  const v = f.value;
  if (v === null || typeof v === 'boolean') return null;
  if (typeof v === 'string')
    return isWellFormedString(v)
      ? null
      : { path: pathOf(f), problem: 'contains a lone UTF-16 surrogate (not well-formed Unicode)' };
  if (typeof v === 'number')
    return Number.isFinite(v) ? null : { path: pathOf(f), problem: 'must be a finite number' };
  if (typeof v !== 'object') return { path: pathOf(f), problem: 'is not a JSON value' };
  if (f.depth >= JSON_DEPTH_MAX)
    return { path: [], problem: `nests deeper than ${JSON_DEPTH_MAX} levels` };
  if (Array.isArray(v)) return null;
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null)
    return { path: pathOf(f), problem: 'is not a plain JSON object' };
  return null;
}

/**
 * The first reason `x` is not a plain JSON value that survives encoding unchanged, or null:
 * finite numbers, plain objects/arrays nested ≤ JSON_DEPTH_MAX (the depth problem is reported at
 * the root), well-formed Unicode in strings and keys, no `__proto__` key (a decoder assigning it
 * would set a prototype). Iterative, so a 100,000-deep array cannot overflow the stack.
 */
export function findJsonValueProblem(x: unknown): JsonValueProblem | null {
  const stack: Frame[] = [{ value: x, depth: 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    const own = ownProblem(f);
    if (own !== null) return own;
    const v = f.value;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], depth: f.depth + 1, parent: f, key: i });
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k === '__proto__')
        return { path: pathOf(f, k), problem: 'keys named __proto__ are not allowed' };
      if (!isWellFormedString(k))
        return {
          path: pathOf(f),
          problem: `has a key with a lone UTF-16 surrogate (not well-formed Unicode): ${JSON.stringify(k)}`,
        };
      stack.push({
        value: (v as Record<string, unknown>)[k],
        depth: f.depth + 1,
        parent: f,
        key: k,
      });
    }
  }
  return null;
}

/** True iff `x` is a storable JSON value (findJsonValueProblem finds nothing). */
export function isJsonValue(x: unknown): x is JsonValue {
  return findJsonValueProblem(x) === null;
}
