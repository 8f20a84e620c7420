// Every call the page makes to the service goes through here: the one place
// where a sign-in adds its token (Authorization header for fetch,
// access_token for EventSource, which cannot send headers).

let token = null;

/** Sign-in hook: the page sends this bearer token from now on (null signs out). */
export function setToken(value) {
  token = value;
}

/** True once a sign-in gave the page a token (auth on); false with auth off. */
export function hasToken() {
  return token !== null;
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

let onReach = () => undefined;

/** `listener(reached)` hears of every request: false when the service could not be reached. */
export function onReachability(listener) {
  onReach = listener;
}

/**
 * One JSON request: resolves to { status, headers, body }, rejects with
 * ApiError on a non-2xx answer (and with a TypeError when the service cannot
 * be reached). `keepalive` lets it finish while the page unloads.
 */
export async function api(method, path, { body, headers = {}, keepalive = false } = {}) {
  const sent = { accept: 'application/json', ...headers };
  if (token !== null) sent.authorization = `Bearer ${token}`;
  if (body !== undefined) sent['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      keepalive,
    });
  } catch (error) {
    onReach(false);
    throw error;
  }
  onReach(true);
  const type = response.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? await response.json() : undefined;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The targets of a `Link` header by relation: { next, prev } (RFC 8288; absent when not sent). */
export function links(headers) {
  const found = {};
  for (const [, target, rel] of (headers.get('link') ?? '').matchAll(
    /<([^>]*)>\s*;\s*rel="?([^",;]+)"?/g,
  )) {
    found[rel] = target;
  }
  return found;
}

/** The URL of the event stream with these query parameters (and the token, when signed in). */
export function eventsUrl(params) {
  const query = new URLSearchParams(params);
  if (token !== null) query.set('access_token', token);
  return `/api/events?${query}`;
}
