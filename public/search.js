// Search (GET /api/messages?q=): over the open room or every room you may
// read, newest first, the terms highlighted, a click jumps to the message.
// Terms are matched as the service matches them: NFKC, then lowercase.
import { api, links } from './api.js';
import { whenLabel } from './days.js';

const PAGE = 20;
const $ = (id) => document.getElementById(id);
const ui = {
  form: $('search'),
  q: $('search-q'),
  scope: $('search-scope'),
  panel: $('search-results'),
  title: $('search-title'),
  list: $('results'),
  more: $('more-results'),
  close: $('close-search'),
};
const hooks = { room: () => '', onJump: () => undefined, onError: () => undefined };
/** The next page of the current search (its Link), or null. */
let next = null;

/** The service's normalization (src/domain/search-text.ts). */
function normalize(text) {
  return text.normalize('NFKC').toLowerCase();
}

function termsOf(q) {
  return [...new Set(normalize(q).split(/\p{White_Space}+/u))].filter((t) => t !== '');
}

/**
 * The content as text nodes and <mark>s: each stretch whose normalized form
 * holds a term is marked. Normalized piece by piece (a character with its
 * combining marks), so every piece maps back to the characters it came from.
 */
function highlighted(content, terms) {
  const pieces = content.match(/\P{M}\p{M}*|\p{M}+/gsu) ?? [];
  let normalized = '';
  const owner = []; // normalized index -> piece index
  pieces.forEach((piece, i) => {
    const n = normalize(piece);
    normalized += n;
    for (let k = 0; k < n.length; k++) owner.push(i);
  });
  const marked = new Array(pieces.length).fill(false);
  for (const term of terms) {
    for (let at = normalized.indexOf(term); at !== -1; at = normalized.indexOf(term, at + 1)) {
      for (let k = at; k < at + term.length; k++) marked[owner[k]] = true;
    }
  }
  const out = document.createDocumentFragment();
  let run = '';
  let runMarked = false;
  const flush = () => {
    if (run === '') return;
    if (runMarked) {
      const mark = document.createElement('mark');
      mark.textContent = run;
      out.append(mark);
    } else out.append(document.createTextNode(run));
    run = '';
  };
  pieces.forEach((piece, i) => {
    if (marked[i] !== runMarked) {
      flush();
      runMarked = marked[i];
    }
    run += piece;
  });
  flush();
  return out;
}

function resultItem(message, terms) {
  const li = document.createElement('li');
  li.className = 'result';
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'result-link';
  const meta = document.createElement('span');
  meta.className = 'meta';
  meta.textContent = `${message.author} in ${message.room}, ${whenLabel(new Date(message.createdAt))}`;
  const content = document.createElement('span');
  content.className = 'content';
  content.append(highlighted(message.content, terms));
  button.append(meta, content);
  button.addEventListener('click', () => hooks.onJump(message));
  li.append(button);
  return li;
}

async function showPage(url, terms, fresh) {
  const { headers, body } = await api('GET', url);
  if (fresh) ui.list.replaceChildren();
  for (const message of body) ui.list.append(resultItem(message, terms));
  next = links(headers).next ?? null;
  ui.more.hidden = next === null;
  const count = ui.list.children.length;
  ui.title.textContent =
    count === 0 ? 'No messages found' : `${count}${next === null ? '' : '+'} found`;
}

async function search(event) {
  event.preventDefault();
  const q = ui.q.value;
  const terms = termsOf(q);
  if (terms.length === 0) return;
  const params = new URLSearchParams({ q, order: 'desc', limit: String(PAGE) });
  const room = hooks.room();
  if (ui.scope.value === 'room' && room !== '') params.set('room', room);
  try {
    ui.panel.hidden = false;
    ui.panel.dataset.terms = JSON.stringify(terms);
    await showPage(`/api/messages?${params}`, terms, true);
    hooks.onError(null);
  } catch (error) {
    hooks.onError(error);
  }
}

async function more() {
  if (next === null) return;
  try {
    await showPage(next, JSON.parse(ui.panel.dataset.terms ?? '[]'), false);
  } catch (error) {
    hooks.onError(error);
  }
}

export function closeSearch() {
  ui.panel.hidden = true;
  ui.list.replaceChildren();
  next = null;
}

/** `room()` names the open room; `onJump(message)` shows a result in its room. */
export function initSearch({ room, onJump, onError }) {
  hooks.room = room;
  hooks.onJump = onJump;
  hooks.onError = onError;
  ui.form.addEventListener('submit', (event) => void search(event));
  ui.more.addEventListener('click', () => void more());
  ui.close.addEventListener('click', closeSearch);
}
