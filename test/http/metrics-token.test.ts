import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sqliteEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { AUTH, OTHER_SECRET, bearer, token } from '../auth/tokens.ts';

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

describe('/metrics with auth on and no METRICS_TOKEN', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(sqliteEngine, AUTH);
  });
  after(async () => t.close());

  it('refuses a scrape without a valid bearer JWT (401 problem)', async () => {
    const none = await t.app.http.inject({ url: '/metrics' });
    assert.equal(none.statusCode, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    assert.match(String(none.headers['content-type']), /^application\/problem\+json/);
    assert.doesNotMatch(none.body, /http_requests_total|nodejs_version/);
    for (const jwt of [await token({ secret: OTHER_SECRET }), await token({ expiresIn: -3600 })]) {
      const refused = await t.app.http.inject({ url: '/metrics', headers: bearer(jwt) });
      assert.equal(refused.statusCode, 401);
      assert.match(String(refused.headers['www-authenticate']), /^Bearer error="invalid_token"/);
    }
    // Not from the URL: only the event stream takes ?access_token=.
    const inUrl = await t.app.http.inject({ url: `/metrics?access_token=${await token()}` });
    assert.equal(inUrl.statusCode, 401);
  });

  it('serves the metrics to a valid bearer JWT', async () => {
    const res = await t.app.http.inject({ url: '/metrics', headers: bearer(await token()) });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /# TYPE http_requests_total counter/);
  });

  it('with METRICS_TOKEN set as well, only that token opens it', async () => {
    const both = await startTestApp(sqliteEngine, { ...AUTH, metricsToken: 'scrape-secret' });
    try {
      const jwt = await both.app.http.inject({ url: '/metrics', headers: bearer(await token()) });
      assert.equal(jwt.statusCode, 401);
      const scrape = await both.app.http.inject({
        url: '/metrics',
        headers: { authorization: 'Bearer scrape-secret' },
      });
      assert.equal(scrape.statusCode, 200);
    } finally {
      await both.close();
    }
  });
});
