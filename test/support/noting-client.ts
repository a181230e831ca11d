/**
 * The official `openai` client that notes the log each answer names (`X-Gatelog-Log-Id`), for calls made
 * through helpers that hide the response (`chat.completions.stream()`, `responses.stream()`).
 */
import OpenAI from 'openai';

export class LogNotingClient {
  /** The log id of the last answer; set to null before a call to tell one call from the next. */
  logId: string | null = null;
  readonly client: OpenAI;

  constructor(baseUrl: string, key: string) {
    this.client = new OpenAI({
      apiKey: key,
      baseURL: `${baseUrl}/api`,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        const res = await fetch(url, init);
        this.logId = res.headers.get('x-gatelog-log-id');
        return res;
      },
    });
  }
}
