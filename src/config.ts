/**
 * The only reader of the environment and the command line. Every setting is
 * parsed and checked here once, at start-up; the result is frozen and passed
 * down. A flag (`--port 3001`) wins over the variable (`PORT=3001`).
 */
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';

export type SqliteSynchronous = 'full' | 'normal' | 'off';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface RateLimit {
  readonly max: number;
  readonly windowSeconds: number;
}

/** The settings that a bad value stops the start for, with one line that says why. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface Setting<K extends string, T> {
  /** The property of Config that holds the parsed value. */
  readonly key: K;
  readonly env: string;
  /** Parsed like a value from the environment; '' shows as "unset" in the README. */
  readonly defaultValue: string;
  /** One line for the README's table (and the one place a setting is described). */
  readonly description: string;
  readonly parse: (raw: string) => T;
  /** A secret: a refused value is never repeated (an error line ends up in logs). */
  readonly secret?: boolean;
}

function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(`must be a whole number ${min}-${max}`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(`must be a whole number ${min}-${max}`);
    return value;
  };
}

/** An integer in range, or null when unset (the setting's default is then worked out from others). */
function optionalInteger(min: number, max: number) {
  const parse = integer(min, max);
  return (raw: string): number | null => (raw === '' ? null : parse(raw));
}

function oneOf<T extends string>(...values: T[]) {
  return (raw: string): T => {
    const lower = raw.toLowerCase();
    const found = values.find((v) => v === lower);
    if (found === undefined) throw new ConfigError(`must be one of ${values.join(', ')}`);
    return found;
  };
}

function onOff(raw: string): boolean {
  const lower = raw.toLowerCase();
  if (lower !== 'on' && lower !== 'off') throw new ConfigError("must be 'on' or 'off'");
  return lower === 'on';
}

function optionalString(raw: string): string | null {
  return raw === '' ? null : raw;
}

function boolean(raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off|)$/i.test(raw)) return false;
  throw new ConfigError('must be true or false');
}

function rateLimit(raw: string): RateLimit | null {
  if (raw.toLowerCase() === 'off') return null;
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (!match) throw new ConfigError("must be '<requests>/<seconds>' or 'off'");
  const max = Number(match[1]);
  const windowSeconds = Number(match[2]);
  if (max < 1 || windowSeconds < 1)
    throw new ConfigError('requests and seconds must be at least 1');
  return { max, windowSeconds };
}

function databaseUrl(raw: string): string {
  if (raw === 'sqlite::memory:' || /^sqlite:.+/.test(raw)) return raw;
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('is not a valid postgres:// URL');
    }
    return raw;
  }
  throw new ConfigError("must be 'sqlite:<file>', 'sqlite::memory:' or 'postgres://...'");
}

function secret(raw: string): string | null {
  if (raw === '') return null;
  // HS256 with a short secret can be brute-forced offline from any one token.
  if (raw.length < 32) throw new ConfigError('must be at least 32 characters');
  return raw;
}

function url(raw: string): string | null {
  if (raw === '') return null;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError('is not a valid URL');
  }
  return raw;
}

function list(raw: string): readonly string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Whom X-Forwarded-For is believed from: nobody, the nearest `n` hops, or these addresses and CIDRs. */
export type TrustProxy = false | number | readonly string[];

/** The names proxy-addr knows for the loopback, link-local and unique-local ranges. */
const ADDRESS_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function addressOrCidr(entry: string): boolean {
  if (ADDRESS_RANGES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}

function trustProxy(raw: string): TrustProxy {
  if (/^(0|false|no|off|)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) {
    // Trusting every hop makes the leftmost X-Forwarded-For the client: whatever the client wrote.
    throw new ConfigError(
      'trusting every proxy lets a client pick its own address; give the number of proxies in front (e.g. 1) or their addresses/CIDRs',
    );
  }
  if (/^\d+$/.test(raw)) return integer(1, 100)(raw);
  const entries = list(raw);
  const bad = entries.find((entry) => !addressOrCidr(entry));
  if (bad !== undefined || entries.length === 0) {
    throw new ConfigError(
      `must be false, a number of proxies, or comma-separated addresses/CIDRs (${JSON.stringify(bad)} is none)`,
    );
  }
  return entries;
}

function host(raw: string): string {
  if (raw === '' || /\s/.test(raw)) throw new ConfigError('must be a host name or address');
  return raw;
}

function define<const K extends string, T>(setting: Setting<K, T>): Setting<K, T> {
  return setting;
}

/** Every setting, its variable, default and meaning: the README's table is this list. */
export const settings = [
  define({
    key: 'port',
    env: 'PORT',
    defaultValue: '3000',
    description: 'TCP port (0 picks a free one)',
    parse: integer(0, 65535),
  }),
  define({
    key: 'host',
    env: 'HOST',
    defaultValue: '127.0.0.1',
    description: 'address to listen on',
    parse: host,
  }),
  define({
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    defaultValue: 'sqlite:data/messages.db',
    description: "'sqlite:<file>', 'sqlite::memory:' or 'postgres://user:pass@host:port/db'",
    parse: databaseUrl,
  }),
  define({
    key: 'logLevel',
    env: 'LOG_LEVEL',
    defaultValue: 'info',
    description: 'pino log level',
    parse: oneOf<LogLevel>('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  }),
  define({
    key: 'bodyLimit',
    env: 'BODY_LIMIT',
    defaultValue: '65536',
    description: 'largest request body in bytes',
    parse: integer(1024, 10 * 1024 * 1024),
  }),
  define({
    key: 'sqliteSynchronous',
    env: 'SQLITE_SYNCHRONOUS',
    defaultValue: 'full',
    description:
      "SQLite 'synchronous' pragma: full (fsync every commit, power-loss safe), normal or off",
    parse: oneOf<SqliteSynchronous>('full', 'normal', 'off'),
  }),
  define({
    key: 'sqliteInstanceWaitMs',
    env: 'SQLITE_INSTANCE_WAIT_MS',
    defaultValue: '',
    description:
      'how long a start waits for another process to let go of the SQLite file (one process per file) before it exits 1; unset: SHUTDOWN_TIMEOUT_MS + 5 s, so a restart may overlap the whole graceful stop of the process it replaces',
    parse: optionalInteger(0, 3_600_000),
  }),
  define({
    key: 'pgPoolSize',
    env: 'PG_POOL_SIZE',
    defaultValue: '10',
    description: 'PostgreSQL connections per instance',
    parse: integer(1, 1000),
  }),
  define({
    key: 'storeTimeoutMs',
    env: 'STORE_TIMEOUT_MS',
    defaultValue: '5000',
    description: 'longest wait for the store before a 503',
    parse: integer(100, 600_000),
  }),
  define({
    key: 'batching',
    env: 'BATCHING',
    defaultValue: 'on',
    description:
      "'on' or 'off': requests, reads and writes batched per event-loop turn (see docs/schedulers.md); 'off' for A/B runs",
    parse: onOff,
  }),
  define({
    key: 'idempotencyTtlHours',
    env: 'IDEMPOTENCY_TTL_HOURS',
    defaultValue: '24',
    description: 'how long Idempotency-Key outcomes are kept',
    parse: integer(24, 24 * 365),
  }),
  define({
    key: 'listMaxStreamsPerClient',
    env: 'LIST_MAX_STREAMS_PER_CLIENT',
    defaultValue: '8',
    description:
      'lists without limit (streamed) one client may read at once (token subject, else address; 429 past it)',
    parse: integer(1, 10_000),
  }),
  define({
    key: 'listStallTimeoutMs',
    env: 'LIST_STALL_TIMEOUT_MS',
    defaultValue: '15000',
    description:
      'a streamed list whose client takes nothing for this long is cut (connection closed, no closing bracket)',
    parse: integer(100, 600_000),
  }),
  define({
    key: 'eventsMaxStreams',
    env: 'EVENTS_MAX_STREAMS',
    defaultValue: '10000',
    description: 'cap on open event streams per instance (503 past it)',
    parse: integer(1, 1_000_000),
  }),
  define({
    key: 'eventsMaxStreamsPerClient',
    env: 'EVENTS_MAX_STREAMS_PER_CLIENT',
    defaultValue: '20',
    description:
      'cap on open event streams per client (token subject, else address, as for rate limits; 429 past it)',
    parse: integer(1, 1_000_000),
  }),
  define({
    key: 'eventsRetentionHours',
    env: 'EVENTS_RETENTION_HOURS',
    defaultValue: '168',
    description: 'how long the change log keeps changes for resuming streams',
    parse: integer(1, 24 * 3650),
  }),
  define({
    key: 'eventsHeartbeatMs',
    env: 'EVENTS_HEARTBEAT_MS',
    defaultValue: '15000',
    description: 'interval of heartbeat comments on event streams',
    parse: integer(100, 15_000),
  }),
  define({
    key: 'shutdownTimeoutMs',
    env: 'SHUTDOWN_TIMEOUT_MS',
    defaultValue: '10000',
    description: 'longest graceful shutdown before a forced exit',
    parse: integer(100, 600_000),
  }),
  define({
    key: 'shutdownDrainMs',
    env: 'SHUTDOWN_DRAIN_MS',
    defaultValue: '0',
    description:
      'on SIGTERM/SIGINT, how long /readyz answers 503 (requests still served) before the listener closes; give load balancers time to notice',
    parse: integer(0, 600_000),
  }),
  define({
    key: 'rateLimitWrite',
    env: 'RATE_LIMIT_WRITE',
    defaultValue: '50/10',
    description: "write budget per client, '<requests>/<seconds>' or 'off'",
    parse: rateLimit,
  }),
  define({
    key: 'rateLimitRead',
    env: 'RATE_LIMIT_READ',
    defaultValue: '600/10',
    description: "read budget per client, '<requests>/<seconds>' or 'off'",
    parse: rateLimit,
  }),
  define({
    key: 'authJwtSecret',
    env: 'AUTH_JWT_SECRET',
    defaultValue: '',
    description: 'HS256 secret (at least 32 characters); turns authentication on',
    parse: secret,
    secret: true,
  }),
  define({
    key: 'authJwksUrl',
    env: 'AUTH_JWKS_URL',
    defaultValue: '',
    description: 'JWKS URL; turns authentication on',
    parse: url,
  }),
  define({
    key: 'authIssuer',
    env: 'AUTH_ISSUER',
    defaultValue: '',
    description: 'required JWT issuer (iss), if set',
    parse: optionalString,
  }),
  define({
    key: 'authAudience',
    env: 'AUTH_AUDIENCE',
    defaultValue: '',
    description: 'required JWT audience (aud), if set',
    parse: optionalString,
  }),
  define({
    key: 'authAdminClaim',
    env: 'AUTH_ADMIN_CLAIM',
    defaultValue: 'roles',
    description: 'JWT claim that carries roles',
    parse: host,
  }),
  define({
    key: 'authAdminValue',
    env: 'AUTH_ADMIN_VALUE',
    defaultValue: 'admin',
    description: 'role value that grants admin rights',
    parse: host,
  }),
  define({
    key: 'authClockToleranceSeconds',
    env: 'AUTH_CLOCK_TOLERANCE_SECONDS',
    defaultValue: '30',
    description: 'leeway for the exp and nbf claims between clocks',
    parse: integer(0, 600),
  }),
  define({
    key: 'authDevTokens',
    env: 'AUTH_DEV_TOKENS',
    defaultValue: 'false',
    description: 'development only: POST /auth/dev-token mints tokens from the secret',
    parse: boolean,
  }),
  define({
    key: 'metricsToken',
    env: 'METRICS_TOKEN',
    defaultValue: '',
    description:
      'bearer token required by /metrics; unset with auth on, /metrics needs a valid JWT',
    parse: optionalString,
    secret: true,
  }),
  define({
    key: 'corsOrigins',
    env: 'CORS_ORIGINS',
    defaultValue: '',
    description: 'comma-separated origins allowed by CORS (off when empty)',
    parse: list,
  }),
  define({
    key: 'trustProxy',
    env: 'TRUST_PROXY',
    defaultValue: 'false',
    description:
      "proxies whose X-Forwarded-For is believed: 'false'; their addresses/CIDRs, comma-separated ('loopback', 'linklocal', 'uniquelocal' too), the safe choice; or their number (1: the client is the address the one proxy saw; only when no client can reach the service but through the proxies). 'true' is refused: it believes the leftmost address, which any client can write",
    parse: trustProxy,
  }),
  define({
    key: 'redisUrl',
    env: 'REDIS_URL',
    defaultValue: '',
    description: 'Redis for rate-limit budgets shared by instances (per instance when unset)',
    parse: url,
  }),
  define({
    key: 'redisKeyPrefix',
    env: 'REDIS_KEY_PREFIX',
    defaultValue: 'message-service:',
    description: 'prefix of the Redis keys this service writes',
    parse: host,
  }),
  define({
    key: 'maxConnections',
    env: 'MAX_CONNECTIONS',
    defaultValue: '20000',
    description:
      'cap on open TCP connections; lowered (with a warning) to stay below the open-file limit (ulimit -n) less a reserve for files, the store and Node; refusals are logged at most every 10 s',
    parse: integer(1, 1_000_000),
  }),
  define({
    key: 'requestTimeoutMs',
    env: 'REQUEST_TIMEOUT_MS',
    defaultValue: '30000',
    description: 'time allowed to receive a whole request',
    parse: integer(1000, 600_000),
  }),
  define({
    key: 'headersTimeoutMs',
    env: 'HEADERS_TIMEOUT_MS',
    defaultValue: '10000',
    description: 'time allowed to receive the request headers (slow clients are cut off)',
    parse: integer(1000, 600_000),
  }),
] as const;

type Settings = (typeof settings)[number];

/** The checked settings: one property per entry of `settings`, typed by what its `parse` returns. */
export type Config = {
  readonly [S in Settings as S['key']]: ReturnType<S['parse']>;
};

function flagName(env: string): string {
  return env.toLowerCase().replace(/_/g, '-');
}

/** A refused value as an error line may show it: not a secret, nor a URL's password. */
function shownValue(setting: Setting<string, unknown>, raw: string): string {
  if (setting.secret === true) return ' (value not shown: a secret)';
  // Also in a URL too broken to parse, whose password may hold `/` or `@` (what makes it
  // break): everything from `scheme://user:` to the last `@` is hidden.
  return `=${JSON.stringify(raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@]*:).*@/is, '$1***@'))}`;
}

/** Reads and checks every setting; throws ConfigError with one line on the first bad one. */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  argv: readonly string[] = [],
): Config {
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        settings.map((s) => [flagName(s.env), { type: 'string' as const }]),
      ),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const config: Record<string, unknown> = {};
  for (const setting of settings) {
    const flag = flags[flagName(setting.env)];
    const raw = typeof flag === 'string' ? flag : (env[setting.env] ?? setting.defaultValue);
    try {
      config[setting.key] = setting.parse(raw.trim());
    } catch (error) {
      const source = typeof flag === 'string' ? `--${flagName(setting.env)}` : setting.env;
      throw new ConfigError(
        `invalid setting ${source}${shownValue(setting, raw)}: ${(error as Error).message}`,
      );
    }
  }
  const result = config as unknown as Config;
  if (result.authJwtSecret !== null && result.authJwksUrl !== null) {
    throw new ConfigError('invalid settings: set AUTH_JWT_SECRET or AUTH_JWKS_URL, not both');
  }
  if (result.authDevTokens && result.authJwtSecret === null) {
    throw new ConfigError('invalid setting AUTH_DEV_TOKENS: needs AUTH_JWT_SECRET');
  }
  if (result.shutdownDrainMs >= result.shutdownTimeoutMs) {
    throw new ConfigError(
      'invalid settings: SHUTDOWN_DRAIN_MS must be less than SHUTDOWN_TIMEOUT_MS',
    );
  }
  if (result.headersTimeoutMs > result.requestTimeoutMs) {
    throw new ConfigError(
      'invalid settings: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS',
    );
  }
  return Object.freeze(result);
}

/** What SQLITE_INSTANCE_WAIT_MS says, or SHUTDOWN_TIMEOUT_MS and a margin when it is unset. */
export function sqliteInstanceWaitMs(config: Config): number {
  return config.sqliteInstanceWaitMs ?? config.shutdownTimeoutMs + 5000;
}

/** The store DATABASE_URL names, for the start line: its engine and where it is, without credentials. */
export function describeStore(databaseUrl: string): { engine: string; location: string } {
  if (databaseUrl.startsWith('sqlite:')) {
    return { engine: 'sqlite', location: databaseUrl.slice('sqlite:'.length) };
  }
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  return {
    engine: 'postgres',
    location: `${url.host}${url.pathname}${schema === null ? '' : ` (schema ${schema})`}`,
  };
}

/** The defaults, for tests and tools that build a config by hand. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}), ...overrides });
}
