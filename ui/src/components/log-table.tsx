/** The table of logs: one row per log, previews from the server (never whole bodies), sortable columns. */
import type { LogItem } from '../api';
import { costText, preview, secondsText } from '../lib/format';

const SORTABLE: Record<string, string> = {
  Time: 'id',
  Tokens: 'all_tokens',
  Cost: 'cost',
  Latency: 'latency',
};

interface Props {
  rows: LogItem[];
  sort: string;
  openId: string | null;
  onSort(sort: string): void;
  onOpen(id: string): void;
}

export function LogTable({ rows, sort, openId, onSort, onOpen }: Props) {
  const header = (name: string) => {
    const field = SORTABLE[name];
    if (!field) return <th scope="col">{name}</th>;
    const direction = sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : undefined;
    return (
      <th scope="col" aria-sort={direction ?? 'none'}>
        <button type="button" onClick={() => onSort(sort === `-${field}` ? field : `-${field}`)}>
          {name}
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </button>
      </th>
    );
  };
  return (
    <table class="logs" role="grid" aria-label="Logs" aria-rowcount={rows.length + 1}>
      <thead>
        <tr>
          {['Time', 'Status', 'Type', 'Model', 'Customer', 'Input', 'Output', 'Tokens', 'Cost', 'Latency'].map(header)}
        </tr>
      </thead>
      <tbody>
        {rows.map((log) => (
          <tr
            key={log.unique_id}
            tabIndex={0}
            aria-selected={log.unique_id === openId}
            data-log-id={log.unique_id}
            onClick={() => onOpen(log.unique_id)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') onOpen(log.unique_id);
            }}
          >
            <td title={log.timestamp}>{new Date(log.timestamp).toLocaleString()}</td>
            <td>
              <span class={`status ${log.status === 'error' ? 'bad' : 'good'}`}>{log.status_code}</span>
            </td>
            <td>{log.log_type}</td>
            <td>{log.model}</td>
            <td>{log.customer_identifier}</td>
            <td class="preview">{preview(log.input)}</td>
            <td class="preview">{preview(log.output ?? (log.transcript as string | null | undefined) ?? null)}</td>
            <td class="num">{log.prompt_tokens + log.completion_tokens}</td>
            <td class="num">{costText(log.cost)}</td>
            <td class="num">{secondsText(log.latency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
