/**
 * A streamed chat completion read for its log: each event shown to ChatAssembler as it passes, the
 * usage event (always asked for upstream) held back when the client did not ask for it, a Claude
 * stream told as chat chunks, and request_breakdown as one last event before [DONE].
 */
import { type ChatStreamTranslator, DONE_EVENT } from '../../providers/chat-translation.js';
import type { TokenUsage } from '../../providers/usage.js';
import { AssemblingReader } from '../core/assembling-reader.js';
import type { ProxiedCall } from '../core/call.js';
import type { StreamEnd, StreamFault, StreamReader } from '../core/stream-contract.js';
import { eventObject } from '../core/json-call.js';
import { seconds } from '../core/record.js';
import { endedEarly, inBandFault } from '../core/stream-fault.js';
import { usageSoFar } from '../core/usage.js';
import { ChatAssembler } from './assembler.js';
import { breakdownChunk, breakdownOf, completeLog } from './log.js';
import type { ChatRequest } from './request.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Reads a chat stream's events for the log, and decides which the client gets. */
export class ChatStreamReader extends AssemblingReader<ChatAssembler, ChatRequest> implements StreamReader {
  private done = false;

  constructor(
    call: ProxiedCall,
    request: ChatRequest,
    dispatchedAt: number,
    /** The provider's stream told as chat chunks (Claude's); null: the provider's own chat stream. */
    private readonly translator: ChatStreamTranslator | null = null,
  ) {
    super(call, request, dispatchedAt, ChatAssembler);
  }

  event(message: { event?: string; data: string }, out: { write(text: string): void }): 'forward' | 'drop' {
    if (this.translator !== null) {
      // Anthropic's events are never passed on: what they say is, as chat chunks.
      for (const translated of this.translator.event(message)) {
        if (translated.chunk !== null) this.assembler.add(translated.chunk, performance.now());
        if (translated.text === DONE_EVENT) {
          this.done = true;
          if (this.call.params.requestBreakdown) out.write(this.breakdownEvent());
        }
        if (!translated.hidden) out.write(translated.text);
      }
      const { error } = this.translator;
      if (error !== null) this.inBandError = inBandFault(error.message, error.code);
      return 'drop';
    }
    if (message.data === '[DONE]') {
      this.done = true;
      if (this.call.params.requestBreakdown) out.write(this.breakdownEvent());
      return 'forward';
    }
    const chunk = eventObject(message.data);
    if (isObject(chunk.error)) {
      const message = typeof chunk.error.message === 'string' ? chunk.error.message : 'The provider sent an error.';
      this.inBandError = inBandFault(message, chunk.error.code);
      return 'forward';
    }
    this.assembler.add(chunk, performance.now());
    // The usage-only event (no choices) was asked for by gatelog, not the client: the client does not get it.
    const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 && isObject(chunk.usage);
    return usageOnly && !this.request.clientWantsUsage ? 'drop' : 'forward';
  }

  /**
   * The answer's counts, once its usage arrived: a translated stream's from the provider's own events
   * (once its last one came), else the usage event's.
   */
  private usage(): TokenUsage | null {
    if (this.translator !== null) return this.translator.completed ? this.translator.usage : null;
    const usage = this.assembler.usage;
    return usage === null ? null : this.call.provider!.definition.protocol.usage(usage);
  }

  /** §15: the last event before [DONE], shaped so that the client's stream helpers are not misled. */
  private breakdownEvent(): string {
    const { assembler } = this;
    const head = { id: assembler.id, created: assembler.created, model: assembler.model ?? this.request.model };
    return breakdownChunk(head, this.breakdownNow());
  }

  private breakdownNow(): Json {
    const { log } = this.call;
    usageSoFar(this.call, log.model ?? this.request.model, this.usage());
    log.latency = seconds(this.dispatchedAt, performance.now());
    const choices = this.assembler.completion().choices as Json[];
    log.completion_message = choices.find((c) => c.index === 0)?.message ?? null;
    return { ...breakdownOf(this.call, this.request), stream: true };
  }

  /** [DONE] has been read (a Claude stream's: its message_stop, told as [DONE]). */
  complete(): boolean {
    return this.done;
  }

  fault(): StreamFault | null {
    if (this.inBandError !== null) return this.inBandError;
    const ended = this.translator !== null ? this.translator.completed : this.done || this.assembler.finished;
    return ended ? null : endedEarly('The provider ended its stream before its last event.');
  }

  async end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd> {
    const completion = this.assembler.completion();
    const usage = completeLog(call, this.request, completion, generationSeconds, this.usage());
    // Only a whole answer is kept: the stream ran to its end, and the log's copy holds all of its text.
    const whole = this.done && this.assembler.finished && !this.assembler.cut;
    return { usage, keep: whole ? () => JSON.stringify(completion) : undefined };
  }
}
