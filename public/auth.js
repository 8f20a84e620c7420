// Sign-in for the chat page when the service has authentication on.
//
// - A token handed to the page in its fragment (/#token=<JWT>, as an identity
//   provider's redirect would) is used as is; it never reaches a server log,
//   since browsers do not send the fragment. The name is the token's subject.
// - Otherwise, joining with a name asks the service for a development token
//   (POST /auth/dev-token, only there with AUTH_DEV_TOKENS=true) and renews it
//   before it expires.
// - With auth off (the service says so in /page-settings.js), the page sends
//   no token at all, and asks for none: no request of it fails.
import { setToken } from './api.js';
import { auth } from './page-settings.js';

const STORAGE_KEY = 'chat.token';
/** Renew this long before the development token expires. */
const RENEW_EARLY_MS = 60_000;

let renewTimer = null;

/** The subject (`sub`) of a JWT, read without verifying (the service verifies). */
function subjectOf(jwt) {
  try {
    const payload = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    const sub = JSON.parse(new TextDecoder().decode(bytes)).sub;
    return typeof sub === 'string' ? sub : null;
  } catch {
    return null;
  }
}

/** A token from the URL fragment (kept for this tab only), or the one kept before. */
function givenToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromUrl = fragment.get('token');
  if (fromUrl !== null) {
    sessionStorage.setItem(STORAGE_KEY, fromUrl);
    fragment.delete('token');
    const rest = fragment.toString();
    history.replaceState(
      null,
      '',
      `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`,
    );
  }
  return sessionStorage.getItem(STORAGE_KEY);
}

/** The name the page must use when a given token fixes it (its subject), else null. */
export function signedInName() {
  const jwt = givenToken();
  return jwt === null ? null : subjectOf(jwt);
}

/**
 * Signs in as `name` and returns the name to use (a given token's subject
 * wins). Rejects when the service refuses the name.
 */
export async function signIn(name) {
  clearTimeout(renewTimer);
  const given = givenToken();
  if (given !== null) {
    setToken(given);
    return subjectOf(given) ?? name;
  }
  if (!auth.required) {
    setToken(null);
    return name;
  }
  if (!auth.devTokens) {
    throw new Error(
      'This service needs a sign-in: open the page with the token your sign-in gave.',
    );
  }
  const response = await fetch('/auth/dev-token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ name }),
    cache: 'no-store',
  });
  const body = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(body?.detail ?? `Sign-in failed (HTTP ${response.status})`);
  setToken(body.token);
  const renewInMs = Math.max(RENEW_EARLY_MS, body.expiresIn * 1000 - RENEW_EARLY_MS);
  renewTimer = setTimeout(() => void signIn(name).catch(() => undefined), renewInMs);
  return name;
}

/** Forgets the token (a given one too). */
export function signOut() {
  clearTimeout(renewTimer);
  sessionStorage.removeItem(STORAGE_KEY);
  setToken(null);
}
