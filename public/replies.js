// Replies: a message that answers another (`replyTo`) shows a quote of it
// (author and first line), and a click on the quote jumps there. A parent
// that is not on screen is read by id, the missing ones of a whole page in
// one request (GET /api/messages?id=..&id=..: an absent one is gone, and no
// request fails for it). The composer also lives here while you reply.
import { api } from './api.js';

/** More than this many code points of the first line are cut with an ellipsis. */
const QUOTE_CODE_POINTS = 80;
/** The most ids one list request may name. */
const MAX_IDS = 100;

const $ = (id) => document.getElementById(id);
const ui = {
  list: $('messages'),
  replying: $('replying'),
  replyingText: $('replying-text'),
  cancel: $('cancel-reply'),
  content: $('content'),
};
const hooks = { onJump: () => undefined, onError: () => undefined };

/** id -> { author, content } of a message a quote may show, or null once it is gone. */
const parents = new Map();
/** Parent ids to read, gathered until the current task ends (a page at a time). */
const wanted = new Set();
/** The message the composer answers: { id, author, content }, or null. */
let replyingTo = null;

/** The first line of a message's content, cut short for a quote. */
function quoteText(content) {
  const line = content.trim().split(/\r\n|\r|\n/, 1)[0] ?? '';
  const points = [...line];
  return points.length > QUOTE_CODE_POINTS
    ? `${points.slice(0, QUOTE_CODE_POINTS).join('')}…`
    : line;
}

function fillQuote(quote, parentId) {
  const parent = parents.get(parentId);
  quote.replaceChildren();
  if (parent === undefined) {
    quote.textContent = 'Loading the quoted message…';
    quote.removeAttribute('aria-label');
    quote.disabled = true;
    want(parentId);
    return;
  }
  if (parent === null) {
    quote.textContent = 'a deleted message';
    quote.setAttribute('aria-label', 'In reply to a deleted message');
    quote.disabled = true;
    return;
  }
  const author = document.createElement('span');
  author.className = 'quote-author';
  author.textContent = parent.author;
  const text = document.createElement('span');
  text.className = 'quote-text';
  text.textContent = quoteText(parent.content);
  quote.append(author, ': ', text);
  // Said in full to a screen reader: the quote is a button that shows the message it answers.
  quote.setAttribute('aria-label', `In reply to ${parent.author}: ${text.textContent}`);
  quote.disabled = false;
}

function quotesOf(parentId) {
  return ui.list.querySelectorAll(`li.message[data-reply-to="${CSS.escape(parentId)}"] .quote`);
}

/** Shows (or hides) the quote of a message being rendered. */
export function renderQuote(li, message) {
  const quote = li.querySelector('.quote');
  if (message.replyTo === null || message.replyTo === undefined) {
    delete li.dataset.replyTo;
    quote.hidden = true;
    return;
  }
  li.dataset.replyTo = message.replyTo;
  quote.hidden = false;
  fillQuote(quote, message.replyTo);
}

/** A message the page has (shown, edited): quotes of it show it as it is now. */
export function noteMessage(message) {
  parents.set(message.id, { author: message.author, content: message.content });
  for (const quote of quotesOf(message.id)) fillQuote(quote, message.id);
}

/** A message deleted: its replies stay, and their quotes say it is gone. */
export function noteGone(id) {
  parents.set(id, null);
  for (const quote of quotesOf(id)) fillQuote(quote, id);
  if (replyingTo?.id === id) cancelReply();
}

/** A fresh window: quotes read before may be stale by now (their room was closed). */
export function clearQuotes() {
  parents.clear();
}

function want(id) {
  // Once this task has rendered everything it will: one read for all of them.
  if (wanted.size === 0) void Promise.resolve().then(readWanted);
  wanted.add(id);
}

/** Reads the parents asked for by everything rendered in this task: one request per 100. */
async function readWanted() {
  const ids = [...wanted].filter((id) => !parents.has(id));
  wanted.clear();
  for (let i = 0; i < ids.length; i += MAX_IDS) {
    const chunk = ids.slice(i, i + MAX_IDS);
    const query = new URLSearchParams({ limit: String(MAX_IDS) });
    for (const id of chunk) query.append('id', id);
    try {
      const { body } = await api('GET', `/api/messages?${query}`);
      const found = new Set();
      for (const message of body) {
        found.add(message.id);
        if (!parents.has(message.id) || parents.get(message.id) !== null) noteMessage(message);
      }
      for (const id of chunk) if (!found.has(id) && !parents.has(id)) noteGone(id);
    } catch (error) {
      hooks.onError(error);
    }
  }
}

// --- the composer ----------------------------------------------------------

/** The id the next message answers, or null. */
export function replyTarget() {
  return replyingTo?.id ?? null;
}

/** The composer answers `message` until it is sent or cancelled. */
export function startReply(message) {
  replyingTo = { id: message.id, author: message.author, content: message.content };
  ui.replyingText.textContent = `Replying to ${message.author}: ${quoteText(message.content)}`;
  ui.replying.hidden = false;
  ui.content.focus();
}

export function cancelReply() {
  replyingTo = null;
  ui.replying.hidden = true;
  ui.replyingText.textContent = '';
}

/** `onJump(id)` shows the message a quote names; `onError(error)` shows what failed. */
export function initReplies({ onJump, onError }) {
  hooks.onJump = onJump;
  hooks.onError = onError;
  ui.list.addEventListener('click', (event) => {
    const quote = event.target.closest('button.quote');
    const id = quote?.closest('li.message')?.dataset.replyTo;
    if (id !== undefined) hooks.onJump(id);
  });
  ui.cancel.addEventListener('click', () => {
    cancelReply();
    ui.content.focus();
  });
  ui.content.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && replyingTo !== null) cancelReply();
  });
}
