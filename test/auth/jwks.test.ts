/**
 * Authentication with AUTH_JWKS_URL: keys from a JWKS served here (node:http
 * on 127.0.0.1, port 0), fetched once and cached; asymmetric algorithms only;
 * an unreachable key server is a 503 (the token may be fine), not a 401.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { bearer } from './tokens.ts';

interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function signingKey(kid: string, alg: 'RS256' | 'ES256' | 'EdDSA'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

async function sign(key: SigningKey, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ sub: 'ada', ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key.privateKey);
}

/** A JWKS endpoint on 127.0.0.1 that counts how often it was fetched. */
async function serveJwks(
  keys: () => JWK[],
): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: keys() }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/.well-known/jwks.json`, hits: () => hits, server };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('authentication with a JWKS', () => {
  let rsa: SigningKey;
  let ec: SigningKey;
  let stranger: SigningKey;
  let jwks: Awaited<ReturnType<typeof serveJwks>>;
  let t: TestApp;

  before(async () => {
    rsa = await signingKey('rsa-1', 'RS256');
    ec = await signingKey('ec-1', 'ES256');
    stranger = await signingKey('rsa-1', 'RS256');
    jwks = await serveJwks(() => [rsa.jwk, ec.jwk]);
    t = await startTestApp(sqliteEngine, { authJwksUrl: jwks.url });
  });
  after(async () => {
    await t?.close();
    if (jwks !== undefined) await close(jwks.server);
  });

  const get = (headers: Record<string, string>) =>
    t.app.http.inject({ url: '/api/messages', headers });

  it('accepts tokens signed by any key of the set, fetching the set once', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await get(bearer(await sign(rsa)))).statusCode, 200);
      assert.equal((await get(bearer(await sign(ec)))).statusCode, 200);
    }
    assert.equal(jwks.hits(), 1, 'the key set is cached');
  });

  it('refuses a token signed by another key with the same kid, or an unknown kid', async () => {
    for (const jwt of [await sign(stranger), await sign({ ...stranger, kid: 'nope' })]) {
      const response = await get(bearer(jwt));
      assert.equal(response.statusCode, 401, response.body);
      assert.match(String(response.headers['www-authenticate']), /error="invalid_token"/);
    }
  });

  it('refuses HS256 (a public key is no secret) and alg=none', async () => {
    const hs = await new SignJWT({ sub: 'ada' })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(JSON.stringify(rsa.jwk)));
    const response = await get(bearer(hs));
    assert.equal(response.statusCode, 401);
    const [, payload] = (await sign(rsa)).split('.');
    const none = `${Buffer.from('{"alg":"none","kid":"rsa-1"}').toString('base64url')}.${payload}.`;
    assert.equal((await get(bearer(none))).statusCode, 401);
  });

  it('answers 503 with Retry-After when the key server cannot be reached', async () => {
    const down = await serveJwks(() => []);
    const url = down.url;
    await close(down.server);
    const app = await startTestApp(sqliteEngine, { authJwksUrl: url });
    try {
      const response = await app.app.http.inject({
        url: '/api/messages',
        headers: bearer(await sign(rsa)),
      });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.json().type, '/problems/unavailable');
      assert.ok(Number(response.headers['retry-after']) > 0);
      // No token at all is still a 401: nothing needs the key server for that.
      const none = await app.app.http.inject({ url: '/api/messages' });
      assert.equal(none.statusCode, 401);
    } finally {
      await app.close();
    }
  });

  it('answers 503 when the key server answers with something that is not a key set', async () => {
    const broken = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('oops');
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const { port } = broken.address() as AddressInfo;
    const app = await startTestApp(sqliteEngine, {
      authJwksUrl: `http://127.0.0.1:${port}/jwks`,
    });
    try {
      const response = await app.app.http.inject({
        url: '/api/messages',
        headers: bearer(await sign(rsa)),
      });
      assert.equal(response.statusCode, 503, response.body);
    } finally {
      await app.close();
      await close(broken);
    }
  });
});
