/**
 * The FAILURE-SCENARIOS test-owned fenced store "FS": per resource, a write is accepted only when
 * its token is ≥ the highest token seen for that resource (SPEC §5 write-boundary contract).
 * In-process, so a partition between a client and the cluster never cuts the client off FS.
 */
export class FencedStore {
  readonly #highest = new Map<string, number>();
  readonly #values = new Map<string, number>();
  accepted = 0;
  rejected = 0;

  /** Writes `value` to `resource` with `token`; returns whether it was accepted. */
  write(resource: string, token: number, value: number): boolean {
    if (token < (this.#highest.get(resource) ?? 0)) {
      this.rejected++;
      return false;
    }
    this.#highest.set(resource, token);
    this.#values.set(resource, value);
    this.accepted++;
    return true;
  }

  /** The current value (0 when never written). */
  read(resource: string): number {
    return this.#values.get(resource) ?? 0;
  }
}
