// The chat page: the latest page of a room, older pages on demand, and every
// change live through the event stream. It uses only the public API (api.js).
import { api, eventsUrl } from './api.js';
import { signIn, signedInName } from './auth.js';

const PAGE = 50;
const KINDS = ['message.created', 'message.updated', 'message.deleted'];
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30000;

const $ = (id) => document.getElementById(id);
const ui = {
  join: $('join'),
  name: $('name'),
  room: $('room'),
  status: $('status'),
  chat: $('chat'),
  roomTitle: $('room-title'),
  error: $('error'),
  older: $('older'),
  list: $('messages'),
  compose: $('compose'),
  content: $('content'),
  template: $('message-template'),
};

const state = {
  name: '',
  room: '',
  /** id -> message, for every message shown. */
  messages: new Map(),
  /** True while older pages may exist (the oldest shown is not the room's first). */
  moreOlder: false,
  source: null,
  /** The last change applied: where a stream opened by hand resumes. */
  lastEventId: null,
  retryMs: RETRY_MIN_MS,
  retryTimer: null,
  /** Bumped on every (re)load, so answers for an older load are ignored. */
  generation: 0,
};

function setStatus(text) {
  ui.status.textContent = text;
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
  if (message.room !== state.room) return;
  if (kind === 'message.deleted') return remove(message.id);
  if (kind === 'message.updated' && !state.messages.has(message.id)) return;
  // A message older than the oldest page shown belongs to a page not loaded yet.
  const oldest = oldestId();
  if (state.moreOlder && oldest !== undefined && message.id < oldest) return;
  upsert(message);
}

function closeStream() {
  clearTimeout(state.retryTimer);
  state.retryTimer = null;
  state.source?.close();
  state.source = null;
}

function connect() {
  closeStream();
  const params = { room: state.room };
  if (state.lastEventId !== null) params.since = state.lastEventId;
  const source = new EventSource(eventsUrl(params));
  state.source = source;
  source.onopen = () => {
    state.retryMs = RETRY_MIN_MS;
    setStatus(`Live in ${state.room}`);
  };
  for (const kind of KINDS) {
    source.addEventListener(kind, (event) => {
      state.lastEventId = event.lastEventId;
      apply(kind, JSON.parse(event.data));
    });
  }
  // The stream cannot resume from where we were: read the room again.
  source.addEventListener('reset', () => void load());
  source.onerror = () => {
    if (source !== state.source) return;
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

// --- loading ---------------------------------------------------------------

function pageQuery(extra) {
  return new URLSearchParams({ room: state.room, order: 'desc', limit: String(PAGE), ...extra });
}

/** The latest page, then the stream from the change the list was read at. */
async function load() {
  const generation = ++state.generation;
  closeStream();
  setStatus('Loading…');
  try {
    const { headers, body } = await api('GET', `/api/messages?${pageQuery({})}`);
    if (generation !== state.generation) return;
    state.messages.clear();
    ui.list.replaceChildren();
    state.moreOlder = headers.get('link') !== null;
    ui.older.hidden = !state.moreOlder;
    for (const message of body) upsert(message);
    ui.list.scrollTop = ui.list.scrollHeight;
    showError(null);
    state.lastEventId = headers.get('event-seq');
    connect();
  } catch (error) {
    if (generation !== state.generation) return;
    showError(error);
    setStatus(`Offline, retrying in ${Math.round(state.retryMs / 1000)} s…`);
    state.retryTimer = setTimeout(load, state.retryMs);
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

// --- wiring ----------------------------------------------------------------

async function enter(event) {
  event.preventDefault();
  if (!ui.join.reportValidity()) return;
  state.room = ui.room.value.trim();
  try {
    // With authentication on, the name is the token's subject.
    state.name = await signIn(ui.name.value.trim());
  } catch (error) {
    showError(error);
    return;
  }
  ui.name.value = state.name;
  localStorage.setItem('chat.name', state.name);
  localStorage.setItem('chat.room', state.room);
  ui.roomTitle.textContent = `Room ${state.room}`;
  ui.chat.hidden = false;
  state.retryMs = RETRY_MIN_MS;
  void load();
  ui.content.focus();
}

ui.join.addEventListener('submit', (event) => void enter(event));
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

ui.name.value = signedInName() ?? localStorage.getItem('chat.name') ?? '';
ui.room.value = localStorage.getItem('chat.room') ?? 'general';
