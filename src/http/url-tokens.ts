/**
 * Bearer tokens in URLs (`?access_token=`, RFC 6750 section 2.3): the one
 * reading of a query string that authentication, private caching, redirects
 * and log redaction share, so that no spelling can be a token to one of them
 * and not to another. A parameter is a token when its name, decoded as
 * URLSearchParams decodes it (percent escapes, `+`), is `access_token` in
 * any letter case: `%61ccess_token` is one.
 */

const TOKEN_NAME = 'access_token';

interface Parameter {
  /** As sent, still encoded. */
  readonly raw: string;
  readonly isToken: boolean;
  /** Decoded. */
  readonly value: string;
}

function split(url: string): { path: string; query: string | undefined } {
  const at = url.indexOf('?');
  return at === -1
    ? { path: url, query: undefined }
    : { path: url.slice(0, at), query: url.slice(at + 1) };
}

/** Could this query hold a token at all? (Most hold none; this spares them the decoding.) */
function mayHoldToken(query: string): boolean {
  return query.includes('%') || /access_token/i.test(query);
}

function parameters(query: string): Parameter[] {
  return query.split('&').map((raw) => {
    // One pair, decoded exactly as URLSearchParams decodes it (the '&' keeps a leading '?' in the name).
    const [entry] = new URLSearchParams(`&${raw}`);
    return {
      raw,
      isToken: entry !== undefined && entry[0].toLowerCase() === TOKEN_NAME,
      value: entry?.[1] ?? '',
    };
  });
}

function tokenParameters(url: string): Parameter[] | undefined {
  const { query } = split(url);
  if (query === undefined || !mayHoldToken(query)) return undefined;
  const all = parameters(query);
  return all.some((p) => p.isToken) ? all : undefined;
}

/** The tokens the URL carries, decoded (more than one is the client's mistake). */
export function urlTokens(url: string): string[] {
  return (tokenParameters(url) ?? []).filter((p) => p.isToken).map((p) => p.value);
}

export function carriesToken(url: string): boolean {
  return tokenParameters(url) !== undefined;
}

/** The URL with every token's value replaced, for logs. */
export function redactUrl(url: string): string {
  const all = tokenParameters(url);
  if (all === undefined) return url;
  const redacted = all.map((p) => (p.isToken ? `${p.raw.split('=', 1)[0]}=[redacted]` : p.raw));
  return `${split(url).path}?${redacted.join('&')}`;
}

/** The URL without its token parameters (for a redirect, which must not echo one). */
export function withoutTokens(url: string): string {
  const all = tokenParameters(url);
  if (all === undefined) return url;
  const kept = all.filter((p) => !p.isToken).map((p) => p.raw);
  const { path } = split(url);
  return kept.length === 0 ? path : `${path}?${kept.join('&')}`;
}

/**
 * Cache-Control for an answer to a URL that carried a token: private and
 * revalidated, whatever the route said (no `public`, no freshness lifetime);
 * its other directives (no-store, no-transform) stay.
 */
export function privateCacheControl(current: string | undefined): string {
  const kept = (current ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(
      (d) => d !== '' && !/^(public|private|no-cache|max-age=.*|s-maxage=.*|immutable)$/i.test(d),
    );
  return ['private', 'no-cache', ...kept].join(', ');
}
