/**
 * The composition root: the only place that picks the store and wires the
 * store, the change feed, the services and the HTTP adapter together.
 */
import { v7 as uuidv7 } from 'uuid';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { AccessView } from './domain/access-view.ts';
import { MemberRoomsMemo } from './domain/member-rooms-memo.ts';
import type { ChangeFeed } from './domain/change-feed.ts';
import { IdempotencyService } from './domain/idempotency.ts';
import { MessageService } from './domain/message-service.ts';
import { ReactionService } from './domain/reaction-service.ts';
import { feedWithActivity } from './domain/room-activity.ts';
import { RoomService } from './domain/room-service.ts';
import type { Store } from './domain/store.ts';
import { buildHttpApp } from './http/http-app.ts';
import { createMetrics } from './http/metrics.ts';
import { createStore } from './store/create-store.ts';
import { timedStore } from './store/timed-store.ts';
import { createLogger } from './logger.ts';

export interface AppOptions {
  /** A store to use instead of the one DATABASE_URL names (tests). */
  readonly store?: Store;
  readonly now?: () => Date;
  readonly logStream?: NodeJS.WritableStream;
  /** The open-file limit MAX_CONNECTIONS must stay below (tests); by default the process's own. */
  readonly openFileLimit?: number | null;
}

export interface App {
  readonly http: FastifyInstance;
  readonly store: Store;
  readonly feed: ChangeFeed;
  /** /readyz turns 503 from here on. */
  beginShutdown(): void;
  /** Stops in reverse order of start: HTTP (in-flight requests finish), feed, store. */
  close(): Promise<void>;
}

/** How often expired changes and idempotency outcomes are purged. */
const PURGE_INTERVAL_MS = 10 * 60_000;

export async function buildApp(config: Config, options: AppOptions = {}): Promise<App> {
  const now = options.now ?? (() => new Date());
  let stopping = false;
  const log = createLogger(config.logLevel, options.logStream);

  const engineStore = options.store ?? createStore(config, log);
  const metrics = createMetrics(engineStore.engine);
  // Every operation the services ask of the store is timed; the engine knows nothing of it.
  const store = timedStore(engineStore, (operation, seconds) =>
    metrics.observeStoreOperation(operation, seconds),
  );
  try {
    await store.migrate();
  } catch (error) {
    // A store this app made is its to close: on SQLite it holds the file (a second try in this
    // process would wait for it).
    if (options.store === undefined) await engineStore.close().catch(() => undefined);
    throw error;
  }
  const access = new AccessView(store.rooms);
  const memberships = new MemberRoomsMemo(() => changeFeed.head);
  // The rooms' newest messages: kept by every batch of the feed, loaded as room lists ask.
  const { feed: changeFeed, activity } = feedWithActivity(
    store.changes,
    (names, perRoom) => store.messages.recent(names, perRoom),
    (err) => log.error({ err }, 'change feed failed (a read of the log, or a follower)'),
    [access, memberships],
  );
  const rooms = new RoomService({
    rooms: store.rooms,
    members: store.members,
    readMarkers: store.readMarkers,
    activity,
    memberships,
    latestSeq: async () => (await changeFeed.bounds()).latest,
    changesReached: (seq) => changeFeed.reached(seq),
    now,
    onChange: () => changeFeed.wake(),
  });
  const service = new MessageService({
    messages: store.messages,
    gate: rooms.gate,
    newId: () => uuidv7(),
    now,
    onChange: () => changeFeed.wake(),
  });
  const reactions = new ReactionService({
    reactions: store.reactions,
    messages: store.messages,
    gate: rooms.gate,
    now,
    onChange: () => changeFeed.wake(),
  });
  const idempotency = new IdempotencyService(store.idempotency, now, config.idempotencyTtlHours);

  const http = await buildHttpApp({
    config,
    service,
    rooms,
    reactions,
    idempotency,
    feed: changeFeed,
    access,
    ping: () => store.ping(),
    isStopping: () => stopping,
    logger: log,
    metrics,
    openFileLimit: options.openFileLimit,
  });
  await changeFeed.start();

  const purge = () => {
    const t = now().getTime();
    const failed = (err: unknown) => log.error({ err }, 'purge failed');
    store.changes.purge(new Date(t - config.eventsRetentionHours * 3_600_000)).catch(failed);
    store.idempotency.purge(new Date(t - config.idempotencyTtlHours * 3_600_000)).catch(failed);
  };
  const purgeTimer = setInterval(purge, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  return {
    http,
    store,
    feed: changeFeed,
    beginShutdown: () => {
      stopping = true;
    },
    close: async () => {
      stopping = true;
      clearInterval(purgeTimer);
      await http.close();
      await changeFeed.stop();
      await store.close();
    },
  };
}
