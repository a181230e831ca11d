/**
 * A proxied stream's clocks: the provider silent too long (idle), a keepalive comment when nothing was
 * sent for a while, and the longest a stream may last (duration). The idle and keepalive clocks are
 * refreshed per chunk — no timer is made per event — and stopped while the client holds the provider
 * back (its silence is then the client's, not the provider's).
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

  constructor(
    private readonly options: ClockOptions,
    private readonly alarms: ClockAlarms,
  ) {
    this.arm();
    this.durationTimer = setTimeout(() => this.alarms.tooLong(), options.maxDurationMs);
  }

  /** Starts the idle and keepalive clocks over. */
  arm(): void {
    if (this.idleTimer !== null && this.keepaliveTimer !== null) {
      this.idleTimer.refresh();
      this.keepaliveTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => this.alarms.idle(), this.options.idleTimeoutMs);
    this.keepaliveTimer = setInterval(() => this.alarms.keepalive(), this.options.keepaliveMs);
  }

  /** Stops the idle and keepalive clocks (the client holds the stream back); arm() starts them again. */
  pause(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.keepaliveTimer !== null) clearInterval(this.keepaliveTimer);
    this.idleTimer = null;
    this.keepaliveTimer = null;
  }

  /** The provider's side is over: no clock runs any more. */
  stop(): void {
    this.pause();
    clearTimeout(this.durationTimer);
  }
}
