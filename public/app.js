// The chat page: your rooms in a sidebar (rooms.js), the latest page of the
// open room (message-list.js), older pages on demand, and every change live
// through one event stream. It uses only the public API (api.js).
import { api, eventsUrl } from './api.js';
import { signIn, signedInName } from './auth.js';
import {
  applyChange,
  clearMessages,
  hasOlder,
  initMessageList,
  newestVisibleId,
  oldestId,
  reveal,
  showOlder,
  showPage,
  scrollToEnd,
  upsert,
} from './message-list.js';
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
import { initSearch } from './search.js';

const PAGE = 50;
/** How far back a search result is looked for by loading older pages (there is no `around` yet). */
const JUMP_PAGES = 40;
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
  messages: $('messages'),
  compose: $('compose'),
  content: $('content'),
};

const state = {
  name: '',
  /** The open room ('' for none). */
  room: '',
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

// --- live changes ----------------------------------------------------------

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
    applyChange(kind, data);
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
    showPage(body, headers.get('link') !== null);
    state.shownSeq = Number(headers.get('event-seq') ?? 0);
    state.loading = false;
    for (const { kind, data, seq } of state.pending) {
      if (seq > state.shownSeq) applyChange(kind, data);
    }
    state.pending = [];
    scrollToEnd();
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

/**
 * Shows a search result in its room: opens the room, then loads older pages
 * until the message is shown (at most JUMP_PAGES of them), and scrolls to it.
 */
async function jumpTo(message) {
  if (message.room !== state.room) await openRoom(message.room);
  if (message.room !== state.room) return;
  for (let page = 0; page < JUMP_PAGES && !reveal(message.id); page++) {
    const oldest = oldestId();
    if (!hasOlder() || oldest === undefined || oldest <= message.id) break;
    await loadOlder();
  }
  if (!reveal(message.id)) {
    showNote('That message is no longer there, or too far back to load.');
  }
}

async function loadOlder() {
  const before = oldestId();
  if (before === undefined) return;
  const generation = state.generation;
  ui.older.disabled = true;
  try {
    const { headers, body } = await api('GET', `/api/messages?${pageQuery({ before })}`);
    // Another room (or a fresh read of this one) is shown by now.
    if (generation !== state.generation) return;
    showOlder(body, headers.get('link') !== null);
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
  const room = state.room;
  try {
    const { body } = await api('POST', '/api/messages', {
      body: { author: state.name, room, content },
      headers: { 'idempotency-key': idempotencyKey() },
    });
    ui.content.value = '';
    showError(null);
    if (room !== state.room) return;
    upsert(body);
    scrollToEnd();
    readShown();
  } catch (error) {
    showError(error);
  } finally {
    button.disabled = false;
    ui.content.focus();
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
  if (name === state.room) return;
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
  const loaded = load();
  ui.content.focus();
  return loaded;
}

/** No room open (after leaving it, or losing it). */
function closeRoom(note = '') {
  state.generation++;
  clearTimeout(state.loadTimer);
  state.room = '';
  state.loading = false;
  state.pending = [];
  clearMessages();
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
  closeRoom();
  await openRoom(room);
  // No room could be opened (its first page starts the stream otherwise): the sidebar still goes live.
  if (state.room === '' && state.source === null) connect();
}

initMessageList({ me: () => state.name, onError: showError });
initSearch({
  room: () => state.room,
  onJump: (message) => void jumpTo(message),
  onError: showError,
});
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
// Reading is scrolling down, or coming back to the tab.
ui.messages.addEventListener('scroll', readShown, { passive: true });
document.addEventListener('visibilitychange', readShown);

ui.name.value = signedInName() ?? localStorage.getItem('chat.name') ?? '';
ui.room.value = localStorage.getItem('chat.room') ?? 'general';
