// The chat page: your rooms in a sidebar (rooms.js), a window of the open
// room's history (message-list.js) that grows as you scroll up (older pages)
// or down (newer ones, after a jump to a search result with `around`), and
// every change live through one event stream (live.js). Messages show the
// message they answer (replies.js), their reactions (reactions.js) and their
// edit history (history.js). It uses only the public API (api.js).
import { api } from './api.js';
import { signIn, signedInName } from './auth.js';
import { isConnectionProblem, reached, streamUp } from './connection.js';
import { initHistory } from './history.js';
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
import { noteChange, readPage, replay } from './pages.js';
import {
  applyReactionChange,
  clearReactions,
  initReactions,
  loadReactions,
  noReactionsYet,
} from './reactions.js';
import { cancelReply, clearQuotes, initReplies, replyTarget } from './replies.js';
import { initSearch } from './search.js';

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
  /** The ways ('older', 'newer') the window is being extended now. */
  extending: new Set(),
  live: false,
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

function showError(error) {
  // A lost connection is the banner's to show (and to clear), not an error of yours.
  if (error && isConnectionProblem(error)) return reached(false);
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
  if (data.room !== state.room) return;
  // Counts of the messages shown (the others get theirs when their page is read).
  if (kind.startsWith('reaction.')) return applyReactionChange(kind, data);
  if (!kind.startsWith('message.')) return;
  if (kind === 'message.created') noReactionsYet(data.id);
  noteChange(kind, data, seq);
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
    streamUp(true);
    showLive();
    // Whatever happened while away: the list is read again (live counts survive it).
    void reloadRooms();
  },
  onDown: (text) => {
    state.live = false;
    streamUp(false);
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
      state.room,
      around === undefined ? { order: 'desc' } : { around, order: 'asc' },
    );
    if (generation !== state.generation) return;
    state.loading = false;
    // Latest (desc): `next` goes back in time. Around (asc): `prev` goes back, `next` forward.
    const older = around === undefined ? 'next' : 'prev';
    clearReactions();
    clearQuotes();
    showPage(page.body, {
      older: page.links[older] !== undefined,
      newer: around !== undefined && page.links.next !== undefined,
    });
    state.shownSeq = Number(page.seq ?? 0);
    replay(page);
    void loadReactions(page.body.map((message) => message.id));
    if (around === undefined) scrollToEnd();
    showError(null);
    if (!liveStarted()) startLive(page.seq);
    showLive();
    readShown();
    // A latest page too short to scroll: older ones fill the view (a jump's caller reveals first).
    if (around === undefined) nearEdges();
  } catch (error) {
    if (generation !== state.generation) return;
    showError(error);
    setStatus(`Offline, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    state.loadTimer = setTimeout(() => void load(around), state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
  }
}

/**
 * The two ways the window grows: the page before its oldest message, added
 * above it, and the page after its newest, added below it (the last one
 * makes the window live).
 */
const WAYS = {
  older: {
    from: oldestId,
    more: hasOlder,
    show: showOlder,
    query: (before) => ({ order: 'desc', before }),
  },
  newer: {
    from: newestId,
    more: hasNewer,
    show: showNewer,
    query: (after) => ({ order: 'asc', after }),
  },
};

async function extend(way) {
  const { from, more, show, query } = WAYS[way];
  const bound = from();
  if (bound === undefined || !more() || state.loading || state.extending.has(way)) return;
  const generation = state.generation;
  state.extending.add(way);
  if (way === 'older') ui.older.disabled = true;
  try {
    const page = await readPage(state.room, query(bound));
    // Another room (or a fresh read of this one) is shown by now.
    if (generation !== state.generation) return;
    show(page.body, page.links.next !== undefined);
    replay(page);
    void loadReactions(page.body.map((message) => message.id));
  } catch (error) {
    showError(error);
  } finally {
    state.extending.delete(way);
    ui.older.disabled = false;
  }
  if (generation === state.generation) nearEdges();
}

/** Scrolled close to an end with more history beyond it: the next page that way. */
function nearEdges() {
  const list = ui.messages;
  if (list.scrollTop < EDGE_PX) void extend('older');
  if (list.scrollHeight - list.scrollTop - list.clientHeight < EDGE_PX) void extend('newer');
}

/**
 * Shows a search result, or the message a reply quotes, in its room: the
 * page around it (GET /api/messages?around=<id>), unless it is shown
 * already; the window then grows both ways as you scroll.
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
  const replyTo = replyTarget();
  try {
    const { body } = await api('POST', '/api/messages', {
      body: { author: state.name, room, content, ...(replyTo === null ? {} : { replyTo }) },
      headers: { 'idempotency-key': idempotencyKey() },
    });
    ui.content.value = '';
    showError(null);
    if (room !== state.room) return;
    if (replyTarget() === replyTo) cancelReply();
    noReactionsYet(body.id);
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
  cancelReply();
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
  cancelReply();
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
initMessageActions({ room: () => state.room, onError: showError });
initReplies({ onJump: (id) => void jumpTo({ id, room: state.room }), onError: showError });
initReactions({ me: () => state.name, onError: showError });
initHistory({ onError: showError });
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
ui.older.addEventListener('click', () => void extend('older'));
// Scrolling reads (your read marker follows), and near an end loads the next page that way.
ui.messages.addEventListener(
  'scroll',
  () => {
    readShown();
    nearEdges();
  },
  { passive: true },
);
document.addEventListener('visibilitychange', readShown);

ui.name.value = signedInName() ?? localStorage.getItem('chat.name') ?? '';
ui.room.value = localStorage.getItem('chat.room') ?? 'general';
