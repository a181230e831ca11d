/**
 * HTTP client for OpenAI-compatible upstreams: one keep-alive undici Pool per origin, a deadline per
 * call (GATELOG_UPSTREAM_TIMEOUT_MS). An unreachable upstream is a 502 and a slow one a 504, both in
 * the envelope; any answer the upstream gives is returned as it is.
 */
import { Pool } from 'undici';
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

  async post(request: UpstreamRequest): Promise<UpstreamResponse> {
    const url = new URL(request.baseUrl);
    const path = `${url.pathname.replace(/\/+$/, '')}${request.path}`;
    try {
      const res = await this.pool(url.origin).request({
        path,
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
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      const contentType = String(res.headers['content-type'] ?? 'application/json');
      return { status: res.statusCode, contentType, body };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        throw new AppError(
          504,
          'upstream_timeout',
          `The provider did not answer within ${this.timeoutMs} ms.`,
          null,
          {},
          err,
        );
      }
      throw new AppError(502, 'upstream_unreachable', 'The provider could not be reached.', null, {}, err);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}
