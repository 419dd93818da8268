/**
 * Idempotency keys are scoped per credential (docs/api.md, Idempotency): with auth on, a key is
 * recorded under the name of the token that sent it, so one token can neither use up another's
 * key (`idempotency_key_reused`) nor be answered with another's result. Without a principal (auth
 * off, or the server itself) every key shares the one global scope, as before auth existed.
 *
 * The scoped form is `<token>\n<key>`: a token name never holds a newline (NAME_RULE) and an HTTP
 * header value cannot carry one, so no scoped key equals a key of another scope.
 */
import type { CommandEnvelope } from './api.js';

/** Separator between the token name and the client's key in a scoped record key. */
export const IDEMPOTENCY_SCOPE_SEPARATOR = '\n';

/** An envelope's idempotency as recorded: the scoped record key, the fingerprint, the key as sent. */
export interface ScopedIdempotency {
  /** The record key: the client's key, prefixed by its token's name when a principal sent it. */
  readonly key: string;
  readonly fingerprint: string;
  /** The key as the client sent it (for messages). */
  readonly shown: string;
}

/** The envelope's idempotency in its credential's scope; null when it carries none. */
export function scopedIdempotency(envelope: CommandEnvelope): ScopedIdempotency | null {
  const idem = envelope.idempotency ?? null; // a missing field counts as null
  if (idem === null) return null;
  const token = envelope.principal?.token;
  const key = token === undefined ? idem.key : `${token}${IDEMPOTENCY_SCOPE_SEPARATOR}${idem.key}`;
  return { key, fingerprint: idem.fingerprint, shown: idem.key };
}
