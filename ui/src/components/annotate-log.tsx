/**
 * The dataset log being annotated, whole, as a reviewer needs it: status (and, for a failed call, its
 * error), model, cost, latency and tokens; every message of the prompt — system, earlier turns, tool calls
 * and tool results — then the completion; and the metadata.
 *
 * A dataset log keeps no error message (docs/api.md "Dataset logs"): for a failed call it is read from the
 * request log it was copied from, while that log exists.
 */
import type { ComponentChildren } from 'preact';
import { getLog, type DatasetLog, type LogItem } from '../api';
import { secondsText } from '../lib/format';
import { completionMessage, costShown, promptMessages, readableJson } from '../lib/log-facts';
import type { ShownMessage } from '../lib/messages';
import { useLoad } from '../use-load';
import { TimeText } from './time-text';

export function LogView({ apiKey, log }: { apiKey: string; log: DatasetLog }) {
  const failed = log.status_code >= 400;
  const sourceId = failed ? log.source_log_unique_id : null;
  const [source] = useLoad<LogItem | null>(
    () => (sourceId ? getLog(apiKey, sourceId) : Promise.resolve(null)),
    [apiKey, sourceId],
  );
  const cost = costShown(log);
  const prompt = promptMessages(log.input);
  const completion = completionMessage(log.output);
  const metadata = Object.entries(log.metadata ?? {});

  const error = source.state === 'done' && source.value?.error_message ? String(source.value.error_message) : null;
  return (
    <article class="ann-log" aria-label="Log">
      {failed && (
        <div class="ann-failure" role="note" aria-label="Failed call">
          <strong>
            Failed: {log.status_code} {log.status}
          </strong>
          {source.state === 'loading' && sourceId && <span> Reading the error…</span>}
          {error && <pre class="ann-text">{error}</pre>}
          {source.state === 'done' && source.value && !error && (
            <span class="summary"> The call's log holds no error message.</span>
          )}
          {!sourceId && <span class="summary"> No error message: this log was not copied from a request log.</span>}
          {source.state === 'error' && (
            <span class="summary"> The error message could not be read from the source log: {source.message}</span>
          )}
        </div>
      )}
      <dl class="ann-facts">
        <Fact name="Status">
          <span class={failed ? 'status bad' : 'status good'}>
            {log.status_code} {log.status}
          </span>
        </Fact>
        <Fact name="Model">{log.model || '—'}</Fact>
        <Fact name="Type">{log.log_type}</Fact>
        <Fact name="Cost">
          <span title={cost.note ?? undefined}>{cost.text}</span>
          {cost.note && <span class="fact-note">{cost.note}</span>}
        </Fact>
        <Fact name="Latency">{secondsText(log.latency)}</Fact>
        <Fact name="Tokens">
          {log.prompt_tokens} in, {log.completion_tokens} out
        </Fact>
        <Fact name="Time">
          <TimeText iso={log.timestamp} />
        </Fact>
        <Fact name="Environment">{log.environment}</Fact>
      </dl>

      <section class="ann-part" aria-labelledby="ann-prompt">
        <h2 id="ann-prompt">Prompt</h2>
        {prompt ? <Messages messages={prompt} label="Prompt messages" /> : <Text text={log.prompt || log.input} />}
      </section>

      <section class="ann-part" aria-labelledby="ann-completion">
        <h2 id="ann-completion">Completion</h2>
        {completion ? (
          <Messages messages={[completion]} label="Completion message" />
        ) : log.completion || log.output ? (
          <Text text={log.completion || log.output} />
        ) : (
          <p class="summary">{failed ? 'None: the call failed.' : 'None recorded.'}</p>
        )}
      </section>

      <section class="ann-part" aria-labelledby="ann-metadata">
        <h2 id="ann-metadata">Metadata</h2>
        {metadata.length === 0 ? (
          <p class="summary">None.</p>
        ) : (
          <table class="kv ann-kv" aria-label="Metadata">
            <tbody>
              {metadata.map(([key, value]) => (
                <tr key={key}>
                  <th scope="row">{key}</th>
                  <td>{typeof value === 'string' ? value : JSON.stringify(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </article>
  );
}

function Fact({ name, children }: { name: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Text({ text }: { text: string | null }) {
  return text ? <pre class="ann-text">{readableJson(text)}</pre> : <p class="summary">None recorded.</p>;
}

/** Messages in order, each with its role; a tool call with its arguments, a tool result with its call. */
function Messages({ messages, label }: { messages: ShownMessage[]; label: string }) {
  return (
    <ol class="messages ann-messages" aria-label={label}>
      {messages.map((m, i) => (
        <li key={i} class={`message role-${m.role}`}>
          <span class="role">
            {m.role}
            {m.toolCallId && <span class="call-id"> · result of {m.toolCallId}</span>}
          </span>
          {m.text && (m.role === 'tool' ? <pre class="ann-text">{readableJson(m.text)}</pre> : <p>{m.text}</p>)}
          {m.toolCalls.map((call, j) => (
            <div key={j} class="ann-tool-call">
              <span class="call-id">
                calls {call.name}
                {call.id ? ` (${call.id})` : ''}
              </span>
              <pre class="ann-text">{readableJson(call.arguments)}</pre>
            </div>
          ))}
        </li>
      ))}
    </ol>
  );
}
