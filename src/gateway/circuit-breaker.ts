/**
 * A provider that is down for everyone must not make every call wait through its retries
 * (docs/api.md "Retries and fallbacks"). Each upstream — a provider's base URL — counts its failures in
 * a row (a connection failure, a timeout, a 5xx; any other answer, a 429 included, shows it is up);
 * past the threshold it is skipped for a cool-down, then one call is let through to try it: an answer
 * closes the circuit, another failure opens it for a new cool-down. State per node, in memory: a node that restarts
 * tries again at once, and nodes need not agree.
 */

export interface BreakerOptions {
  /** Failures in a row that open the circuit; 0: never. */
  failures: number;
  cooldownMs: number;
}

interface Circuit {
  /** The upstream's label (its host) for /metrics. */
  label: string;
  failuresInRow: number;
  /** Until when calls skip it (Date.now() ms), or 0 when closed. */
  openUntil: number;
}

/** Upstreams remembered; past it, the closed circuits are forgotten first. */
const MAX_CIRCUITS = 10_000;

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();
  /** Times a call skipped an open circuit, for /metrics. */
  skipped = 0;

  constructor(
    private readonly options: BreakerOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a call may go to this upstream now. True also for the one call that tries it after its
   * cool-down (it must then report success or failure).
   */
  allow(upstream: string): boolean {
    const circuit = this.circuits.get(upstream);
    if (circuit === undefined || circuit.openUntil === 0) return true;
    const now = this.now();
    if (now < circuit.openUntil) {
      this.skipped++;
      return false;
    }
    // The one call that tries it again; the others skip it for another cool-down unless it answers (a
    // try whose outcome is never reported cannot hold the circuit open for longer than that).
    circuit.openUntil = now + this.options.cooldownMs;
    return true;
  }

  /** The upstream answered (any answer that is not a failure of the provider's). */
  success(upstream: string): void {
    const circuit = this.circuits.get(upstream);
    if (circuit === undefined || (circuit.failuresInRow === 0 && circuit.openUntil === 0)) return;
    circuit.failuresInRow = 0;
    circuit.openUntil = 0;
  }

  failure(upstream: string): void {
    if (this.options.failures <= 0) return;
    let circuit = this.circuits.get(upstream);
    if (circuit === undefined) {
      if (this.circuits.size >= MAX_CIRCUITS) this.forgetClosed();
      circuit = { label: labelOf(upstream), failuresInRow: 0, openUntil: 0 };
      this.circuits.set(upstream, circuit);
    }
    circuit.failuresInRow++;
    if (circuit.failuresInRow >= this.options.failures) circuit.openUntil = this.now() + this.options.cooldownMs;
  }

  /** The upstreams whose circuit is open now, by label (host), for /metrics. */
  openCircuits(): Map<string, number> {
    const open = new Map<string, number>();
    const now = this.now();
    for (const circuit of this.circuits.values()) {
      if (circuit.openUntil > now) open.set(circuit.label, (open.get(circuit.label) ?? 0) + 1);
    }
    return open;
  }

  private forgetClosed(): void {
    for (const [key, circuit] of this.circuits) if (circuit.openUntil === 0) this.circuits.delete(key);
    if (this.circuits.size >= MAX_CIRCUITS) this.circuits.clear();
  }
}

function labelOf(upstream: string): string {
  return URL.parse(upstream)?.host ?? 'unknown';
}
