/**
 * A proxied stream's clocks: the provider silent too long (idle), a keepalive comment when nothing was
 * sent for a while, and the longest a stream may last (duration). The idle and keepalive clocks are
 * stopped while the client holds the provider back (its silence is then the client's, not the provider's).
 *
 * A chunk only stamps the time (arm): moving two timers on every chunk cost more than reading the
 * clock, at tens of thousands of chunks a second. A timer that comes due looks at the stamp, and sets
 * itself again for what is left when the stream spoke since.
 */
export interface ClockOptions {
  idleTimeoutMs: number;
  keepaliveMs: number;
  maxDurationMs: number;
}

export interface ClockAlarms {
  idle(): void;
  keepalive(): void;
  tooLong(): void;
}

export class StreamClock {
  private idleTimer: NodeJS.Timeout | null = null;
  private keepaliveTimer: NodeJS.Timeout | null = null;
  private readonly durationTimer: NodeJS.Timeout;
  /** When the stream last spoke (or a keepalive was sent), performance.now(). */
  private stampedAt = 0;
  /** When the last keepalive was sent: the next is due a full period after it or after the stamp. */
  private keptAliveAt = 0;

  constructor(
    private readonly options: ClockOptions,
    private readonly alarms: ClockAlarms,
  ) {
    this.arm();
    this.durationTimer = setTimeout(() => this.alarms.tooLong(), options.maxDurationMs);
  }

  /** Starts the idle and keepalive clocks over. */
  arm(): void {
    this.stampedAt = performance.now();
    this.idleTimer ??= setTimeout(() => this.idleDue(), this.options.idleTimeoutMs);
    this.keepaliveTimer ??= setTimeout(() => this.keepaliveDue(), this.options.keepaliveMs);
  }

  private idleDue(): void {
    const left = this.stampedAt + this.options.idleTimeoutMs - performance.now();
    if (left > 0) {
      this.idleTimer = setTimeout(() => this.idleDue(), left);
      return;
    }
    this.idleTimer = null;
    this.alarms.idle();
  }

  private keepaliveDue(): void {
    const now = performance.now();
    const left = Math.max(this.stampedAt, this.keptAliveAt) + this.options.keepaliveMs - now;
    if (left <= 0) {
      this.keptAliveAt = now;
      this.alarms.keepalive();
    }
    // The alarm may have stopped the clocks (pause or stop): then no timer is set again.
    if (this.keepaliveTimer === null) return;
    this.keepaliveTimer = setTimeout(() => this.keepaliveDue(), left > 0 ? left : this.options.keepaliveMs);
  }

  /** Stops the idle and keepalive clocks (the client holds the stream back); arm() starts them again. */
  pause(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.keepaliveTimer !== null) clearTimeout(this.keepaliveTimer);
    this.idleTimer = null;
    this.keepaliveTimer = null;
  }

  /** The provider's side is over: no clock runs any more. */
  stop(): void {
    this.pause();
    clearTimeout(this.durationTimer);
  }
}
