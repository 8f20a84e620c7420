// The sidebar: the rooms you are a member of, with unread counts kept live
// from the event stream; creating, joining, leaving and inviting; and your
// read position, sent as the page shows you messages (markRead).
import { api, hasToken } from './api.js';

/** The service stops counting there: 100 means 100 or more. */
const MAX_UNREAD = 100;
/** At most this many public rooms are offered to join. */
const BROWSE_LIMIT = 200;

const $ = (id) => document.getElementById(id);
const ui = {
  list: $('rooms'),
  empty: $('no-rooms'),
  template: $('room-template'),
  browse: $('browse'),
  publicList: $('public-rooms'),
  noPublic: $('no-public'),
};

const state = {
  me: '',
  /**
   * name -> the entry of GET /api/users/{me}/rooms (the room plus role,
   * lastMessage, lastRead, unread) and `live`: the ids of others' messages
   * counted from the stream since that list was read.
   */
  rooms: new Map(),
  /** The open room (marked as the current one). */
  open: '',
  /** The list being read, and whether another read was asked for meanwhile. */
  reloading: null,
  reloadAgain: false,
  /** Others' messages of rooms not listed yet, seen while the list is being read ({live, lastMessage}). */
  pendingLive: new Map(),
  /** room -> the newest lastRead to send; rooms with a marker on its way. */
  markers: new Map(),
  sending: new Set(),
  onError: () => undefined,
  onListed: () => undefined,
};

const enc = encodeURIComponent;
const roomPath = (room) => `/api/rooms/${enc(room)}`;
const memberPath = (room, subject) => `${roomPath(room)}/members/${enc(subject)}`;

// --- rendering -------------------------------------------------------------

/** The later of the newest message and the room's creation: the list's order. */
function activity(entry) {
  const last = entry.lastMessage?.createdAt;
  return last !== undefined && last > entry.createdAt ? last : entry.createdAt;
}

function byActivity(a, b) {
  const [x, y] = [activity(a), activity(b)];
  if (x !== y) return x > y ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function renderItem(li, entry) {
  li.dataset.room = entry.name;
  const link = li.querySelector('.room-link');
  link.querySelector('.room-name').textContent = entry.name;
  link.querySelector('.lock').hidden = entry.visibility !== 'private';
  const unread = link.querySelector('.unread');
  unread.hidden = entry.unread === 0;
  unread.querySelector('.count').textContent =
    entry.unread >= MAX_UNREAD ? `${MAX_UNREAD}+` : String(entry.unread);
  link.title = entry.topic;
  if (entry.name === state.open) link.setAttribute('aria-current', 'page');
  else link.removeAttribute('aria-current');
}

/** Updates the items in place (a focused button stays focused unless it moves). */
function render() {
  const entries = [...state.rooms.values()].sort(byActivity);
  const known = new Map([...ui.list.children].map((li) => [li.dataset.room, li]));
  entries.forEach((entry, at) => {
    let li = known.get(entry.name);
    known.delete(entry.name);
    li ??= ui.template.content.firstElementChild.cloneNode(true);
    renderItem(li, entry);
    if (ui.list.children[at] !== li) ui.list.insertBefore(li, ui.list.children[at] ?? null);
  });
  for (const li of known.values()) li.remove();
  ui.empty.hidden = entries.length > 0;
}

// --- reading the list ------------------------------------------------------

/**
 * The entry as read, plus what was learnt while it was being read: others'
 * messages counted live after its newest one, and a read position moved
 * further (the marker on its way).
 */
function merged(read, local) {
  const entry = { ...read, live: [] };
  const newest = read.lastMessage?.id ?? '';
  if (local.lastRead != null && (read.lastRead === null || local.lastRead > read.lastRead)) {
    entry.lastRead = local.lastRead;
    if (local.lastRead >= newest) entry.unread = 0;
  }
  entry.live = local.live.filter(
    (id) => id > newest && (entry.lastRead === null || id > entry.lastRead),
  );
  if (entry.live.length > 0) {
    entry.unread = Math.min(MAX_UNREAD, entry.unread + entry.live.length);
    entry.lastMessage = local.lastMessage;
  }
  return entry;
}

/** Reads the list again; calls made meanwhile are served by one more read after it. */
export function reloadRooms() {
  if (state.reloading !== null) {
    state.reloadAgain = true;
    return state.reloading;
  }
  state.reloading = (async () => {
    try {
      do {
        state.reloadAgain = false;
        const me = state.me;
        const { body } = await api('GET', `/api/users/${enc(me)}/rooms`);
        if (me !== state.me) return;
        const rooms = new Map();
        for (const read of body) {
          const local = state.rooms.get(read.name) ?? state.pendingLive.get(read.name);
          rooms.set(read.name, local === undefined ? { ...read, live: [] } : merged(read, local));
        }
        state.rooms = rooms;
        state.pendingLive.clear();
        render();
        state.onListed();
      } while (state.reloadAgain);
    } catch (error) {
      state.onError(error);
    } finally {
      state.reloading = null;
    }
  })();
  return state.reloading;
}

// --- live changes ----------------------------------------------------------

function lastMessageOf(message) {
  return { id: message.id, author: message.author, createdAt: message.createdAt };
}

function messageCreated(message) {
  const entry = state.rooms.get(message.room);
  const byOther = message.author !== state.me;
  if (entry === undefined) {
    // Invited a moment ago: the list being read may not hold this message yet.
    if (byOther && state.reloading !== null) {
      const seen = state.pendingLive.get(message.room) ?? { lastRead: null, live: [] };
      seen.live.push(message.id);
      seen.lastMessage = lastMessageOf(message);
      state.pendingLive.set(message.room, seen);
    }
    return;
  }
  // Already in the list as read (the stream can be behind the list).
  if (entry.lastMessage !== null && message.id <= entry.lastMessage.id) return;
  entry.lastMessage = lastMessageOf(message);
  // In the open room too: it stops counting once it is shown (markRead).
  if (byOther) {
    entry.unread = Math.min(MAX_UNREAD, entry.unread + 1);
    // Past MAX_UNREAD the count says "or more" anyway: older ids need not be kept.
    entry.live = [...entry.live, message.id].slice(-MAX_UNREAD);
  }
  render();
}

function markerUpdated(marker) {
  const entry = state.rooms.get(marker.room);
  if (entry === undefined || marker.subject !== state.me) return;
  if (entry.lastRead !== null && marker.lastRead <= entry.lastRead) return;
  entry.lastRead = marker.lastRead;
  entry.live = entry.live.filter((id) => id > marker.lastRead);
  if (entry.lastMessage === null || marker.lastRead >= entry.lastMessage.id) {
    entry.unread = 0;
    render();
  } else {
    // Read up to a message in the middle (another tab): only the service can count the rest.
    void reloadRooms();
  }
}

/** Applies one change of the event stream to the list. */
export function roomsChanged(kind, data) {
  const entry = state.rooms.get(data.room ?? data.name);
  switch (kind) {
    case 'message.created':
      return messageCreated(data);
    case 'message.deleted':
      // It may have been counted, or been the newest: the service knows.
      if (entry !== undefined && (entry.lastRead === null || data.id > entry.lastRead)) {
        void reloadRooms();
      }
      return;
    case 'room.updated':
      if (entry !== undefined) {
        Object.assign(entry, { visibility: data.visibility, topic: data.topic });
        render();
      }
      return;
    case 'member.added':
    case 'member.updated':
      if (data.subject === state.me) void reloadRooms();
      return;
    case 'member.removed':
      if (data.subject === state.me && entry !== undefined) {
        state.rooms.delete(data.room);
        render();
      }
      return;
    case 'read-marker.updated':
      return markerUpdated(data);
  }
}

// --- read position ---------------------------------------------------------

async function sendMarker(room) {
  state.sending.add(room);
  try {
    while (state.markers.has(room)) {
      const lastRead = state.markers.get(room);
      state.markers.delete(room);
      const { body } = await api('PUT', `${roomPath(room)}/read-markers/${enc(state.me)}`, {
        body: { lastRead },
      });
      const entry = state.rooms.get(room);
      // The service's count, unless a newer position is on its way already.
      if (entry !== undefined && !state.markers.has(room) && body.lastRead === entry.lastRead) {
        entry.unread = body.unread;
        render();
      }
    }
  } catch (error) {
    // The message may have been deleted meanwhile (400): the next one read moves it on.
    if (error.status !== 400) state.onError(error);
  } finally {
    state.sending.delete(room);
  }
}

/** You have seen the room up to message `id` (the newest shown): the marker moves there. */
export function markRead(room, id) {
  const entry = state.rooms.get(room);
  if (entry === undefined || (entry.lastRead !== null && id <= entry.lastRead)) return;
  entry.lastRead = id;
  entry.live = entry.live.filter((seen) => seen > id);
  if (entry.lastMessage === null || id >= entry.lastMessage.id) entry.unread = 0;
  render();
  state.markers.set(room, id);
  if (!state.sending.has(room)) void sendMarker(room);
}

// --- joining, creating, leaving, inviting ----------------------------------

/** Joins a room by name: a public one you may read, or a new one (created public). */
export async function joinRoom(name) {
  if (state.rooms.has(name)) return;
  if (hasToken()) {
    try {
      await api('PUT', memberPath(name, state.me), { body: {} });
    } catch (error) {
      if (error.status !== 404) throw error;
      // No such room yet: create it (its creator becomes its owner).
      await api('PUT', roomPath(name), { body: {}, headers: { 'if-none-match': '*' } });
    }
  } else {
    // Auth off: nobody owns anything, so "create if missing" is a PUT that
    // changes nothing when the room exists, and no request here can fail.
    await api('PUT', roomPath(name), { body: {} });
    await api('PUT', memberPath(name, state.me), { body: {} });
  }
  await reloadRooms();
}

/** Creates a room (412 when the name is taken) and makes you a member of it. */
export async function createRoom(name, visibility) {
  await api('PUT', roomPath(name), { body: { visibility }, headers: { 'if-none-match': '*' } });
  // With auth on the creator is its owner already; with auth off, a member.
  if (!hasToken()) await api('PUT', memberPath(name, state.me), { body: {} });
  await reloadRooms();
}

export async function leaveRoom(name) {
  await api('DELETE', memberPath(name, state.me));
  state.rooms.delete(name);
  render();
}

/** Adds `subject` to the room as a member; resolves to true when newly added. */
export async function invite(room, subject) {
  const { status } = await api('PUT', memberPath(room, subject), { body: { role: 'member' } });
  return status === 201;
}

/** Whether you may invite to the room: its owners (and anyone with auth off). */
export function mayInvite(room) {
  return !hasToken() || state.rooms.get(room)?.role === 'owner';
}

export function roomEntry(name) {
  return state.rooms.get(name);
}

// --- the list of public rooms to join --------------------------------------

async function browse() {
  try {
    const query = new URLSearchParams({ visibility: 'public', limit: String(BROWSE_LIMIT) });
    const { body } = await api('GET', `/api/rooms?${query}`);
    const items = body
      .filter((room) => !state.rooms.has(room.name))
      .map((room) => {
        const li = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'room-link';
        button.dataset.room = room.name;
        button.textContent = room.name;
        button.title = room.topic === '' ? 'Join this room' : `Join this room: ${room.topic}`;
        li.append(button);
        return li;
      });
    ui.publicList.replaceChildren(...items);
    ui.noPublic.hidden = items.length > 0;
  } catch (error) {
    state.onError(error);
  }
}

// --- wiring ----------------------------------------------------------------

/** `onSelect(name)` opens a room; `onError(error)` shows what failed; `onListed()` follows every read of the list. */
export function initRooms({ onSelect, onError, onListed }) {
  state.onError = onError;
  state.onListed = onListed;
  ui.list.addEventListener('click', (event) => {
    const li = event.target.closest('li.room-item');
    if (li) onSelect(li.dataset.room);
  });
  ui.publicList.addEventListener('click', (event) => {
    const button = event.target.closest('button.room-link');
    if (!button) return;
    button.closest('li').remove();
    onSelect(button.dataset.room);
  });
  ui.browse.addEventListener('toggle', () => {
    if (ui.browse.open) void browse();
  });
}

/** Starts over as `me` (a sign-in under another name forgets the previous list). */
export function setMe(me) {
  if (me === state.me) return;
  state.me = me;
  state.rooms.clear();
  state.markers.clear();
  render();
}

/** The room shown now (never counted unread), or '' for none. */
export function setOpen(name) {
  state.open = name;
  render();
}
