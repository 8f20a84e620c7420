// The chat page: your rooms in a sidebar (rooms.js), the latest page of the
// open room, older pages on demand, and every change live through one event
// stream. It uses only the public API (api.js).
import { api, eventsUrl } from './api.js';
import { signIn, signedInName } from './auth.js';
import {
  createRoom,
  initRooms,
  invite,
  joinRoom,
  leaveRoom,
  markRead,
  mayInvite,
  reloadRooms,
  roomEntry,
  roomsChanged,
  setMe,
  setOpen,
} from './rooms.js';

const PAGE = 50;
const KINDS = [
  'message.created',
  'message.updated',
  'message.deleted',
  'room.created',
  'room.updated',
  'member.added',
  'member.updated',
  'member.removed',
  'read-marker.updated',
];
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const $ = (id) => document.getElementById(id);
const ui = {
  join: $('join'),
  name: $('name'),
  room: $('room'),
  status: $('status'),
  layout: $('layout'),
  noRoom: $('no-room'),
  roomView: $('room-view'),
  roomTitle: $('room-title'),
  roomPrivate: $('room-private'),
  roomTopic: $('room-topic'),
  invite: $('invite'),
  invitee: $('invitee'),
  leave: $('leave'),
  note: $('note'),
  createRoom: $('create-room'),
  newRoom: $('new-room'),
  newPrivate: $('new-private'),
  error: $('error'),
  older: $('older'),
  list: $('messages'),
  compose: $('compose'),
  content: $('content'),
  template: $('message-template'),
};

const state = {
  name: '',
  /** The open room ('' for none). */
  room: '',
  /** id -> message, for every message shown. */
  messages: new Map(),
  /** True while older pages may exist (the oldest shown is not the room's first). */
  moreOlder: false,
  /** True while the open room's page is being read; its changes wait in `pending`. */
  loading: false,
  pending: [],
  /** The change the shown page was read at: the stream's older changes are in it already. */
  shownSeq: 0,
  source: null,
  live: false,
  /** The last change received: where a stream opened by hand resumes. */
  lastEventId: null,
  retryMs: RETRY_MIN_MS,
  retryTimer: null,
  loadTimer: null,
  /** The room being left: its member.removed is no news. */
  leaving: '',
  /** Bumped on every (re)load, so answers for an older load are ignored. */
  generation: 0,
};

function setStatus(text) {
  ui.status.textContent = text;
}

function showLive() {
  if (state.live) setStatus(state.room === '' ? 'Live' : `Live in ${state.room}`);
}

function showError(error) {
  ui.error.textContent = error ? String(error.message ?? error) : '';
  ui.error.hidden = !error;
}

// --- rendering -------------------------------------------------------------

function formatTime(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function renderInto(li, message) {
  li.dataset.id = message.id;
  li.dataset.version = String(message.version);
  li.querySelector('.author').textContent = message.author;
  const time = li.querySelector('.time');
  time.dateTime = message.createdAt;
  time.textContent = formatTime(message.createdAt);
  time.title = message.createdAt;
  li.querySelector('.edited').hidden = message.version === 1;
  li.querySelector('.content').textContent = message.content;
  const own = message.author === state.name;
  li.classList.toggle('own', own);
  li.querySelector('.actions').hidden = !own;
}

function itemFor(id) {
  return ui.list.querySelector(`li[data-id="${CSS.escape(id)}"]`);
}

function nearBottom() {
  const el = ui.list;
  return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
}

/** Shows a message, or a newer version of one already shown; ids sort in creation order. */
function upsert(message) {
  const known = state.messages.get(message.id);
  if (known !== undefined && known.version >= message.version) return;
  state.messages.set(message.id, message);
  let li = itemFor(message.id);
  if (li === null) {
    const follow = nearBottom();
    li = ui.template.content.firstElementChild.cloneNode(true);
    let next = null;
    for (let at = ui.list.lastElementChild; at !== null; at = at.previousElementSibling) {
      if (at.dataset.id < message.id) break;
      next = at;
    }
    ui.list.insertBefore(li, next);
    if (follow && next === null) ui.list.scrollTop = ui.list.scrollHeight;
  } else if (li.querySelector('form.edit-form') !== null) {
    // Being edited here: keep the form, refresh what it is based on.
    li.dataset.version = String(message.version);
    return;
  }
  renderInto(li, message);
}

function remove(id) {
  state.messages.delete(id);
  itemFor(id)?.remove();
}

function oldestId() {
  return ui.list.firstElementChild?.dataset.id;
}

// --- live changes ----------------------------------------------------------

function apply(kind, message) {
  if (kind === 'message.deleted') return remove(message.id);
  if (kind === 'message.updated' && !state.messages.has(message.id)) return;
  // A message older than the oldest page shown belongs to a page not loaded yet.
  const oldest = oldestId();
  if (state.moreOlder && oldest !== undefined && message.id < oldest) return;
  upsert(message);
}

/** One change of the stream: to the sidebar, and to the open room's messages. */
function dispatch(kind, data, seq) {
  roomsChanged(kind, data);
  if (kind === 'member.removed' && data.subject === state.name && data.room === state.room) {
    // Leaving closes the room by itself (with auth off `removedBy` is null); being removed says so.
    if (data.removedBy !== state.name && state.leaving !== data.room) {
      closeRoom(`${data.removedBy ?? 'Someone'} removed you from ${data.room}.`);
    }
    return;
  }
  if (kind === 'room.updated' && data.name === state.room) return showRoomHead();
  if (!kind.startsWith('message.') || data.room !== state.room) return;
  if (state.loading) state.pending.push({ kind, data, seq });
  else if (seq > state.shownSeq) {
    apply(kind, data);
    readShown();
  }
}

function closeStream() {
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  state.source?.close();
  state.source = null;
  state.live = false;
}

/** The one stream of every change you may see, resumed from the last one received. */
function connect() {
  closeStream();
  const params = {};
  if (state.lastEventId !== null) params.since = state.lastEventId;
  const source = new EventSource(eventsUrl(params));
  state.source = source;
  source.onopen = () => {
    state.retryMs = RETRY_MIN_MS;
    state.live = true;
    showLive();
    // Whatever happened while away: the list is read again (live counts survive it).
    void reloadRooms();
  };
  for (const kind of KINDS) {
    source.addEventListener(kind, (event) => {
      state.lastEventId = event.lastEventId;
      dispatch(kind, JSON.parse(event.data), Number(event.lastEventId));
    });
  }
  // The stream cannot resume from where we were: read everything again.
  source.addEventListener('reset', (event) => {
    state.lastEventId = event.lastEventId;
    void reloadRooms();
    if (state.room !== '') void load();
  });
  source.onerror = () => {
    if (source !== state.source) return;
    state.live = false;
    if (source.readyState !== EventSource.CLOSED) {
      setStatus('Connection lost, reconnecting…');
      return;
    }
    // A non-200 answer (503, 401): EventSource gives up for good, so retry by hand.
    setStatus(`Disconnected, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    source.close();
    state.retryTimer = setTimeout(connect, state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  };
}

// --- reading position ------------------------------------------------------

/** The newest message you can see now: the last one whose top is inside the list's view. */
function newestVisibleId() {
  const bottom = ui.list.getBoundingClientRect().bottom;
  for (let li = ui.list.lastElementChild; li !== null; li = li.previousElementSibling) {
    if (li.getBoundingClientRect().top < bottom) return li.dataset.id;
  }
  return undefined;
}

/** Moves your read marker to what the open room shows you (only while the tab is seen). */
function readShown() {
  if (state.room === '' || state.loading || document.visibilityState !== 'visible') return;
  const id = newestVisibleId();
  if (id !== undefined) markRead(state.room, id);
}

// --- loading ---------------------------------------------------------------

function pageQuery(extra) {
  return new URLSearchParams({ room: state.room, order: 'desc', limit: String(PAGE), ...extra });
}

/**
 * The latest page of the open room. Changes that arrive meanwhile wait, and
 * only those after the change the page was read at are applied to it. The
 * first page read also starts the stream from there.
 */
async function load() {
  const generation = ++state.generation;
  clearTimeout(state.loadTimer);
  state.loading = true;
  state.pending = [];
  setStatus('Loading…');
  try {
    const { headers, body } = await api('GET', `/api/messages?${pageQuery({})}`);
    if (generation !== state.generation) return;
    state.messages.clear();
    ui.list.replaceChildren();
    state.moreOlder = headers.get('link') !== null;
    ui.older.hidden = !state.moreOlder;
    for (const message of body) upsert(message);
    state.shownSeq = Number(headers.get('event-seq') ?? 0);
    state.loading = false;
    for (const { kind, data, seq } of state.pending) if (seq > state.shownSeq) apply(kind, data);
    state.pending = [];
    ui.list.scrollTop = ui.list.scrollHeight;
    showError(null);
    if (state.source === null && state.retryTimer === null) {
      state.lastEventId = headers.get('event-seq');
      connect();
    }
    showLive();
    readShown();
  } catch (error) {
    if (generation !== state.generation) return;
    showError(error);
    setStatus(`Offline, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    state.loadTimer = setTimeout(load, state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  }
}

async function loadOlder() {
  const before = oldestId();
  if (before === undefined) return;
  ui.older.disabled = true;
  try {
    const { headers, body } = await api('GET', `/api/messages?${pageQuery({ before })}`);
    const list = ui.list;
    const fromBottom = list.scrollHeight - list.scrollTop;
    for (const message of body) upsert(message);
    list.scrollTop = list.scrollHeight - fromBottom;
    state.moreOlder = headers.get('link') !== null;
    ui.older.hidden = !state.moreOlder;
  } catch (error) {
    showError(error);
  } finally {
    ui.older.disabled = false;
  }
}

// --- writing ---------------------------------------------------------------

function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function send(event) {
  event.preventDefault();
  const content = ui.content.value;
  if (content.trim() === '') return;
  const button = ui.compose.querySelector('button');
  button.disabled = true;
  try {
    const { body } = await api('POST', '/api/messages', {
      body: { author: state.name, room: state.room, content },
      headers: { 'idempotency-key': idempotencyKey() },
    });
    ui.content.value = '';
    showError(null);
    upsert(body);
    ui.list.scrollTop = ui.list.scrollHeight;
    readShown();
  } catch (error) {
    showError(error);
  } finally {
    button.disabled = false;
    ui.content.focus();
  }
}

function startEdit(li) {
  const message = state.messages.get(li.dataset.id);
  if (message === undefined || li.querySelector('form.edit-form') !== null) return;
  const form = document.createElement('form');
  form.className = 'edit-form';
  const label = document.createElement('label');
  label.className = 'visually-hidden';
  label.textContent = 'Edit message';
  const field = document.createElement('textarea');
  field.id = `edit-${message.id}`;
  label.htmlFor = field.id;
  field.value = message.content;
  field.required = true;
  field.maxLength = 4000;
  const save = document.createElement('button');
  save.type = 'submit';
  save.textContent = 'Save';
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.textContent = 'Cancel';
  form.append(label, field, save, cancel);
  const content = li.querySelector('.content');
  content.hidden = true;
  li.querySelector('.actions').hidden = true;
  li.insertBefore(form, content);
  field.focus();

  const finish = () => {
    form.remove();
    content.hidden = false;
    renderInto(li, state.messages.get(message.id) ?? message);
  };
  cancel.addEventListener('click', finish);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const { body } = await api('PUT', `/api/messages/${encodeURIComponent(message.id)}`, {
        body: { content: field.value },
        // The version the edit started from: a change made meanwhile is a 412, never overwritten.
        headers: { 'if-match': `"${message.version}"` },
      });
      state.messages.set(body.id, body);
      showError(null);
      finish();
    } catch (error) {
      showError(
        error.status === 412 ? new Error('The message changed meanwhile; try again.') : error,
      );
      if (error.status === 404) {
        form.remove();
        remove(message.id);
      }
    }
  });
}

async function deleteMessage(li) {
  try {
    await api('DELETE', `/api/messages/${encodeURIComponent(li.dataset.id)}`);
    remove(li.dataset.id);
    showError(null);
  } catch (error) {
    if (error.status === 404) remove(li.dataset.id);
    else showError(error);
  }
}

// --- rooms -----------------------------------------------------------------

function showNote(text) {
  ui.note.textContent = text;
}

/** The open room's title, visibility, topic, and what you may do there. */
function showRoomHead() {
  const entry = roomEntry(state.room);
  ui.roomTitle.textContent = `Room ${state.room}`;
  ui.roomPrivate.hidden = entry?.visibility !== 'private';
  ui.roomTopic.textContent = entry?.topic ?? '';
  ui.roomTopic.hidden = !entry?.topic;
  ui.invite.hidden = !mayInvite(state.room);
}

/** Shows a room (joining it first when it is not yours yet). */
async function openRoom(name) {
  try {
    if (roomEntry(name) === undefined) await joinRoom(name);
  } catch (error) {
    showError(
      error.status === 403
        ? new Error(`${name} is private: ask one of its owners to invite you.`)
        : error,
    );
    return;
  }
  state.room = name;
  localStorage.setItem('chat.room', name);
  ui.room.value = name;
  setOpen(name);
  showRoomHead();
  showNote('');
  ui.noRoom.hidden = true;
  ui.roomView.hidden = false;
  state.retryMs = RETRY_MIN_MS;
  void load();
  ui.content.focus();
}

/** No room open (after leaving it, or losing it). */
function closeRoom(note = '') {
  state.generation++;
  clearTimeout(state.loadTimer);
  state.room = '';
  state.loading = false;
  state.pending = [];
  state.messages.clear();
  ui.list.replaceChildren();
  setOpen('');
  ui.roomView.hidden = true;
  ui.noRoom.hidden = false;
  showError(note === '' ? null : new Error(note));
  showLive();
}

async function create(event) {
  event.preventDefault();
  const name = ui.newRoom.value.trim();
  const visibility = ui.newPrivate.checked ? 'private' : 'public';
  try {
    await createRoom(name, visibility);
  } catch (error) {
    showError(error.status === 412 ? new Error(`There is a room named ${name} already.`) : error);
    return;
  }
  ui.newRoom.value = '';
  ui.newPrivate.checked = false;
  await openRoom(name);
}

async function leave() {
  const room = state.room;
  state.leaving = room;
  try {
    await leaveRoom(room);
    if (state.room === room) closeRoom();
  } catch (error) {
    showError(error);
  } finally {
    state.leaving = '';
  }
}

async function inviteSomeone(event) {
  event.preventDefault();
  const who = ui.invitee.value.trim();
  if (who === '') return;
  try {
    const added = await invite(state.room, who);
    showNote(added ? `${who} was added to ${state.room}.` : `${who} is a member already.`);
    ui.invitee.value = '';
    showError(null);
  } catch (error) {
    showError(error);
  }
}

// --- wiring ----------------------------------------------------------------

async function enter(event) {
  event.preventDefault();
  if (!ui.join.reportValidity()) return;
  const room = ui.room.value.trim();
  try {
    // With authentication on, the name is the token's subject.
    state.name = await signIn(ui.name.value.trim());
  } catch (error) {
    showError(error);
    return;
  }
  ui.name.value = state.name;
  localStorage.setItem('chat.name', state.name);
  setMe(state.name);
  ui.layout.hidden = false;
  if (state.source !== null) {
    // Signed in again (a new name or token): the stream starts over as this subject.
    closeStream();
    state.lastEventId = null;
  }
  if (state.room !== room) closeRoom();
  await openRoom(room);
  // No room could be opened (its first page starts the stream otherwise): the sidebar still goes live.
  if (state.room === '' && state.source === null) connect();
}

initRooms({
  onSelect: (name) => void openRoom(name),
  onError: showError,
  // A role or a topic may have changed.
  onListed: () => {
    if (state.room !== '') showRoomHead();
  },
});
ui.join.addEventListener('submit', (event) => void enter(event));
ui.createRoom.addEventListener('submit', (event) => void create(event));
ui.invite.addEventListener('submit', (event) => void inviteSomeone(event));
ui.leave.addEventListener('click', () => void leave());
ui.compose.addEventListener('submit', send);
ui.content.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ui.compose.requestSubmit();
  }
});
ui.older.addEventListener('click', () => void loadOlder());
ui.list.addEventListener('click', (event) => {
  const button = event.target.closest('button');
  const li = button?.closest('li.message');
  if (!li) return;
  if (button.classList.contains('edit')) startEdit(li);
  else if (button.classList.contains('delete')) void deleteMessage(li);
});
// Reading is scrolling down, or coming back to the tab.
ui.list.addEventListener('scroll', readShown, { passive: true });
document.addEventListener('visibilitychange', readShown);

ui.name.value = signedInName() ?? localStorage.getItem('chat.name') ?? '';
ui.room.value = localStorage.getItem('chat.room') ?? 'general';
