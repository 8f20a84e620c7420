// What you may do to a message: reply to anyone's (replies.js then holds the
// composer), and to your own: edit (with If-Match on the version the edit
// started from) and delete, which takes the message away at once and sends
// the DELETE only when the "Undo" of its toast was not used in time.
// Reactions have their own module (reactions.js).
import { api } from './api.js';
import { forget, hold, release, remove, rerender, shownMessage, upsert } from './message-list.js';
import { startReply } from './replies.js';

/** How long a delete can be undone. */
const UNDO_MS = 5000;

const $ = (id) => document.getElementById(id);
const ui = {
  list: $('messages'),
  toast: $('toast'),
  toastText: $('toast-text'),
  undo: $('undo'),
};
const hooks = { room: () => '', onError: () => undefined };
/** The delete that may still be undone: { id, room, timer }, or null. */
let pending = null;

const messagePath = (id) => `/api/messages/${encodeURIComponent(id)}`;

function startEdit(li) {
  const message = shownMessage(li.dataset.id);
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

  const finish = (saved) => {
    form.remove();
    content.hidden = false;
    if (saved !== undefined) upsert(saved);
    rerender(li);
    li.querySelector('.edit')?.focus();
  };
  cancel.addEventListener('click', () => finish());
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') finish();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const { body } = await api('PUT', messagePath(message.id), {
        body: { content: field.value },
        // The version the edit started from: a change made meanwhile is a 412, never overwritten.
        headers: { 'if-match': `"${message.version}"` },
      });
      hooks.onError(null);
      finish(body);
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

function hideToast() {
  ui.toast.hidden = true;
}

/** Sends the delete that is waiting now (the page may be closing: keepalive). */
async function commitDelete() {
  if (pending === null) return;
  const { id, room, timer } = pending;
  pending = null;
  clearTimeout(timer);
  hideToast();
  try {
    await api('DELETE', messagePath(id), { keepalive: true });
    forget(id);
  } catch (error) {
    if (error.status === 404) {
      forget(id);
      return;
    }
    // Back where it was, unless another room is shown by now.
    if (room === hooks.room()) release(id);
    else forget(id);
    hooks.onError(error);
  }
}

function undoDelete(event) {
  if (pending === null) return;
  const { id, timer } = pending;
  pending = null;
  clearTimeout(timer);
  hideToast();
  release(id);
  if (event.detail === 0) ui.list.querySelector(`li[data-id="${CSS.escape(id)}"] .delete`)?.focus();
}

/**
 * Takes the message away now; the DELETE follows unless undone (one at a
 * time). From the keyboard, focus moves to Undo (the button it was on is gone).
 */
function deleteLater(li, byKeyboard) {
  void commitDelete();
  const id = li.dataset.id;
  if (hold(id) === undefined) return;
  pending = { id, room: hooks.room(), timer: setTimeout(() => void commitDelete(), UNDO_MS) };
  ui.toastText.textContent = 'Message deleted.';
  ui.toast.hidden = false;
  if (byKeyboard) ui.undo.focus();
}

/** Sends a waiting delete now (another room is opened, or the page goes away). */
export function settleDeletes() {
  void commitDelete();
}

/** `room()` names the room shown; `onError(error)` shows what failed. */
export function initMessageActions({ room, onError }) {
  hooks.room = room;
  hooks.onError = onError;
  ui.list.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const li = button?.closest('li.message');
    if (!li) return;
    if (button.classList.contains('reply')) {
      const message = shownMessage(li.dataset.id);
      if (message !== undefined) startReply(message);
    } else if (button.classList.contains('edit')) startEdit(li);
    // A click from the keyboard (Enter, Space) has no pointer: detail 0.
    else if (button.classList.contains('delete')) deleteLater(li, event.detail === 0);
  });
  ui.undo.addEventListener('click', undoDelete);
  window.addEventListener('pagehide', settleDeletes);
}
