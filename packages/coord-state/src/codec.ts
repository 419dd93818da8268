/**
 * Log-entry encoding of command envelopes with msgpackr (standard MessagePack maps, no record
 * extension, so any MessagePack reader can inspect a log). `decodeEnvelope` validates the shape.
 */
import { makePackr } from './packr.js';
import type { CommandEnvelope } from './api.js';
import type { StateError } from './errors.js';
import { checkEnvelopeShape } from './validate.js';

export { makePackr } from './packr.js';

const packr = makePackr();

/**
 * Thrown by `decodeEnvelope` for bytes that are not MessagePack or not a well-shaped envelope.
 * `code` is always `invalid_argument`; `error` is the StateError (message names the field).
 */
export class EnvelopeDecodeError extends Error {
  readonly code = 'invalid_argument' as const;
  readonly error: StateError;
  constructor(error: StateError, options?: { cause?: unknown }) {
    super(error.message, options);
    this.name = 'EnvelopeDecodeError';
    this.error = error;
  }
}

/**
 * Thrown by `encodeEnvelope` for an envelope that must not reach the log: one with a string that is
 * not well-formed Unicode (a lone surrogate, which MessagePack's UTF-8 would silently turn into
 * U+FFFD, so distinct holders could collapse into one) or otherwise not a valid shape.
 * `code` is always `invalid_argument`; `error` names the field.
 */
export class EnvelopeEncodeError extends Error {
  readonly code = 'invalid_argument' as const;
  readonly error: StateError;
  constructor(error: StateError) {
    super(error.message);
    this.name = 'EnvelopeEncodeError';
    this.error = error;
  }
}

/**
 * Encodes an envelope for a log entry (docs/concepts.md: every node applies the same bytes).
 * Throws `EnvelopeEncodeError` (invalid_argument) if the envelope fails `checkEnvelopeShape`,
 * which includes any string in the command (holder, candidate, KV/election values and their keys)
 * that is not well-formed Unicode — defence in depth behind the gateway's own checks.
 */
export function encodeEnvelope(env: CommandEnvelope): Uint8Array {
  const err = checkEnvelopeShape(env);
  if (err) throw new EnvelopeEncodeError(err);
  return packr.pack(env);
}

/**
 * Decodes and shape-checks a log entry. Throws `EnvelopeDecodeError` (code invalid_argument) on
 * malformed bytes or shape; ranges (ttlMs bounds, sizes) are left to `apply`, which answers them
 * with an invalid_argument result.
 */
export function decodeEnvelope(bytes: Uint8Array): CommandEnvelope {
  let decoded: unknown;
  try {
    decoded = packr.unpack(bytes);
  } catch (cause) {
    throw new EnvelopeDecodeError(
      {
        code: 'invalid_argument',
        message: 'envelope: not valid MessagePack',
        details: { field: 'envelope' },
      },
      { cause },
    );
  }
  const err = checkEnvelopeShape(decoded);
  if (err) throw new EnvelopeDecodeError(err);
  return decoded as CommandEnvelope;
}
