/**
 * HTTP client for OpenAI-compatible upstreams: one keep-alive undici Pool per origin, a deadline per
 * call (GATELOG_UPSTREAM_TIMEOUT_MS). An unreachable upstream is a 502 and a slow one a 504, both in
 * the envelope; any answer the upstream gives is returned as it is.
 */
import { type Dispatcher, Pool } from 'undici';
import { AppError } from '../../errors.js';

export interface UpstreamResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

export interface UpstreamRequest {
  /** Base URL of the provider API, e.g. https://api.openai.com/v1 */
  baseUrl: string;
  /** Path under the base URL, e.g. /embeddings */
  path: string;
  apiKey: string;
  contentType: string;
  body: string | Buffer;
}

export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly targets = new Map<string, { origin: string; basePath: string }>();

  constructor(private readonly timeoutMs: number) {}

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: 256,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Origin and path prefix of a base URL, parsed once per base URL. */
  private target(baseUrl: string): { origin: string; basePath: string } {
    let target = this.targets.get(baseUrl);
    if (!target) {
      const url = new URL(baseUrl);
      target = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
      this.targets.set(baseUrl, target);
    }
    return target;
  }

  /**
   * One call through undici's dispatch API: the answer's chunks are collected as they arrive, without
   * the Readable stream (and the copy into one buffer) that `request()` makes for every response.
   */
  post(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { origin, basePath } = this.target(request.baseUrl);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let contentType = 'application/json';
      const handler: Dispatcher.DispatchHandler = {
        // Its presence is what tells undici this handler speaks the current handler API.
        onRequestStart: () => {},
        onResponseStart: (_controller, statusCode, headers) => {
          // Called again after a 1xx informational answer: only the last one counts.
          status = statusCode;
          const type = headers['content-type'];
          if (type !== undefined) contentType = String(type);
          chunks.length = 0;
        },
        onResponseData: (_controller, chunk) => {
          chunks.push(chunk);
        },
        onResponseEnd: () => {
          resolve({ status, contentType, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
        },
        onResponseError: (_controller, err) => reject(this.failure(err)),
      };
      try {
        this.pool(origin).dispatch(
          {
            origin,
            path: `${basePath}${request.path}`,
            method: 'POST',
            headers: {
              authorization: `Bearer ${request.apiKey}`,
              'content-type': request.contentType,
              accept: 'application/json',
            },
            body: request.body,
            // undici's own timers (one wheel for all calls) bound the wait for the answer and its body.
            headersTimeout: this.timeoutMs,
            bodyTimeout: this.timeoutMs,
          },
          handler,
        );
      } catch (err) {
        reject(this.failure(err));
      }
    });
  }

  /** An undici failure as the envelope's 504 (too slow) or 502 (unreachable). */
  private failure(err: unknown): AppError {
    const code = (err as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new AppError(
        504,
        'upstream_timeout',
        `The provider did not answer within ${this.timeoutMs} ms.`,
        null,
        {},
        err,
      );
    }
    return new AppError(502, 'upstream_unreachable', 'The provider could not be reached.', null, {}, err);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}
