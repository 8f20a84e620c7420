import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

describe('/metrics with its own token (METRICS_TOKEN)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteEngine, { metricsToken: 'scrape-secret' });
  });
  after(async () => t.close());

  it('refuses a scrape without the token or with a wrong one', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong',
      'Bearer scrape-secre',
      'scrape-secret',
    ]) {
      const res = await t.app.http.inject({
        url: '/metrics',
        headers: authorization === undefined ? {} : { authorization },
      });
      assert.equal(res.statusCode, 401, `authorization: ${authorization}`);
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
  });

  it('serves Prometheus text with the token', async () => {
    const res = await t.app.http.inject({
      url: '/metrics',
      headers: { authorization: 'Bearer scrape-secret' },
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /# TYPE http_requests_total counter/);
  });
});
