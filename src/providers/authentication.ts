/**
 * How a call proves to its provider that it may be made (a kind's `authenticate`, kind.ts): the kind is
 * given the whole request as it will go upstream, so that it may sign it (AWS SigV4 signs the method, the
 * URL, the headers and a hash of the body) or fetch a token first (OAuth) as well as put a key in a header.
 */

export interface OutgoingRequest {
  readonly method: string;
  /** The whole URL, query included. */
  readonly url: string;
  /** Every header the call goes with (names in lower case), but the ones its authentication adds. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The whole body; null when there is none, or when it is passed on while it still arrives from the
   * caller (an upload), which a kind that signs bodies cannot sign.
   */
  readonly body: Buffer | null;
}

/** The headers that authenticate one request, added to it (replacing any of the same name). */
export type Authenticate = (request: OutgoingRequest) => Promise<Readonly<Record<string, string>>>;
