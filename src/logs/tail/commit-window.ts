/**
 * Which newly committed log ids the live tail delivers, and in what order (docs/decisions.md "Live tail").
 *
 * Log ids are given out when a row is inserted, not when its transaction commits. With one writer
 * (SQLite) they commit in id order. On PostgreSQL several writers (nodes, and a node's own concurrent
 * transactions) commit in any order: log 10 may be visible before log 9, and a reader that only asks for
 * `id > last seen` would never see 9. So the window keeps reading ids above a `floor` that trails the
 * newest id by `settleMs` (the longest a write transaction stays open, in practice far less), and:
 *
 * - delivers ids in order up to the first gap (an id not seen yet below a seen one);
 * - holds what follows a gap for at most `gapWaitMs` (the missing row is usually a commit a few
 *   milliseconds behind), then delivers past it: a gap may never fill (a rolled-back batch, a deleted
 *   log), and the tail promises delivery within a second;
 * - a row that commits after its gap was passed is still delivered when it appears, late and out of
 *   order but never lost, as long as it commits within `settleMs`;
 * - every id is delivered once.
 */
export interface CommitWindowOptions {
  /** How long ids after a gap wait for it to fill. */
  gapWaitMs: number;
  /** How long an id stays re-read for late commits below it; 0 when ids commit in order (SQLite). */
  settleMs: number;
}

/** Ids between `expected` and a seen id tested one by one; a wider hole is a gap without looking. */
const MAX_GAP_SCAN = 10_000;

export class CommitWindow {
  private readonly delivered = new Set<number>();
  /** Ids seen but held behind a gap: when each was first seen. */
  private readonly heldSince = new Map<number, number>();
  /** After each read: the highest id below which everything seen was delivered, and when. */
  private readonly marks: { at: number; id: number }[] = [];

  constructor(
    private floorId: number,
    private readonly options: CommitWindowOptions,
  ) {}

  /** Every id at or below this is final: the next read asks for ids above it. */
  get floor(): number {
    return this.floorId;
  }

  /**
   * Ids to deliver now, in order, from the ids above `floor` committed now (ascending): at most `max`,
   * the rest left for the next call.
   */
  take(ids: readonly number[], now: number, max = Infinity): number[] {
    const out: number[] = [];
    let expected = this.floorId + 1;
    let blocked = false;
    let firstHeld: number | null = null;
    for (const id of ids) {
      if (id <= this.floorId) continue;
      if (this.delivered.has(id)) {
        expected = Math.max(expected, id + 1);
        continue;
      }
      if (out.length >= max) {
        firstHeld ??= id;
        break;
      }
      if (!blocked && id > expected && this.hasGap(expected, id)) {
        const since = this.heldSince.get(id) ?? now;
        if (now - since < this.options.gapWaitMs) blocked = true;
      }
      if (blocked) {
        if (!this.heldSince.has(id)) this.heldSince.set(id, now);
        firstHeld ??= id;
        continue;
      }
      out.push(id);
      this.delivered.add(id);
      this.heldSince.delete(id);
      expected = Math.max(expected, id + 1);
    }
    const top = firstHeld !== null ? firstHeld - 1 : (ids.at(-1) ?? this.floorId);
    this.marks.push({ at: now, id: Math.max(top, this.floorId) });
    this.advance(now);
    return out;
  }

  /** Ids take() gave out that could not be delivered (a failed read): a later take gives them again. */
  giveBack(ids: readonly number[]): void {
    for (const id of ids) this.delivered.delete(id);
  }

  private hasGap(from: number, to: number): boolean {
    if (to - from > MAX_GAP_SCAN) return true;
    for (let id = from; id < to; id++) if (!this.delivered.has(id)) return true;
    return false;
  }

  /** Moves the floor to the newest mark at least settleMs old, and forgets what lies below it. */
  private advance(now: number): void {
    let floor = this.floorId;
    while (this.marks.length > 0 && now - this.marks[0].at >= this.options.settleMs) {
      floor = Math.max(floor, this.marks.shift()!.id);
    }
    if (floor === this.floorId) return;
    this.floorId = floor;
    for (const id of this.delivered) if (id <= floor) this.delivered.delete(id);
    for (const id of this.heldSince.keys()) if (id <= floor) this.heldSince.delete(id);
  }
}
