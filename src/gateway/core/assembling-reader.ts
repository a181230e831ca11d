/**
 * What the stream readers of the chat-like routes (chat, messages, responses) share: the call, its
 * request and when it went upstream; the assembler that puts the answer back together from the events
 * as they pass (capped at the log's size); and the error the provider sent in the stream, if it did.
 */
import type { ProxiedCall } from './call.js';
import type { StreamFault } from './stream-contract.js';

export abstract class AssemblingReader<Assembler extends { readonly firstOutputAt: number | null }, Request> {
  protected readonly assembler: Assembler;
  /** An error the provider sent in the stream (an error event; a response.failed one). */
  protected inBandError: StreamFault | null = null;

  constructor(
    protected readonly call: ProxiedCall,
    protected readonly request: Request,
    /** performance.now() when the call went upstream. */
    protected readonly dispatchedAt: number,
    assembler: new (logMaxBytes: number) => Assembler,
  ) {
    this.assembler = new assembler(call.deps.config.logMaxBytes);
  }

  /** performance.now() of the answer's first output, once there was one. */
  get firstOutputAt(): number | null {
    return this.assembler.firstOutputAt;
  }
}
