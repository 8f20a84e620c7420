// Reactions under each message: a chip per emoji with its count (yours
// pressed), a click toggles yours (PUT or DELETE
// /api/messages/{id}/reactions/{emoji}/{you}), and a small picker adds one.
// The summaries of a page of messages come in ONE request
// (GET /api/reactions?messageId=..), then the counts follow the event stream.
//
// Which reactions are yours: the service says so (`me`) when auth is on.
// With auth off it cannot (`me` is always false there), so the page also
// remembers the ones it saw you make (your answers, and events whose subject
// is your name); a click on a chip it does not know as yours adds yours, and
// a 200 (you had it already) just marks it.
import { api } from './api.js';

/** A handful of common ones, one with a skin tone and one ZWJ sequence. */
const PICKER_EMOJI = ['👍', '❤️', '😂', '🎉', '😮', '😢', '👍🏽', '🧑‍💻'];
/** The most message ids one summary request may name. */
const MAX_IDS = 100;

const $ = (id) => document.getElementById(id);
const ui = { list: $('messages') };
const hooks = { me: () => '', onError: () => undefined };

/** message id -> [{ emoji, count, me }], in the service's order, for the messages whose summary is known. */
const summaries = new Map();
/** Ids whose summary is being read -> that read ({ changed }: the ids a change came in for meanwhile). */
const reading = new Map();
/** `${id} ${emoji}` of your reactions the page saw you make (auth off cannot say). */
const mine = new Set();
/** Your own changes applied from their answers: `${kind} ${id} ${emoji}` -> how many events to skip. */
const applied = new Map();
/**
 * Your own changes sent and not answered yet -> true once their event came
 * (the stream may be quicker than the answer): the answer then adds nothing.
 */
const sent = new Map();

const key = (id, emoji) => `${id} ${emoji}`;
const reactionPath = (id, emoji) =>
  `/api/messages/${encodeURIComponent(id)}/reactions/${encodeURIComponent(emoji)}/${encodeURIComponent(hooks.me())}`;

function itemFor(id) {
  return ui.list.querySelector(`li.message[data-id="${CSS.escape(id)}"]`);
}

function chip({ emoji, count, me }) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'chip';
  button.dataset.emoji = emoji;
  button.setAttribute('aria-pressed', String(me));
  button.title = me ? `Remove your ${emoji}` : `React with ${emoji}`;
  const face = document.createElement('span');
  face.className = 'emoji';
  face.textContent = emoji;
  const number = document.createElement('span');
  number.className = 'count';
  number.textContent = String(count);
  button.append(face, ' ', number);
  return button;
}

/** Draws the chips of a message being rendered (nothing while its summary is unknown). */
export function renderReactions(li) {
  const box = li.querySelector('.reactions');
  const id = li.dataset.id;
  const summary = summaries.get(id) ?? [];
  // Keep the focus on a chip that is redrawn (a toggle from the keyboard).
  const focused = box.contains(document.activeElement)
    ? document.activeElement.dataset.emoji
    : null;
  box.replaceChildren(...summary.map((entry) => chip(entry)));
  box.hidden = summary.length === 0;
  if (focused) box.querySelector(`.chip[data-emoji="${CSS.escape(focused)}"]`)?.focus();
}

function redraw(id) {
  const li = itemFor(id);
  if (li !== null) renderReactions(li);
}

/** One change of a count: +1 or -1 of `emoji` on message `id`, `me` when it is yours. */
function change(id, emoji, delta, yours) {
  let summary = summaries.get(id);
  if (summary === undefined) {
    // Not shown: its page reads its counts. Shown but never read: it arrived live
    // (or was replayed after its page), so it had none.
    if (itemFor(id) === null) return;
    summary = [];
    summaries.set(id, summary);
  }
  const at = summary.findIndex((entry) => entry.emoji === emoji);
  if (at === -1) {
    if (delta > 0) summary.push({ emoji, count: delta, me: yours });
  } else {
    const entry = summary[at];
    entry.count += delta;
    if (yours) entry.me = delta > 0;
    if (entry.count <= 0) summary.splice(at, 1);
  }
  redraw(id);
}

function mark(id, emoji, yours) {
  if (yours) mine.add(key(id, emoji));
  else mine.delete(key(id, emoji));
}

/**
 * Reads the summaries of a page of shown messages: one request (per 100).
 * A change of one of them that arrives meanwhile may or may not be in the
 * answer, so those are read again afterwards.
 */
export function loadReactions(ids) {
  for (let i = 0; i < ids.length; i += MAX_IDS) void readSummaries(ids.slice(i, i + MAX_IDS));
}

async function readSummaries(ids) {
  // This read owns its ids until a later read of them takes them over.
  const read = { changed: new Set() };
  for (const id of ids) reading.set(id, read);
  const query = new URLSearchParams();
  for (const id of ids) query.append('messageId', id);
  let answer;
  try {
    ({ body: answer } = await api('GET', `/api/reactions?${query}`));
  } catch (error) {
    for (const id of ids) if (reading.get(id) === read) reading.delete(id);
    hooks.onError(error);
    return;
  }
  const byId = new Map(answer.map((entry) => [entry.messageId, entry.reactions]));
  const again = [];
  for (const id of ids) {
    if (reading.get(id) !== read) continue;
    reading.delete(id);
    if (read.changed.has(id)) again.push(id);
    const reactions = (byId.get(id) ?? []).map((entry) => ({
      ...entry,
      me: entry.me || mine.has(key(id, entry.emoji)),
    }));
    summaries.set(id, reactions);
    redraw(id);
  }
  if (again.length > 0) loadReactions(again);
}

/** A fresh window: what was known of other messages may be stale by now (their room was closed). */
export function clearReactions() {
  summaries.clear();
}

/** A message that has just been created has no reactions yet. */
export function noReactionsYet(id) {
  if (!summaries.has(id) && !reading.has(id)) summaries.set(id, []);
}

/** A message gone: its reactions went with it. */
export function forgetReactions(id) {
  summaries.delete(id);
}

/** One `reaction.added` / `reaction.removed` of the stream (data: the reaction). */
export function applyReactionChange(kind, reaction) {
  const { messageId: id, emoji, subject } = reaction;
  const yours = subject === hooks.me();
  if (yours) mark(id, emoji, kind === 'reaction.added');
  const skip = `${kind} ${id} ${emoji}`;
  if (yours && applied.has(skip)) {
    // Shown already, from the answer to your own request.
    const left = applied.get(skip) - 1;
    if (left === 0) applied.delete(skip);
    else applied.set(skip, left);
    return;
  }
  if (yours && sent.has(skip)) sent.set(skip, true);
  if (reading.has(id)) {
    // Maybe in the answer, maybe not: that message is read again.
    reading.get(id).changed.add(id);
    return;
  }
  change(id, emoji, kind === 'reaction.added' ? 1 : -1, yours);
}

/** Your own change, shown from its answer unless its event came first. */
function applyOwn(kind, id, emoji) {
  const skip = `${kind} ${id} ${emoji}`;
  const seen = sent.get(skip) === true;
  sent.delete(skip);
  if (seen) return;
  applied.set(skip, (applied.get(skip) ?? 0) + 1);
  mark(id, emoji, kind === 'reaction.added');
  change(id, emoji, kind === 'reaction.added' ? 1 : -1, true);
}

function isYours(id, emoji) {
  const entry = summaries.get(id)?.find((e) => e.emoji === emoji);
  return entry?.me === true || mine.has(key(id, emoji));
}

/** Adds yours, or takes it away when it is yours. */
async function toggle(id, emoji) {
  const removing = isYours(id, emoji);
  const skip = `${removing ? 'reaction.removed' : 'reaction.added'} ${id} ${emoji}`;
  sent.set(skip, false);
  try {
    if (removing) {
      await api('DELETE', reactionPath(id, emoji));
      applyOwn('reaction.removed', id, emoji);
    } else {
      const { status } = await api('PUT', reactionPath(id, emoji));
      if (status === 201) applyOwn('reaction.added', id, emoji);
      else {
        sent.delete(skip);
        // You had it already (auth off could not say): now the page knows.
        mark(id, emoji, true);
        const entry = summaries.get(id)?.find((e) => e.emoji === emoji);
        if (entry !== undefined) entry.me = true;
        redraw(id);
      }
    }
    hooks.onError(null);
  } catch (error) {
    sent.delete(skip);
    if (error.status === 409) {
      hooks.onError(new Error('This message has 20 different reactions already.'));
    } else hooks.onError(error);
  }
}

// --- the picker --------------------------------------------------------------

function closePicker(li, focusReact) {
  const picker = li.querySelector('.picker');
  if (picker === null) return;
  picker.remove();
  const react = li.querySelector('.react');
  react.setAttribute('aria-expanded', 'false');
  if (focusReact) react.focus();
}

function openPicker(li) {
  for (const open of ui.list.querySelectorAll('li.message .picker')) {
    closePicker(open.closest('li.message'), false);
  }
  const picker = document.createElement('div');
  picker.className = 'picker';
  picker.setAttribute('role', 'group');
  picker.setAttribute('aria-label', 'Pick a reaction');
  for (const emoji of PICKER_EMOJI) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'pick';
    button.dataset.emoji = emoji;
    button.textContent = emoji;
    button.setAttribute('aria-label', `React with ${emoji}`);
    picker.append(button);
  }
  li.querySelector('.reactions').after(picker);
  li.querySelector('.react').setAttribute('aria-expanded', 'true');
  picker.querySelector('button').focus();
}

/** `me()` is your subject (the name you joined with); `onError(error)` shows what failed. */
export function initReactions({ me, onError }) {
  hooks.me = me;
  hooks.onError = onError;
  ui.list.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const li = button?.closest('li.message');
    if (!li) return;
    if (button.classList.contains('react')) {
      if (li.querySelector('.picker') === null) openPicker(li);
      else closePicker(li, false);
    } else if (button.classList.contains('pick')) {
      closePicker(li, event.detail === 0);
      void toggleOrAdd(li.dataset.id, button.dataset.emoji);
    } else if (button.classList.contains('chip')) {
      void toggle(li.dataset.id, button.dataset.emoji);
    }
  });
  ui.list.addEventListener('keydown', (event) => {
    const li = event.target.closest?.('li.message');
    if (event.key === 'Escape' && li && li.querySelector('.picker') !== null) {
      closePicker(li, true);
    }
  });
}

/** From the picker: adds yours (an emoji you have already is left as it is). */
async function toggleOrAdd(id, emoji) {
  if (isYours(id, emoji)) return;
  await toggle(id, emoji);
}
