/**
 * TRUST_PROXY names the proxies in front (a hop count, or their addresses and
 * CIDRs), so the client address is the one the nearest trusted proxy saw, not
 * whatever a client writes at the left of X-Forwarded-For. `true` (trust every
 * hop) is refused: behind a normal proxy it lets a client pick its own address.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { ConfigError, loadConfig, type Config } from '../../src/config.ts';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp } from '../support/test-app.ts';

const PROXY = '10.0.0.7';
const WRITES = 3;

/** A POST as a proxy forwards it: the client's own X-Forwarded-For, then the address the proxy saw. */
function forwarded(spoofed: string, seenByProxy: string, remoteAddress = PROXY): InjectOptions {
  return {
    method: 'POST',
    url: '/api/messages',
    headers: { 'x-forwarded-for': `${spoofed}, ${seenByProxy}` },
    payload: { author: 'ada', content: 'hi' },
    remoteAddress,
  };
}

/** Status codes of `count` forwarded writes from one client, each with another made-up leftmost address. */
async function writesFrom(trustProxy: Config['trustProxy'], client: string, count: number) {
  const t = await startTestApp(sqliteEngine, {
    trustProxy,
    rateLimitWrite: { max: WRITES, windowSeconds: 60 },
  });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      statuses.push((await t.app.http.inject(forwarded(`203.0.113.${i}`, client))).statusCode);
    }
    // Another client behind the same proxy keeps a budget of its own.
    const other = await t.app.http.inject(forwarded('203.0.113.200', '198.51.100.99'));
    return { statuses, other: other.statusCode };
  } finally {
    await t.close();
  }
}

describe('TRUST_PROXY', () => {
  it('takes false, a hop count, or addresses and CIDRs; refuses true with what to use instead', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({}, ['--trust-proxy', '2']).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.1,::1,loopback' }).trustProxy, [
      '10.0.0.0/8',
      '192.0.2.1',
      '::1',
      'loopback',
    ]);
    for (const yes of ['true', 'TRUE', 'yes', 'on']) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: yes }),
        (error: Error) =>
          error instanceof ConfigError &&
          /TRUST_PROXY/.test(error.message) &&
          /number of proxies/.test(error.message),
        yes,
      );
    }
    for (const bad of ['10.0.0.0/33', 'proxy.example', '1.2.3', '10.0.0.1/', '-1', '1.5']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), ConfigError, bad);
    }
  });

  it('with a hop count of 1, a made-up leftmost X-Forwarded-For does not change the client', async () => {
    const { trustProxy } = loadConfig({ TRUST_PROXY: '1' });
    const { statuses, other } = await writesFrom(trustProxy, '198.51.100.7', WRITES + 2);
    assert.deepEqual(statuses, [201, 201, 201, 429, 429], 'one budget, whatever the client wrote');
    assert.equal(other, 201);
  });

  it('with the proxy named by CIDR, the address it saw is the client; an untrusted sender is its own client', async () => {
    const { trustProxy } = loadConfig({ TRUST_PROXY: '10.0.0.0/8' });
    const { statuses, other } = await writesFrom(trustProxy, '198.51.100.8', WRITES + 1);
    assert.deepEqual(statuses, [201, 201, 201, 429]);
    assert.equal(other, 201);

    // A client that is not a trusted proxy cannot name anyone else by sending the header itself.
    const t = await startTestApp(sqliteEngine, {
      trustProxy,
      rateLimitWrite: { max: WRITES, windowSeconds: 60 },
    });
    try {
      const direct = (i: number) => forwarded(`203.0.113.${i}`, `198.51.100.${i}`, '192.0.2.50');
      for (let i = 0; i < WRITES; i++)
        assert.equal((await t.app.http.inject(direct(i))).statusCode, 201);
      assert.equal((await t.app.http.inject(direct(WRITES))).statusCode, 429);
    } finally {
      await t.close();
    }
  });
});
