// The chat page: your rooms in a sidebar (rooms.js), a window of the open
// room's history (message-list.js) that grows as you scroll up (older pages)
// or down (newer ones, after a jump to a search result with `around`), and
// every change live through one event stream (live.js). It uses only the
// public API (api.js).
import { api, links, onReachability } from './api.js';
import { signIn, signedInName } from './auth.js';
import { initLive, liveStarted, startLive, stopLive } from './live.js';
import { initMessageActions, settleDeletes } from './message-actions.js';
import {
  applyChange,
  clearMessages,
  hasNewer,
  hasOlder,
  initMessageList,
  newestId,
  newestVisibleId,
  oldestId,
  reveal,
  showNewer,
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
/** Closer than this to an end of the list, the next page that way is loaded. */
const EDGE_PX = 300;
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const $ = (id) => document.getElementById(id);
const ui = {
  join: $('join'),
  name: $('name'),
  room: $('room'),
  status: $('status'),
  banner: $('connection'),
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
  /** True while the open room's window is being read afresh. */
  loading: false,
  /** The change the shown window was read at: the stream's older changes are in it already. */
  shownSeq: 0,
  /** Pages being read, and the changes received meanwhile (replayed onto each page). */
  reading: 0,
  journal: [],
  readingOlder: false,
  readingNewer: false,
  live: false,
  /** The stream is down, or a request found no service: the banner says so. */
  streamDown: false,
  unreachable: false,
  retryMs: RETRY_MIN_MS,
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

/** The banner shows while the service cannot be reached, and goes once it can again. */
function showConnection() {
  ui.banner.hidden = !(state.streamDown || state.unreachable);
}

function isConnectionProblem(error) {
  return error instanceof TypeError || [502, 503, 504].includes(error?.status);
}

function showError(error) {
  // A lost connection is the banner's to show (and to clear), not an error of yours.
  if (error && isConnectionProblem(error)) {
    state.unreachable = true;
    showConnection();
    return;
  }
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
  if (state.reading > 0) state.journal.push({ kind, data, seq });
  if (!state.loading && seq > state.shownSeq) {
    applyChange(kind, data);
    readShown();
  }
}

initLive({
  onChange: dispatch,
  onReset: () => {
    void reloadRooms();
    if (state.room !== '') void load();
  },
  onUp: () => {
    state.live = true;
    state.streamDown = false;
    state.unreachable = false;
    showConnection();
    showLive();
    // Whatever happened while away: the list is read again (live counts survive it).
    void reloadRooms();
  },
  onDown: (text) => {
    state.live = false;
    state.streamDown = true;
    showConnection();
    setStatus(text);
  },
});

// --- reading position ------------------------------------------------------

/** Moves your read marker to what the open room shows you (only while the tab is seen). */
function readShown() {
  if (state.room === '' || state.loading || document.visibilityState !== 'visible') return;
  const id = newestVisibleId();
  if (id !== undefined) markRead(state.room, id);
}

// --- loading ---------------------------------------------------------------

/**
 * One page of the open room. A change received while it is read may or may
 * not be in it: `replay()` applies those after the change it was read at
 * (by id and version, so applying one twice is harmless).
 */
async function readPage(params) {
  if (state.reading++ === 0) state.journal = [];
  try {
    const query = new URLSearchParams({ room: state.room, limit: String(PAGE), ...params });
    const { headers, body } = await api('GET', `/api/messages?${query}`);
    return { body, links: links(headers), seq: headers.get('event-seq') };
  } finally {
    state.reading--;
  }
}

function replay(page) {
  for (const { kind, data, seq } of state.journal) {
    if (seq > Number(page.seq)) applyChange(kind, data);
  }
}

/**
 * The open room's window, read afresh: its latest page, or (`around`, a
 * message id) the page around that message. The first page read also starts
 * the stream from there.
 */
async function load(around) {
  const generation = ++state.generation;
  clearTimeout(state.loadTimer);
  state.loading = true;
  setStatus('Loading…');
  try {
    const page = await readPage(
      around === undefined ? { order: 'desc' } : { around, order: 'asc' },
    );
    if (generation !== state.generation) return;
    state.loading = false;
    // Latest (desc): `next` goes back in time. Around (asc): `prev` goes back, `next` forward.
    const older = around === undefined ? 'next' : 'prev';
    showPage(page.body, {
      older: page.links[older] !== undefined,
      newer: around !== undefined && page.links.next !== undefined,
    });
    state.shownSeq = Number(page.seq ?? 0);
    replay(page);
    if (around === undefined) scrollToEnd();
    showError(null);
    state.unreachable = false;
    showConnection();
    if (!liveStarted()) startLive(page.seq);
    showLive();
    readShown();
  } catch (error) {
    if (generation !== state.generation) return;
    showError(error);
    setStatus(`Offline, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    state.loadTimer = setTimeout(() => void load(around), state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  }
}

/** The page before the window's oldest message, added above it. */
async function loadOlder() {
  const before = oldestId();
  if (before === undefined || !hasOlder() || state.loading || state.readingOlder) return;
  const generation = state.generation;
  state.readingOlder = true;
  ui.older.disabled = true;
  try {
    const page = await readPage({ order: 'desc', before });
    // Another room (or a fresh read of this one) is shown by now.
    if (generation !== state.generation) return;
    showOlder(page.body, page.links.next !== undefined);
    replay(page);
  } catch (error) {
    showError(error);
  } finally {
    state.readingOlder = false;
    ui.older.disabled = false;
  }
  if (generation === state.generation) nearEdges();
}

/** The page after the window's newest message, added below it; the last one makes the window live. */
async function loadNewer() {
  const after = newestId();
  if (after === undefined || !hasNewer() || state.loading || state.readingNewer) return;
  const generation = state.generation;
  state.readingNewer = true;
  try {
    const page = await readPage({ order: 'asc', after });
    if (generation !== state.generation) return;
    showNewer(page.body, page.links.next !== undefined);
    replay(page);
  } catch (error) {
    showError(error);
  } finally {
    state.readingNewer = false;
  }
  if (generation === state.generation) nearEdges();
}

/** Scrolled close to an end with more history beyond it: the next page that way. */
function nearEdges() {
  const list = ui.messages;
  if (list.scrollTop < EDGE_PX) void loadOlder();
  if (list.scrollHeight - list.scrollTop - list.clientHeight < EDGE_PX) void loadNewer();
}

/**
 * Shows a search result in its room: the page around it (GET
 * /api/messages?around=<id>), unless it is shown already; the window then
 * grows both ways as you scroll.
 */
async function jumpTo(message) {
  if (message.room !== state.room) await openRoom(message.room, message.id);
  else if (!reveal(message.id)) await load(message.id);
  if (message.room !== state.room) return;
  if (reveal(message.id)) showNote('');
  else showNote('That message is no longer there.');
  nearEdges();
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
    // Far back after a jump: your message is at the end, so the window goes there.
    if (hasNewer()) await load();
    else upsert(body);
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

/** Shows a room (joining it first when it is not yours yet): its latest page, or the one `around` an id. */
async function openRoom(name, around) {
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
  settleDeletes();
  clearMessages();
  state.room = name;
  localStorage.setItem('chat.room', name);
  ui.room.value = name;
  setOpen(name);
  showRoomHead();
  showNote('');
  ui.noRoom.hidden = true;
  ui.roomView.hidden = false;
  state.retryMs = RETRY_MIN_MS;
  const loaded = load(around);
  ui.content.focus();
  return loaded;
}

/** No room open (after leaving it, or losing it). */
function closeRoom(note = '') {
  state.generation++;
  clearTimeout(state.loadTimer);
  state.room = '';
  state.loading = false;
  settleDeletes();
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
  if (liveStarted()) {
    // Signed in again (a new name or token): the stream starts over as this subject.
    stopLive();
    state.live = false;
  }
  closeRoom();
  await openRoom(room);
  // No room could be opened (its first page starts the stream otherwise): the sidebar still goes live.
  if (state.room === '' && !liveStarted()) startLive(null);
}

initMessageList({ me: () => state.name });
initMessageActions({ onError: showError });
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
// Scrolling reads (your read marker follows), and near an end loads the next page that way.
ui.messages.addEventListener(
  'scroll',
  () => {
    readShown();
    nearEdges();
  },
  { passive: true },
);
onReachability((reached) => {
  if (reached === !state.unreachable) return;
  state.unreachable = !reached;
  showConnection();
});
document.addEventListener('visibilitychange', readShown);

ui.name.value = signedInName() ?? localStorage.getItem('chat.name') ?? '';
ui.room.value = localStorage.getItem('chat.room') ?? 'general';
