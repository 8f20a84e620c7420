import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig, sqliteInstanceWaitMs } from '../../src/config.ts';

test('SQLITE_INSTANCE_WAIT_MS: unset, the graceful stop it may overlap and 5 s; set, as set', () => {
  assert.equal(sqliteInstanceWaitMs(loadConfig({})), 10_000 + 5000);
  assert.equal(sqliteInstanceWaitMs(loadConfig({ SHUTDOWN_TIMEOUT_MS: '60000' })), 65_000);
  assert.equal(sqliteInstanceWaitMs(loadConfig({ SQLITE_INSTANCE_WAIT_MS: '0' })), 0);
  assert.equal(sqliteInstanceWaitMs(loadConfig({}, ['--sqlite-instance-wait-ms', '250'])), 250);
  assert.throws(() => loadConfig({ SQLITE_INSTANCE_WAIT_MS: 'soon' }), ConfigError);
});
