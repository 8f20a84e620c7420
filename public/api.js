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

/** One JSON request: resolves to { status, headers, body }, rejects with ApiError on a non-2xx answer. */
export async function api(method, path, { body, headers = {} } = {}) {
  const sent = { accept: 'application/json', ...headers };
  if (token !== null) sent.authorization = `Bearer ${token}`;
  if (body !== undefined) sent['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const type = response.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? await response.json() : undefined;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The URL of the event stream with these query parameters (and the token, when signed in). */
export function eventsUrl(params) {
  const query = new URLSearchParams(params);
  if (token !== null) query.set('access_token', token);
  return `/api/events?${query}`;
}
