// The messages of the room shown: rendered in id (creation) order, edited
// and deleted in place by their author.
import { api } from './api.js';

const $ = (id) => document.getElementById(id);
const ui = {
  list: $('messages'),
  older: $('older'),
  template: $('message-template'),
};

/** id -> message, for every message shown. */
const messages = new Map();
/** True while older pages may exist (the oldest shown is not the room's first). */
let moreOlder = false;
const hooks = { me: () => '', onError: () => undefined };

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
  const own = message.author === hooks.me();
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
export function upsert(message) {
  const known = messages.get(message.id);
  if (known !== undefined && known.version >= message.version) return;
  messages.set(message.id, message);
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

export function remove(id) {
  messages.delete(id);
  itemFor(id)?.remove();
}

/** True while older pages of the room shown may exist. */
export function hasOlder() {
  return moreOlder;
}

/** Scrolls a shown message into view and marks it for a moment; false when it is not shown. */
export function reveal(id) {
  const li = itemFor(id);
  if (li === null) return false;
  // Only the list scrolls (scrollIntoView would move the whole page too).
  const list = ui.list.getBoundingClientRect();
  const item = li.getBoundingClientRect();
  ui.list.scrollTop += item.top - list.top - (list.height - item.height) / 2;
  li.classList.add('found');
  setTimeout(() => li.classList.remove('found'), 2000);
  return true;
}

export function oldestId() {
  return ui.list.firstElementChild?.dataset.id;
}

/** One change of a message of the room shown. */
export function applyChange(kind, message) {
  if (kind === 'message.deleted') return remove(message.id);
  if (kind === 'message.updated' && !messages.has(message.id)) return;
  // A message older than the oldest page shown belongs to a page not loaded yet.
  const oldest = oldestId();
  if (moreOlder && oldest !== undefined && message.id < oldest) return;
  upsert(message);
}

/** The newest message you can see now: the last one whose top is inside the list's view. */
export function newestVisibleId() {
  const bottom = ui.list.getBoundingClientRect().bottom;
  for (let li = ui.list.lastElementChild; li !== null; li = li.previousElementSibling) {
    if (li.getBoundingClientRect().top < bottom) return li.dataset.id;
  }
  return undefined;
}

function startEdit(li) {
  const message = messages.get(li.dataset.id);
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
    renderInto(li, messages.get(message.id) ?? message);
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
      messages.set(body.id, body);
      hooks.onError(null);
      finish();
    } catch (error) {
      hooks.onError(
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
    hooks.onError(null);
  } catch (error) {
    if (error.status === 404) remove(li.dataset.id);
    else hooks.onError(error);
  }
}

/** Shows a page read afresh (`more`: older pages exist), replacing what was shown. */
export function showPage(page, more) {
  messages.clear();
  ui.list.replaceChildren();
  for (const message of page) upsert(message);
  setMoreOlder(more);
}

/** Adds an older page above what is shown, keeping what you look at in place. */
export function showOlder(page, more) {
  const fromBottom = ui.list.scrollHeight - ui.list.scrollTop;
  for (const message of page) upsert(message);
  ui.list.scrollTop = ui.list.scrollHeight - fromBottom;
  setMoreOlder(more);
}

function setMoreOlder(more) {
  moreOlder = more;
  ui.older.hidden = !more;
}

export function clearMessages() {
  showPage([], false);
}

export function scrollToEnd() {
  ui.list.scrollTop = ui.list.scrollHeight;
}

/** `me()` names the author whose messages get edit and delete; `onError(error)` shows what failed. */
export function initMessageList({ me, onError }) {
  hooks.me = me;
  hooks.onError = onError;
  ui.list.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const li = button?.closest('li.message');
    if (!li) return;
    if (button.classList.contains('edit')) startEdit(li);
    else if (button.classList.contains('delete')) void deleteMessage(li);
  });
}
