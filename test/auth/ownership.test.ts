/**
 * Who may do what with auth on, on both engines: the token's subject is the
 * author, only the author (or an admin) may edit or delete, and the answers
 * keep the precedence of docs/errors.md (404, then 403, then 400 fixed field, 409, 412).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import {
  assertProblem,
  eachEngine,
  onlyError,
  uniqueRoom,
  withApp,
} from '../http/http-contract.ts';
import { AUTH, bearer, token } from './tokens.ts';

const MISSING = '01890a5d-ac96-774b-bcce-b302099a8057';

eachEngine(
  'ownership with auth on',
  (engine, shared) => {
    const as = async (sub: string, claims: Record<string, unknown> = {}) =>
      bearer(await token({ sub, claims }));

    async function post(sub: string, body: Record<string, unknown>) {
      return shared().inject({
        method: 'POST',
        url: '/api/messages',
        headers: await as(sub),
        payload: body,
      });
    }

    async function created(sub: string, content = 'hello'): Promise<Message> {
      const response = await post(sub, { content, room: uniqueRoom() });
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as Message;
    }

    async function stored(id: string): Promise<Message> {
      const response = await shared().inject({
        url: `/api/messages/${id}`,
        headers: await as('ada'),
      });
      assert.equal(response.statusCode, 200);
      return response.json() as Message;
    }

    it('takes the author from the token subject', async () => {
      const message = await created('ada ✨ lovelace');
      assert.equal(message.author, 'ada ✨ lovelace');
      const same = await post('ada', { author: 'ada', content: 'x' });
      assert.equal(same.statusCode, 201);
      assert.equal(same.json().author, 'ada');
    });

    it('refuses a body author that differs from the subject (400)', async () => {
      const response = await post('ada', { author: 'bob', content: 'impersonation' });
      const problem = assertProblem(response, 400, 'validation');
      assert.equal(onlyError(problem).pointer, '#/author');
    });

    it('names a differing author together with every other failure of the body', async () => {
      const response = await post('ada', { author: 'bob', content: '', x: 1 });
      const problem = assertProblem(response, 400, 'validation');
      assert.deepEqual(problem.errors?.map((e) => e.pointer).sort(), [
        '#/author',
        '#/content',
        '#/x',
      ]);
    });

    it('lets only the author edit and delete (403 for others)', async () => {
      const message = await created('ada');
      const edit = await shared().inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        headers: await as('bob'),
        payload: { content: 'hijacked' },
      });
      assertProblem(edit, 403, 'forbidden');
      const remove = await shared().inject({
        method: 'DELETE',
        url: `/api/messages/${message.id}`,
        headers: await as('bob'),
      });
      assertProblem(remove, 403, 'forbidden');
      assert.deepEqual(await stored(message.id), message);

      const own = await shared().inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        headers: await as('ada'),
        payload: { ...message, content: 'edited by ada' },
      });
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(own.json().version, 2);
      const gone = await shared().inject({
        method: 'DELETE',
        url: `/api/messages/${message.id}`,
        headers: await as('ada'),
      });
      assert.equal(gone.statusCode, 200);
    });

    it('lets an admin edit and delete anybody’s message (role as array or string)', async () => {
      for (const roles of [['user', 'admin'], 'admin', 'user admin']) {
        const message = await created('ada');
        const admin = await as('root', { roles });
        const edit = await shared().inject({
          method: 'PUT',
          url: `/api/messages/${message.id}`,
          headers: admin,
          payload: { content: 'moderated' },
        });
        assert.equal(edit.statusCode, 200, `${JSON.stringify(roles)}: ${edit.body}`);
        assert.equal(edit.json().author, 'ada', 'the author stays');
        const remove = await shared().inject({
          method: 'DELETE',
          url: `/api/messages/${message.id}`,
          headers: admin,
        });
        assert.equal(remove.statusCode, 200);
      }
    });

    it('does not take other roles or look-alike claims for admin', async () => {
      const message = await created('ada');
      for (const claims of [
        { roles: ['user'] },
        { roles: 'administrator' },
        { roles: { admin: true } },
        { role: 'admin' },
        { admin: true },
      ]) {
        const response = await shared().inject({
          method: 'DELETE',
          url: `/api/messages/${message.id}`,
          headers: await as('mallory', claims),
        });
        assertProblem(response, 403, 'forbidden');
      }
    });

    it('keeps the precedence: 404, then 403, then fixed-field 400, 409 and 412', async () => {
      const bob = await as('bob');
      const missing = await shared().inject({
        method: 'PUT',
        url: `/api/messages/${MISSING}`,
        headers: bob,
        payload: { content: 'x' },
      });
      assertProblem(missing, 404);
      const message = await created('ada');
      const everythingWrong = await shared().inject({
        method: 'PUT',
        url: `/api/messages/${message.id}`,
        headers: { ...bob, 'if-match': '"99"' },
        payload: { content: 'x', author: 'bob', room: 'elsewhere', version: 7 },
      });
      assertProblem(everythingWrong, 403, 'forbidden');
      const staleDelete = await shared().inject({
        method: 'DELETE',
        url: `/api/messages/${message.id}`,
        headers: { ...bob, 'if-match': '"99"' },
      });
      assertProblem(staleDelete, 403, 'forbidden');
      // The author changing a fixed field gets the 400, an admin too.
      for (const who of [await as('ada'), await as('root', { roles: ['admin'] })]) {
        const fixed = await shared().inject({
          method: 'PUT',
          url: `/api/messages/${message.id}`,
          headers: { ...who, 'if-match': '"99"' },
          payload: { content: 'x', author: 'bob', version: 7 },
        });
        assert.equal(onlyError(assertProblem(fixed, 400, 'fixed-field')).pointer, '#/author');
      }
    });

    it('scopes Idempotency-Key to the subject', async () => {
      const key = `key-${uniqueRoom()}`;
      const body = { content: 'same body', room: uniqueRoom() };
      const send = async (sub: string) =>
        shared().inject({
          method: 'POST',
          url: '/api/messages',
          headers: { ...(await as(sub)), 'idempotency-key': key },
          payload: body,
        });
      const first = await send('ada');
      assert.equal(first.statusCode, 201);
      const other = await send('bob');
      assert.equal(other.statusCode, 201);
      assert.equal(other.headers['idempotent-replayed'], undefined);
      assert.notEqual(other.json().id, first.json().id);
      assert.equal(other.json().author, 'bob');
      const again = await send('ada');
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
    });

    it('uses a configured admin claim and value', async () => {
      await withApp(
        engine,
        async (app) => {
          const post = await app.inject({
            method: 'POST',
            url: '/api/messages',
            headers: await as('ada'),
            payload: { content: 'x' },
          });
          const id = (post.json() as Message).id;
          const asRoles = await app.inject({
            method: 'DELETE',
            url: `/api/messages/${id}`,
            headers: await as('root', { roles: ['admin'] }),
          });
          assertProblem(asRoles, 403);
          const asGroup = await app.inject({
            method: 'DELETE',
            url: `/api/messages/${id}`,
            headers: await as('root', { groups: ['moderators'] }),
          });
          assert.equal(asGroup.statusCode, 200);
        },
        { ...AUTH, authAdminClaim: 'groups', authAdminValue: 'moderators' },
      );
    });
  },
  AUTH,
);
