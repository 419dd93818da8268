/**
 * The schema validator compiler of the app: two Ajv instances, one per kind of request part.
 * Query strings and headers are text by nature, so their validator coerces (`?limit=10` and
 * `Request-Timeout-Ms: 500` become numbers, checked against the integer schema's range); bodies
 * and path params stay strict — a JSON body's `"1000"` is not a number (docs/api.md, strict JSON
 * types). Nothing is removed or defaulted: unknown fields are errors, defaults are documentation.
 */
import { Ajv, type Options } from 'ajv';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';

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

/** The text of an integer in a query string or header: decimal digits, optionally negative (no `1e3`, no `0x10`). */
const INTEGER_TEXT = /^-?[0-9]{1,16}$/;

/** A validate function with Ajv's `errors` property, as Fastify calls it. */
type ValidateFn = ((data: unknown) => boolean) & {
  errors?: FastifySchemaValidationError[] | null;
};

/**
 * Wrap a text part's validator: an integer field must be written in decimal digits before Ajv
 * coerces it (Ajv's coercion is `Number(text)`, which reads `1e3` as 1000 and `0x10` as 16).
 */
function digitsOnly(
  schema: { properties?: Record<string, { type?: unknown }> },
  validate: ValidateFn,
): ValidateFn {
  const integerFields = Object.entries(schema.properties ?? {})
    .filter(([, s]) => s.type === 'integer')
    .map(([k]) => k);
  if (integerFields.length === 0) return validate;
  const wrapped: ValidateFn = (data) => {
    const record = (data ?? {}) as Record<string, unknown>;
    for (const k of integerFields) {
      const v = record[k];
      if (typeof v === 'string' && !INTEGER_TEXT.test(v)) {
        const error = { instancePath: `/${k}`, keyword: 'type', params: { type: 'integer' } };
        const described = { ...error, schemaPath: '', message: 'must be integer', data: v };
        wrapped.errors = [described as FastifySchemaValidationError];
        return false;
      }
    }
    const ok = validate(data);
    wrapped.errors = validate.errors ?? null;
    return ok;
  };
  return wrapped;
}

/** Build the validator compiler (fresh Ajv instances per app: no module singleton). */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strictAjv = new Ajv({ ...COMMON, coerceTypes: false });
  const textAjv = new Ajv({ ...COMMON, coerceTypes: true });
  return ({ schema, httpPart }) => {
    if (httpPart === undefined || !TEXT_PARTS.has(httpPart))
      return strictAjv.compile(schema as object);
    return digitsOnly(schema as object, textAjv.compile(schema as object) as ValidateFn);
  };
}
