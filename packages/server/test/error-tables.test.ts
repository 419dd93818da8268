// Proves every failure source maps through its table to a catalog code and status (HttpErrors, validation, Fastify codes, every Raft code, bare 4xx statuses), unknown errors are bugs answered `internal`, and a failed assertion stops the node (onFatal) instead of becoming a 500.
import t from 'tap';
import { AssertionError } from 'node:assert';
import {
  InvalidArgumentError,
  NotLeaderError,
  ResourceExhaustedError,
  StoppedError,
  TimeoutError,
} from '@tenure/raft';
import { toHttpError } from '../src/error-tables.js';
import { HttpError } from '../src/http-error.js';
import { harness } from './fixtures/harness.js';

/** [code, status] of the answer to `err`, or null for a bug. */
function answer(err: unknown): [string, number] | null {
  const e = toHttpError(err);
  return e === null ? null : [e.code, e.statusCode];
}

t.test('each source through its table', async (t) => {
  const own = new HttpError('held', 'lease L is held', { holder: 'A' });
  t.equal(toHttpError(own), own, 'the server’s own errors pass as they are');
  const validation = Object.assign(new Error('x'), {
    validation: [{ instancePath: '/ttlMs', keyword: 'type', params: { type: 'integer' } }],
    validationContext: 'body',
  });
  t.same(toHttpError(validation)?.details, { field: 'body.ttlMs' });
  t.equal(toHttpError(validation)?.message, 'body.ttlMs must be an integer');
  const fst = (code: string, statusCode: number) =>
    Object.assign(new Error(code), { code, statusCode });
  t.same(answer(fst('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415)), ['unsupported_media_type', 415]);
  t.same(answer(fst('FST_ERR_CTP_BODY_TOO_LARGE', 413)), ['payload_too_large', 413]);
  t.same(answer(fst('FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400)), ['invalid_argument', 400]);
  t.same(answer(fst('FST_ERR_BAD_URL', 400)), ['invalid_argument', 400]);
  t.same(answer(new NotLeaderError(null)), ['no_leader', 503]);
  t.equal(toHttpError(new NotLeaderError(null))?.headers['retry-after'], '1');
  t.same(answer(new StoppedError()), ['no_leader', 503]);
  t.same(answer(new TimeoutError()), ['timeout', 504]);
  t.same(answer(new ResourceExhaustedError('proposal queue is full')), ['resource_exhausted', 429]);
  t.same(answer(new InvalidArgumentError('no member n9')), ['invalid_argument', 400]);
  t.same(answer(fst('SOMETHING_ELSE', 404)), ['not_found', 404]);
  t.same(answer(fst('SOMETHING_ELSE', 431)), ['invalid_argument', 400]);
  t.equal(answer(new TypeError('x is undefined')), null, 'a bug');
  t.equal(answer(fst('SOMETHING_ELSE', 502)), null, 'a 5xx from elsewhere is a bug too');
  t.equal(answer('thrown string'), null);
});

t.test('an unexpected error answers 500 internal, in the error shape', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.readBarrier = async () => {
    throw new TypeError('boom');
  };
  const r = await h.app.inject({ method: 'GET', url: '/v1/leases/L' });
  t.equal(r.statusCode, 500);
  t.same(r.json(), { error: { code: 'internal', message: 'internal error' } });
});

t.test('a failed assertion stops the node and is never answered as a 500', async (t) => {
  const fatal: unknown[] = [];
  const h = await harness([], { onFatal: (err) => fatal.push(err) });
  t.teardown(h.close);
  h.raft.readBarrier = async () => {
    throw new AssertionError({ message: 'applied index went backwards' });
  };
  const r = await h.app.inject({ method: 'GET', url: '/v1/leases/L' }).then(
    (res) => res.statusCode,
    (err: Error) => err.message,
  );
  t.not(r, 500, `no 500 (got ${String(r)})`);
  t.equal(fatal.length, 1, 'onFatal got the assertion');
  t.type(fatal[0], AssertionError);
});
