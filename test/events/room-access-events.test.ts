/**
 * Room access on the event stream, one instance of each store (auth on, real
 * tokens): resumes and live reading across access changes, compared with the
 * committed change log filtered by the contract's rules. The streams' own
 * behaviour on one instance (a removed member's stream, a ?room= stream that
 * ends, markers to their subject only) is the rooms contract suite's
 * (test/rooms/room-events.test.ts); across instances, see
 * room-access-multi-instance.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import { AUTH } from '../auth/tokens.ts';
import { engines, skipUnlessEngine } from '../support/engines.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  accessChangesWhileReading,
  replayAfterAccessChanges,
  type Cast,
} from './room-access-scenarios.ts';
import { Instances, user } from './room-access-support.ts';

for (const engine of engines) {
  describe(`room access on event streams [${engine.name}]`, async () => {
    const skip = await skipUnlessEngine(engine);
    let app: TestApp | undefined;
    let instances: Instances;
    let cast: Cast;

    before(async () => {
      if (skip) return;
      app = await startTestApp(engine, { ...AUTH, eventsHeartbeatMs: 100 });
      await app.listen();
      instances = new Instances([app]);
      const [ada, bob, carol, root] = await Promise.all([
        user('ada'),
        user('bob'),
        user('carol'),
        user('root', true),
      ]);
      cast = { ada, bob, carol, root };
    });
    after(async () => {
      instances?.closeStreams();
      await app?.close();
    });

    it('resumes after access changes: exactly what each subject may read now', { skip }, () =>
      replayAfterAccessChanges(instances, cast),
    );

    it('access changes while readers replay and go live', { skip }, () =>
      accessChangesWhileReading(instances, cast),
    );
  });
}
