/**
 * A provider that is down must not make every call wait through its retries (docs/api.md "Retries and
 * fallbacks"). Failures in a row open a circuit: past the threshold its calls skip the upstream for a
 * cool-down, then one call is let through to try it — an answer closes the circuit, another failure
 * opens it for a new cool-down.
 *
 * What one organization's calls do must not change what another's get: a 5xx, a timeout or a connection
 * lost mid-answer may come from the request itself (a prompt that makes the model server crash), so
 * those open only the circuit of the organization whose calls failed (its own, per base URL). Only a
 * failure no request can cause — no connection at all — counts toward the upstream's shared circuit, and
 * that opens only once the failures in a row came from at least two organizations. Any try that reached
 * the upstream closes the shared circuit. State per node, in memory: a node that restarts tries again at
 * once, and nodes need not agree.
 */

export interface BreakerOptions {
  /** Failures in a row that open the circuit; 0: never. */
  failures: number;
  cooldownMs: number;
}

/**
 * What a try came to, for the circuits: an answer that is not the provider's failure (below 500), a
 * failure once connected (a 5xx, a timeout, the connection lost), or no connection at all.
 */
export type TryVerdict = 'answered' | 'failed' | 'unreachable';

interface Circuit {
  /** The upstream's label (its host) for /metrics. */
  label: string;
  failuresInRow: number;
  /** Until when calls skip it (Date.now() ms), or 0 when closed. */
  openUntil: number;
  /** Shared circuits: the organizations whose calls failed in this run (two are enough to know). */
  organizations?: Set<string>;
}

/** Circuits remembered per map; past it, the closed ones are forgotten first. */
const MAX_CIRCUITS = 10_000;

/** Organizations a shared circuit needs in its run of failures before it opens. */
const SHARED_ORGANIZATIONS = 2;

export class CircuitBreaker {
  /** Per organization and upstream: every failure. */
  private readonly own = new Map<string, Circuit>();
  /** Per upstream: connections that could not be made, from several organizations. */
  private readonly shared = new Map<string, Circuit>();
  /** Times a call skipped an open circuit, for /metrics. */
  skipped = 0;

  constructor(
    private readonly options: BreakerOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a call of `organizationId` may go to this upstream now. True also for the one call that tries
   * it after its cool-down (it must then report its verdict).
   */
  allow(organizationId: string, upstream: string): boolean {
    const own = this.own.get(ownKey(organizationId, upstream));
    const shared = this.shared.get(upstream);
    const now = this.now();
    if ((own !== undefined && now < own.openUntil) || (shared !== undefined && now < shared.openUntil)) {
      this.skipped++;
      return false;
    }
    // The one call that tries it again; the others skip it for another cool-down unless it answers (a
    // try whose outcome is never reported cannot hold the circuit open for longer than that).
    for (const circuit of [own, shared]) {
      if (circuit !== undefined && circuit.openUntil !== 0) circuit.openUntil = now + this.options.cooldownMs;
    }
    return true;
  }

  /** What a try of `organizationId` to this upstream came to. */
  record(organizationId: string, upstream: string, verdict: TryVerdict): void {
    const key = ownKey(organizationId, upstream);
    if (verdict === 'answered') {
      close(this.own.get(key));
      close(this.shared.get(upstream));
      return;
    }
    // It was reached: whatever failed may be the request's, which says nothing of other organizations'.
    if (verdict === 'failed') close(this.shared.get(upstream));
    if (this.options.failures <= 0) return;
    const own = this.circuit(this.own, key, upstream);
    own.failuresInRow++;
    this.openPast(own);
    if (verdict === 'unreachable') {
      const shared = this.circuit(this.shared, upstream, upstream);
      const organizations = (shared.organizations ??= new Set());
      if (organizations.size < SHARED_ORGANIZATIONS) organizations.add(organizationId);
      shared.failuresInRow++;
      if (organizations.size >= SHARED_ORGANIZATIONS) this.openPast(shared);
    }
  }

  /** The upstreams whose circuit is open now, by label (host), for /metrics. */
  openCircuits(): Map<string, number> {
    const open = new Map<string, number>();
    const now = this.now();
    for (const circuits of [this.own, this.shared]) {
      for (const circuit of circuits.values()) {
        if (circuit.openUntil > now) open.set(circuit.label, (open.get(circuit.label) ?? 0) + 1);
      }
    }
    return open;
  }

  /** Opens the circuit when its failures in a row reached the threshold (again, for a failed probe). */
  private openPast(circuit: Circuit): void {
    if (circuit.failuresInRow >= this.options.failures) circuit.openUntil = this.now() + this.options.cooldownMs;
  }

  private circuit(circuits: Map<string, Circuit>, key: string, upstream: string): Circuit {
    let circuit = circuits.get(key);
    if (circuit === undefined) {
      if (circuits.size >= MAX_CIRCUITS) forgetClosed(circuits);
      circuit = { label: labelOf(upstream), failuresInRow: 0, openUntil: 0 };
      circuits.set(key, circuit);
    }
    return circuit;
  }
}

function close(circuit: Circuit | undefined): void {
  if (circuit === undefined) return;
  circuit.failuresInRow = 0;
  circuit.openUntil = 0;
  circuit.organizations?.clear();
}

function forgetClosed(circuits: Map<string, Circuit>): void {
  for (const [key, circuit] of circuits) if (circuit.openUntil === 0) circuits.delete(key);
  if (circuits.size >= MAX_CIRCUITS) circuits.clear();
}

/** A circuit of one organization's calls to one upstream (an organization id holds no newline). */
function ownKey(organizationId: string, upstream: string): string {
  return `${organizationId}\n${upstream}`;
}

function labelOf(upstream: string): string {
  return URL.parse(upstream)?.host ?? 'unknown';
}
