/**
 * Every environment variable gatelog reads, for `gatelog --help` and the README's table (a test keeps
 * the two in step). config.ts reads and validates them.
 */
export interface Setting {
  readonly name: string;
  readonly default: string;
  readonly help: string;
}

export const SETTINGS: readonly Setting[] = [
  {
    name: 'GATELOG_DATABASE_URL',
    default: './data/gatelog.db',
    help: 'SQLite file path (or sqlite:PATH, :memory:) or a postgres:// URL',
  },
  {
    name: 'GATELOG_DATABASE_READ_URL',
    default: 'none',
    help: 'postgres:// URL of a streaming replica of GATELOG_DATABASE_URL serving lists, summaries, sessions, exports and the live tail (PostgreSQL only; they may lag by its replication lag)',
  },
  { name: 'GATELOG_HOST', default: '127.0.0.1', help: 'address to listen on' },
  { name: 'GATELOG_PORT', default: '8080', help: 'port to listen on (PORT is read when this is unset)' },
  {
    name: 'GATELOG_WORKERS',
    default: 'the number of cores',
    help: 'processes serving the port, a supervising one beside them (serve --workers N; 1: one process; an in-memory database: 1)',
  },
  {
    name: 'GATELOG_SECRET_KEY',
    default: 'secret.key beside the SQLite file',
    help: '32 bytes (base64 or hex) encrypting provider keys at rest; required with PostgreSQL',
  },
  { name: 'GATELOG_OPENAI_BASE_URL', default: 'https://api.openai.com/v1', help: 'upstream of provider openai' },
  {
    name: 'GATELOG_ANTHROPIC_BASE_URL',
    default: 'https://api.anthropic.com',
    help: 'upstream of provider anthropic',
  },
  { name: 'GATELOG_UPSTREAM_TIMEOUT_MS', default: '600000', help: 'the longest one upstream call may take' },
  { name: 'GATELOG_PUBLIC_URL', default: "the request's Host", help: 'base of next/previous page links' },
  { name: 'GATELOG_LOG_LEVEL', default: 'info', help: 'service log level (JSON lines on stdout)' },
  { name: 'GATELOG_PRICING_FILE', default: 'none', help: "JSON prices replacing or adding to the catalog's" },
  { name: 'GATELOG_SHUTDOWN_TIMEOUT_MS', default: '25000', help: 'the longest SIGTERM/SIGINT takes' },
  { name: 'GATELOG_REQUEST_TIMEOUT_MS', default: '120000', help: 'the longest a client may take to send a request' },
  {
    name: 'GATELOG_UPSTREAM_ALLOWED_HOSTS',
    default: 'any host',
    help: 'comma-separated hosts a provider base URL may name',
  },
  {
    name: 'GATELOG_UPSTREAM_PRIVATE_ADDRESSES',
    default: 'allow',
    help: "deny: an organization's provider base_url may not reach loopback, link-local, private or unspecified addresses (set it when organizations do not trust each other)",
  },
  {
    name: 'GATELOG_UPSTREAM_ALLOWED_ADDRESSES',
    default: 'none',
    help: 'comma-separated addresses and CIDR ranges a provider base_url may always reach (the cloud metadata address is refused unless listed)',
  },
  {
    name: 'GATELOG_UPSTREAM_MAX_RESPONSE_BYTES',
    default: '67108864',
    help: 'the largest provider answer one call may hold',
  },
  {
    name: 'GATELOG_UPSTREAM_MAX_CONNECTIONS',
    default: '0',
    help: 'the most connections open to one provider origin at once (0: no limit; a streamed call holds one for its whole length)',
  },
  {
    name: 'GATELOG_CACHE_MAX_MB',
    default: '1024',
    help: 'the most the response cache ever stores (MB of answers); past it the organization holding the most loses its oldest entries',
  },
  {
    name: 'GATELOG_RETENTION_DAYS',
    default: '0',
    help: 'logs older than this many days are deleted, with their scores (0: kept forever; an organization may set its own)',
  },
  {
    name: 'GATELOG_CONTENT_RETENTION_DAYS',
    default: '0',
    help: "logs' prompts and completions older than this many days are cleared, every metric kept (0: as GATELOG_RETENTION_DAYS)",
  },
  {
    name: 'GATELOG_RETENTION_INTERVAL_S',
    default: '600',
    help: 'seconds between two runs of the retention sweep (logs, content, expired cache entries, old dead letters)',
  },
  {
    name: 'GATELOG_CIRCUIT_FAILURES',
    default: '5',
    help: "failures in a row after which a provider upstream is skipped by the failing organization's calls for a cool-down (0: never)",
  },
  {
    name: 'GATELOG_CIRCUIT_COOLDOWN_MS',
    default: '30000',
    help: 'how long a provider upstream that keeps failing is skipped before one call tries it again',
  },
  {
    name: 'GATELOG_BUDGET_HOLD_MS',
    default: '7200000',
    help: "how long a call's budget reservation is held at most; one left by a node that died is given back then",
  },
  {
    name: 'GATELOG_ALERT_RETRY_MS',
    default: '10000',
    help: "the wait before a budget alert's first retry, doubled after each (alerts are retried for a day)",
  },
  {
    name: 'GATELOG_ALERT_POLL_MS',
    default: '5000',
    help: 'how often each node looks for budget alerts due',
  },
  {
    name: 'GATELOG_STREAM_IDLE_TIMEOUT_MS',
    default: '300000',
    help: 'a streamed answer whose provider sends nothing this long is ended (stream_timeout)',
  },
  {
    name: 'GATELOG_STREAM_MAX_DURATION_MS',
    default: '3600000',
    help: 'a streamed answer still going after this long is ended (stream_timeout), however busy its provider',
  },
  {
    name: 'GATELOG_STREAM_KEEPALIVE_MS',
    default: '15000',
    help: 'a streamed answer gets a ": keepalive" comment after this long without an event; a live tail gets one this often',
  },
  {
    name: 'GATELOG_LOG_MAX_BYTES',
    default: '1048576',
    help: "the most of a streamed completion's text a log keeps per field (the client gets it all)",
  },
  {
    name: 'GATELOG_UPLOAD_MEMORY_BYTES',
    default: '536870912',
    help: 'audio upload bytes all calls may hold at once',
  },
  { name: 'GATELOG_QUERY_TIMEOUT_MS', default: '30000', help: 'the longest the reads of one list call may take' },
  {
    name: 'GATELOG_METRICS_TOKEN',
    default: 'none (open)',
    help: 'Bearer token GET /metrics requires',
  },
  {
    name: 'GATELOG_TAIL_MAX_CLIENTS',
    default: '100',
    help: 'live-tail connections (GET /api/request-logs/stream/) one node holds at once; beyond, 429',
  },
  { name: 'GATELOG_UI_PATH', default: '/ui', help: 'where the web UI is served; off switches it off' },
];
