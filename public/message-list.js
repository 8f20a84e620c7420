// The messages of the room shown: one window of its history, in id
// (creation) order, with a separator where the day changes. The window grows
// older pages at the top and newer ones at the bottom (after a jump into the
// past); only a window that reaches the newest message takes live messages.
import { dayKey, dayLabel, whenLabel } from './days.js';
import { forgetReactions, renderReactions } from './reactions.js';
import { noteGone, noteMessage, renderQuote } from './replies.js';

const $ = (id) => document.getElementById(id);
const ui = {
  list: $('messages'),
  older: $('older'),
  empty: $('empty-room'),
  template: $('message-template'),
};

/** id -> message, for every message shown. */
const messages = new Map();
/** id -> message taken off the list for a while (a delete that may still be undone). */
const held = new Map();
const state = {
  /** A page was shown (the empty-room line may show). */
  shown: false,
  /** Older (newer) messages than the window's exist. */
  moreOlder: false,
  moreNewer: false,
  me: () => '',
};

function renderInto(li, message, now) {
  li.dataset.id = message.id;
  li.dataset.version = String(message.version);
  li.querySelector('.author').textContent = message.author;
  const time = li.querySelector('.time');
  const created = new Date(message.createdAt);
  time.dateTime = message.createdAt;
  time.textContent = whenLabel(created, now);
  time.title = created.toLocaleString();
  li.querySelector('.edited').hidden = message.version === 1;
  li.querySelector('.content').textContent = message.content;
  renderQuote(li, message);
  renderReactions(li);
  const own = message.author === state.me();
  li.classList.toggle('own', own);
  // Everyone may reply and react; only the author edits and deletes.
  li.querySelector('.actions').hidden = false;
  li.querySelector('.edit').hidden = !own;
  li.querySelector('.delete').hidden = !own;
}

function itemFor(id) {
  return ui.list.querySelector(`li.message[data-id="${CSS.escape(id)}"]`);
}

function items() {
  return ui.list.querySelectorAll('li.message');
}

function nearBottom() {
  const el = ui.list;
  return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
}

function marker(className, text) {
  const li = document.createElement('li');
  li.className = className;
  const span = document.createElement('span');
  span.textContent = text;
  li.append(span);
  return li;
}

/**
 * The separators, the times and the empty-room line, after any change of the
 * list: a separator before the first message of each day, and one above the
 * room's first message once it is shown. Labels are relative to now
 * ("Today"), so they are worked out again each time.
 */
function relabel() {
  const now = new Date();
  for (const li of ui.list.querySelectorAll('li.day, li.start')) li.remove();
  let day = null;
  for (const li of items()) {
    const created = new Date(messages.get(li.dataset.id).createdAt);
    li.querySelector('.time').textContent = whenLabel(created, now);
    if (dayKey(created) === day) continue;
    day = dayKey(created);
    ui.list.insertBefore(marker('day', dayLabel(created, now)), li);
  }
  if (state.shown && !state.moreOlder && messages.size > 0) {
    ui.list.prepend(marker('start', 'The start of this room'));
  }
  ui.empty.hidden = !state.shown || messages.size > 0 || state.moreOlder || state.moreNewer;
  ui.older.hidden = !state.moreOlder;
}

/** Puts a message in its place (or refreshes it), without relabelling. */
function place(message) {
  if (held.has(message.id)) {
    if (held.get(message.id).version < message.version) held.set(message.id, message);
    return;
  }
  const known = messages.get(message.id);
  if (known !== undefined && known.version >= message.version) return;
  messages.set(message.id, message);
  // Quotes of it (replies on screen) show it as it is now.
  noteMessage(message);
  let li = itemFor(message.id);
  if (li === null) {
    li = ui.template.content.firstElementChild.cloneNode(true);
    let next = null;
    const shown = items();
    for (let i = shown.length - 1; i >= 0 && shown[i].dataset.id > message.id; i--) next = shown[i];
    ui.list.insertBefore(li, next);
  } else if (li.querySelector('form.edit-form') !== null) {
    // Being edited here: keep the form, refresh what it is based on.
    li.dataset.version = String(message.version);
    return;
  }
  renderInto(li, message, new Date());
}

/** Shows a message, or a newer version of one already shown; ids sort in creation order. */
export function upsert(message) {
  const follow = nearBottom();
  const isNew = !messages.has(message.id);
  place(message);
  relabel();
  if (follow && isNew && message.id === newestId()) scrollToEnd();
}

export function remove(id) {
  messages.delete(id);
  itemFor(id)?.remove();
  relabel();
}

/** The message shown with this id, if any. */
export function shownMessage(id) {
  return messages.get(id);
}

/** Takes a message off the list for a while; `release` puts it back, `forget` drops it. */
export function hold(id) {
  const message = messages.get(id);
  if (message === undefined) return undefined;
  held.set(id, message);
  remove(id);
  return message;
}

export function release(id) {
  const message = held.get(id);
  held.delete(id);
  if (message !== undefined) upsert(message);
}

export function forget(id) {
  held.delete(id);
}

/** True while older (newer) pages of the room shown may exist beyond the window. */
export function hasOlder() {
  return state.moreOlder;
}

export function hasNewer() {
  return state.moreNewer;
}

/** Scrolls a shown message into the middle of the view and marks it as found; false when not shown. */
export function reveal(id) {
  const li = itemFor(id);
  if (li === null) return false;
  // Only the list scrolls (scrollIntoView would move the whole page too).
  const list = ui.list.getBoundingClientRect();
  const item = li.getBoundingClientRect();
  ui.list.scrollTop += item.top - list.top - (list.height - item.height) / 2;
  for (const found of ui.list.querySelectorAll('li.found')) found.classList.remove('found');
  li.classList.add('found');
  return true;
}

export function oldestId() {
  return ui.list.querySelector('li.message')?.dataset.id;
}

export function newestId() {
  const shown = items();
  return shown.length === 0 ? undefined : shown[shown.length - 1].dataset.id;
}

/** One change of a message of the room shown. */
export function applyChange(kind, message) {
  if (kind === 'message.deleted') {
    held.delete(message.id);
    noteGone(message.id);
    forgetReactions(message.id);
    return remove(message.id);
  }
  if (held.has(message.id)) return place(message);
  if (kind === 'message.updated' && !messages.has(message.id)) return;
  // Outside the window: it belongs to a page not loaded yet.
  const [oldest, newest] = [oldestId(), newestId()];
  if (state.moreOlder && oldest !== undefined && message.id < oldest) return;
  if (state.moreNewer && newest !== undefined && message.id > newest) return;
  upsert(message);
}

/** The newest message you can see now: the last one whose top is inside the list's view. */
export function newestVisibleId() {
  const bottom = ui.list.getBoundingClientRect().bottom;
  const shown = items();
  for (let i = shown.length - 1; i >= 0; i--) {
    if (shown[i].getBoundingClientRect().top < bottom) return shown[i].dataset.id;
  }
  return undefined;
}

/** Shows a window read afresh (`older`, `newer`: pages exist beyond it), replacing what was shown. */
export function showPage(page, { older, newer }) {
  messages.clear();
  ui.list.replaceChildren();
  for (const message of page) place(message);
  state.shown = true;
  state.moreOlder = older;
  state.moreNewer = newer;
  relabel();
}

/** Adds an older page above the window, keeping what you look at in place. */
export function showOlder(page, more) {
  const fromBottom = ui.list.scrollHeight - ui.list.scrollTop;
  for (const message of page) place(message);
  state.moreOlder = more;
  relabel();
  ui.list.scrollTop = ui.list.scrollHeight - fromBottom;
}

/** Adds a newer page below the window (it stays where it is). */
export function showNewer(page, more) {
  for (const message of page) place(message);
  state.moreNewer = more;
  relabel();
}

/** Nothing shown (a room being opened, or none). */
export function clearMessages() {
  messages.clear();
  ui.list.replaceChildren();
  state.shown = false;
  state.moreOlder = false;
  state.moreNewer = false;
  relabel();
}

export function scrollToEnd() {
  ui.list.scrollTop = ui.list.scrollHeight;
}

/** `me()` names the author whose messages get the edit and delete actions. */
export function initMessageList({ me }) {
  state.me = me;
}

/** Renders a message again after its item was changed by hand (an edit form closed). */
export function rerender(li) {
  const message = messages.get(li.dataset.id);
  if (message !== undefined) renderInto(li, message, new Date());
}
