// The one event stream of every change you may see (GET /api/events),
// resumed from the last change received. EventSource reconnects by itself
// after a network error; after a non-200 answer (503, 401) it gives up, so
// the page retries by hand, backing off.
import { eventsUrl } from './api.js';
import { changeKinds } from './page-settings.js';

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const state = {
  source: null,
  /** The last change received: where a stream opened by hand resumes. */
  lastEventId: null,
  retryMs: RETRY_MIN_MS,
  retryTimer: null,
};
const hooks = {
  onChange: () => undefined,
  onReset: () => undefined,
  onUp: () => undefined,
  onDown: () => undefined,
};

/** Stops the stream (and a retry waiting to open it). */
export function stopLive() {
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  state.source?.close();
  state.source = null;
}

/** True once a stream was started and not stopped (open, opening, or waiting to retry). */
export function liveStarted() {
  return state.source !== null || state.retryTimer !== null;
}

/** Opens the stream from change `since` (null: from now; undefined: from the last one received). */
export function startLive(since) {
  stopLive();
  if (since !== undefined) state.lastEventId = since;
  const params = {};
  if (state.lastEventId !== null) params.since = state.lastEventId;
  const source = new EventSource(eventsUrl(params));
  state.source = source;
  source.onopen = () => {
    state.retryMs = RETRY_MIN_MS;
    hooks.onUp();
  };
  for (const kind of changeKinds) {
    source.addEventListener(kind, (event) => {
      state.lastEventId = event.lastEventId;
      hooks.onChange(kind, JSON.parse(event.data), Number(event.lastEventId));
    });
  }
  // The stream cannot resume from where we were: read everything again.
  source.addEventListener('reset', (event) => {
    state.lastEventId = event.lastEventId;
    hooks.onReset();
  });
  source.onerror = () => {
    if (source !== state.source) return;
    if (source.readyState !== EventSource.CLOSED) {
      hooks.onDown('Connection lost, reconnecting…');
      return;
    }
    hooks.onDown(`Disconnected, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    source.close();
    state.source = null;
    state.retryTimer = setTimeout(() => startLive(), state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  };
}

/**
 * `onChange(kind, data, seq)`: one change; `onReset()`: the stream started
 * over, reload; `onUp()`: open; `onDown(text)`: lost, and what happens next.
 */
export function initLive(handlers) {
  Object.assign(hooks, handlers);
}
