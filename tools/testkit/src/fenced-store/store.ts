/**
 * The fenced store's rule, without I/O (docs/concepts.md, docs/failure-scenarios.md "FS"): per resource it accepts a
 * side effect only when its fencing token is ≥ the highest token it has accepted for that resource,
 * and logs every accepted and rejected write with its time for the fencing checker.
 */
import assert from 'node:assert';
import type { Json } from '../json.js';

/** One write the store saw, in arrival order (`seq` from 1). */
export interface FencedWriteRecord {
  readonly seq: number;
  /** When the store saw it, on the caller's clock (`now`), in ms. */
  readonly timeMs: number;
  /** Resource the token fences: `lease:NAME` or `election:GROUP`. */
  readonly resource: string;
  readonly fencingToken: number;
  /** Who wrote (lease holder / candidate identity). */
  readonly writer: string;
  readonly accepted: boolean;
  /** Highest token accepted for the resource before this write (null = none yet). */
  readonly highestBefore: number | null;
  readonly payload: Json;
}

/** State of one resource in the store. */
export interface FencedResourceState {
  readonly resource: string;
  readonly highestToken: number | null;
  /** Payload of the last accepted write (null before any). */
  readonly value: Json;
  readonly acceptedCount: number;
  readonly rejectedCount: number;
}

/** A write request. `fencingToken` must be a safe integer ≥ 0, `resource` and `writer` non-empty. */
export interface FencedWrite {
  readonly resource: string;
  readonly fencingToken: number;
  readonly writer: string;
  readonly payload: Json;
}

/** Records the store keeps at most (TigerBeetle habit: limit everything). */
export const fencedStoreRecordsMax = 1_000_000;
/** Resources the store tracks at most. */
export const fencedStoreResourcesMax = 10_000;

/**
 * In-memory fenced store. `write` never throws for well-formed input; `validateWrite` names the
 * bad field for anything else. `onRecord` sees each record as it is made (for the JSONL log).
 */
export class FencedStore {
  readonly #now: () => number;
  readonly #records: FencedWriteRecord[] = [];
  readonly #resources = new Map<
    string,
    { highest: number | null; value: Json; accepted: number; rejected: number }
  >();
  readonly #onRecord: ((r: FencedWriteRecord) => void) | null;

  constructor(now: () => number, onRecord: ((r: FencedWriteRecord) => void) | null = null) {
    this.#now = now;
    this.#onRecord = onRecord;
  }

  /** Applies the fencing rule; returns the record (accepted or rejected). Throws RangeError when full. */
  write(w: FencedWrite): FencedWriteRecord {
    if (this.#records.length >= fencedStoreRecordsMax)
      throw new RangeError(`fenced store full (${fencedStoreRecordsMax} records)`);
    const r = this.#resource(w.resource);
    const accepted = r.highest === null || w.fencingToken >= r.highest;
    const rec: FencedWriteRecord = {
      seq: this.#records.length + 1,
      timeMs: this.#now(),
      resource: w.resource,
      fencingToken: w.fencingToken,
      writer: w.writer,
      accepted,
      highestBefore: r.highest,
      payload: w.payload,
    };
    if (accepted) {
      r.highest = w.fencingToken;
      r.value = w.payload;
      r.accepted++;
    } else r.rejected++;
    assert(
      !accepted || r.highest === w.fencingToken,
      'fenced store: an accepted write must become the highest token',
    );
    this.#records.push(rec);
    this.#onRecord?.(rec);
    return rec;
  }

  /**
   * A read under a token, for a read-modify-write: raises the resource's floor to `fencingToken`
   * (a later write with a lower token is rejected, even one that lands before this reader's write)
   * and returns the state, or null when a higher token was already seen (the reader is stale).
   * Throws RangeError when the store tracks too many resources.
   */
  readFenced(resource: string, fencingToken: number): FencedResourceState | null {
    const r = this.#resource(resource);
    if (r.highest !== null && fencingToken < r.highest) return null;
    r.highest = fencingToken;
    return this.read(resource);
  }

  #resource(resource: string): {
    highest: number | null;
    value: Json;
    accepted: number;
    rejected: number;
  } {
    let r = this.#resources.get(resource);
    if (r === undefined) {
      if (this.#resources.size >= fencedStoreResourcesMax)
        throw new RangeError(`fenced store: too many resources (${fencedStoreResourcesMax})`);
      r = { highest: null, value: null, accepted: 0, rejected: 0 };
      this.#resources.set(resource, r);
    }
    return r;
  }

  /** The resource's state (a never-written resource reads as empty). */
  read(resource: string): FencedResourceState {
    const r = this.#resources.get(resource);
    return {
      resource,
      highestToken: r?.highest ?? null,
      value: r?.value ?? null,
      acceptedCount: r?.accepted ?? 0,
      rejectedCount: r?.rejected ?? 0,
    };
  }

  /** Writes accepted and rejected so far, over all resources. */
  totals(): { accepted: number; rejected: number } {
    let accepted = 0;
    for (const r of this.#records) if (r.accepted) accepted++;
    return { accepted, rejected: this.#records.length - accepted };
  }

  /** All records so far, in arrival order (a copy). */
  records(): FencedWriteRecord[] {
    return [...this.#records];
  }
}

/** Validates an untrusted body; returns the write or an error naming the field. */
export function validateWrite(body: unknown): FencedWrite | { error: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { error: 'body must be a JSON object' };
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b))
    if (!['resource', 'fencingToken', 'writer', 'payload'].includes(k))
      return { error: `unknown field ${k}` };
  if (typeof b['resource'] !== 'string' || b['resource'].length === 0 || b['resource'].length > 256)
    return { error: 'resource must be a string of 1-256 characters' };
  if (typeof b['writer'] !== 'string' || b['writer'].length === 0 || b['writer'].length > 256)
    return { error: 'writer must be a string of 1-256 characters' };
  if (
    typeof b['fencingToken'] !== 'number' ||
    !Number.isSafeInteger(b['fencingToken']) ||
    b['fencingToken'] < 0
  )
    return { error: 'fencingToken must be a non-negative integer' };
  return {
    resource: b['resource'],
    writer: b['writer'],
    fencingToken: b['fencingToken'],
    payload: (b['payload'] ?? null) as Json,
  };
}
