/**
 * The schema validator compiler of the app: two Ajv instances, one per kind of request part.
 * Query strings and headers are text by nature, so their validator coerces (`?limit=10` and
 * `Request-Timeout-Ms: 500` become numbers, checked against the integer schema's range); bodies
 * and path params stay strict — a JSON body's `"1000"` is not a number (docs/api.md, strict JSON
 * types). Nothing is removed or defaulted: unknown fields are errors, defaults are documentation.
 */
import { Ajv, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

const COMMON: Options = {
  removeAdditional: false,
  useDefaults: false,
  // One error is enough for a message naming the field, and all errors would cost more on bad
  // input (a denial-of-service lever).
  allErrors: false,
  // `parentSchema` and `data` in errors: the range of a failed bound, a repeated query parameter.
  verbose: true,
  // TypeBox unions of literals and type lists are fine; do not log strict-types warnings.
  strictTypes: false,
};

/** Parts of a request arriving as text, validated with coercion. */
const TEXT_PARTS: ReadonlySet<string> = new Set(['querystring', 'headers']);

/** Build the validator compiler (fresh Ajv instances per app: no module singleton). */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strictAjv = new Ajv({ ...COMMON, coerceTypes: false });
  const textAjv = new Ajv({ ...COMMON, coerceTypes: true });
  return ({ schema, httpPart }) => {
    const ajv = httpPart !== undefined && TEXT_PARTS.has(httpPart) ? textAjv : strictAjv;
    return ajv.compile(schema as object);
  };
}
