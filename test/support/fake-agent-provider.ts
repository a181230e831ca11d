/**
 * A fake provider for coding agents' tool loops: Anthropic's Messages API (and count_tokens) and
 * OpenAI's Responses API on one server, answering each call from what it holds rather than from a
 * script set beforehand, because an agent decides how many calls it makes. A call that offers the
 * agent's file-reading tool and holds no tool result yet gets a call of that tool; a call holding a
 * tool result gets a final text quoting it; anything else (an agent's side calls) a plain text. The
 * events are the other fakes' own (fake-anthropic.ts, fake-responses.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageEventsFor, messageFor, type MessageScript } from './fake-anthropic-answers.js';
import { responseEventsFor, type ResponseScript } from './fake-responses.js';

type Json = Record<string, unknown>;

export interface AgentCall {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  json: Json | null;
}

export interface FakeAgentProvider {
  /** Anthropic's base (the client adds /v1/messages); OpenAI's is `${baseUrl}/v1`. */
  readonly baseUrl: string;
  readonly calls: AgentCall[];
  close(): Promise<void>;
}

/** What the final answer says before the tool's output, so that a test can find it in the agent's. */
export const FINAL_PREFIX = 'The tool said: ';
/** The usage every answer reports, so that each logged call has a cost. */
const USAGE = { input_tokens: 1200, output_tokens: 40 };

/** The text of every tool result a call holds (Anthropic's `tool_result` blocks, Responses' outputs). */
export function toolResultsOf(json: Json | null): string[] {
  const found: string[] = [];
  for (const message of (json?.messages as Json[] | undefined) ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Json[]) {
      if (block.type !== 'tool_result') continue;
      const content = block.content;
      found.push(
        typeof content === 'string'
          ? content
          : ((content as Json[] | undefined) ?? []).map((c) => String(c.text ?? '')).join(''),
      );
    }
  }
  for (const item of Array.isArray(json?.input) ? (json.input as Json[]) : []) {
    if (item.type === 'function_call_output') found.push(String(item.output ?? ''));
  }
  return found;
}

function toolNames(json: Json | null): string[] {
  return ((json?.tools as Json[] | undefined) ?? []).map((tool) => String(tool.name ?? ''));
}

/** Claude Code's answer: `Read` of `file` first, the final text after its result. */
function messageScript(json: Json | null, file: string): MessageScript {
  const results = toolResultsOf(json);
  if (results.length > 0)
    return { content: [{ type: 'text', text: [FINAL_PREFIX, results.join(' | ')] }], usage: USAGE };
  if (toolNames(json).includes('Read')) {
    const input = JSON.stringify({ file_path: file });
    return { content: [{ type: 'tool_use', id: 'toolu_agent_1', name: 'Read', input: [input] }], usage: USAGE };
  }
  return { content: [{ type: 'text', text: ['Side answer.'] }], usage: USAGE };
}

/** Codex's answer: `exec_command` reading `file` first, the final text after its output. */
function responseScript(json: Json | null, file: string): ResponseScript {
  const results = toolResultsOf(json);
  if (results.length > 0) return { text: [FINAL_PREFIX, results.join(' | ')], usage: USAGE };
  if (toolNames(json).includes('exec_command')) {
    const args = JSON.stringify({ cmd: `cat ${file}` });
    return { functionCalls: [{ callId: 'call_agent_1', name: 'exec_command', arguments: [args] }], usage: USAGE };
  }
  return { text: ['Side answer.'], usage: USAGE };
}

/** Serves the agents; `file` is what their file-reading tool is asked to read (an absolute path). */
export async function startFakeAgentProvider(file: string): Promise<FakeAgentProvider> {
  const calls: AgentCall[] = [];
  let serial = 0;
  const server = http.createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on('data', (piece: Buffer) => pieces.push(piece));
    req.on('end', () => {
      let json: Json | null = null;
      try {
        json = JSON.parse(Buffer.concat(pieces).toString('utf8')) as Json;
      } catch {
        json = null;
      }
      calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, json });
      const route = (req.url ?? '').split('?')[0];
      const model = String(json?.model ?? '');
      const id = `agent_${++serial}`;
      const answerJson = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const answerEvents = (events: { event: string; data: string }[]) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of events) res.write(`event: ${e.event}\ndata: ${e.data}\n\n`);
        res.end();
      };
      if (route === '/v1/messages/count_tokens') return answerJson(200, { input_tokens: 1200 });
      if (route === '/v1/messages') {
        const script = messageScript(json, file);
        return json?.stream === true
          ? answerEvents(messageEventsFor(script, model, id))
          : answerJson(200, messageFor(script, model, id));
      }
      if (route === '/v1/responses' && json !== null) {
        const created = Math.floor(Date.now() / 1000);
        return answerEvents(responseEventsFor(json, responseScript(json, file), `resp_${id}`, created).events);
      }
      answerJson(404, { error: { type: 'not_found_error', message: `no ${req.method} ${route} here` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
