/**
 * A value per organization read from the database on the hot path (its rate limits, its budgets), kept
 * for a second per node: a change made on another node applies within it, one made here at once
 * (forget). One read at a time per organization. A read that fails keeps the last value known — a
 * database outage must not stop calls that were passing — or, for an organization never read, `fallback`
 * when one is given (else the error).
 */
const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: Promise<T>;
  expiresAt: number;
  /** The last value read successfully, for when a later read fails. */
  known: T | undefined;
}

export class OrganizationCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly load: (organizationId: string) => Promise<T>,
    private readonly fallback?: () => T,
  ) {}

  get(organizationId: string): Promise<T> {
    const now = Date.now();
    const entry = this.entries.get(organizationId);
    if (entry !== undefined && entry.expiresAt > now) return entry.value;
    if (entry === undefined && this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const known = entry?.known;
    const next: Entry<T> = { value: Promise.resolve(undefined as T), expiresAt: now + TTL_MS, known };
    next.value = this.load(organizationId).then(
      (value) => {
        next.known = value;
        return value;
      },
      (err: unknown) => {
        if (known !== undefined) return known;
        if (this.fallback !== undefined) return this.fallback();
        // Nothing to fall back on: the next call reads again.
        if (this.entries.get(organizationId) === next) this.entries.delete(organizationId);
        throw err;
      },
    );
    this.entries.set(organizationId, next);
    return next.value;
  }

  forget(organizationId: string): void {
    this.entries.delete(organizationId);
  }
}
