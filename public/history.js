// A message's edit history: the "(edited)" mark is a button that opens a
// dialog with every version (GET /api/messages/{id}/revisions, oldest
// first, following its Link: rel="next"), who wrote it and when.
import { api, links } from './api.js';
import { whenLabel } from './days.js';

const PAGE = 100;
const $ = (id) => document.getElementById(id);
const ui = {
  list: $('messages'),
  dialog: $('history'),
  status: $('history-status'),
  revisions: $('revisions'),
  close: $('close-history'),
};
const hooks = { onError: () => undefined };
/** Bumped on every opening, so a slow answer for an earlier one is dropped. */
let opening = 0;
/** The button that opened the dialog: focus goes back there when it closes. */
let opener = null;

function revisionItem(revision) {
  const li = document.createElement('li');
  li.className = 'revision';
  const meta = document.createElement('div');
  meta.className = 'meta';
  const version = document.createElement('span');
  version.className = 'author';
  version.textContent = `Version ${revision.version}`;
  // editedBy is null for edits made with auth off: nobody signed them.
  const who = document.createElement('span');
  who.className = 'editor';
  who.textContent = revision.editedBy === null ? 'by someone' : `by ${revision.editedBy}`;
  const time = document.createElement('time');
  const at = new Date(revision.updatedAt);
  time.dateTime = revision.updatedAt;
  time.textContent = whenLabel(at);
  time.title = at.toLocaleString();
  meta.append(version, who, time);
  const content = document.createElement('p');
  content.className = 'content';
  content.textContent = revision.content;
  li.append(meta, content);
  return li;
}

async function open(id, button) {
  const mine = ++opening;
  ui.revisions.replaceChildren();
  ui.status.textContent = 'Loading…';
  opener = button;
  if (!ui.dialog.open) ui.dialog.showModal();
  let url = `/api/messages/${encodeURIComponent(id)}/revisions?limit=${PAGE}`;
  try {
    while (url !== undefined) {
      const { headers, body } = await api('GET', url);
      if (mine !== opening) return;
      for (const revision of body) ui.revisions.append(revisionItem(revision));
      url = links(headers).next;
    }
    const count = ui.revisions.children.length;
    ui.status.textContent = `${count} version${count === 1 ? '' : 's'}, oldest first`;
  } catch (error) {
    if (mine !== opening) return;
    ui.status.textContent =
      error.status === 404 ? 'This message is gone.' : 'The history could not be read.';
    hooks.onError(error.status === 404 ? null : error);
  }
}

/** `onError(error)` shows what failed. */
export function initHistory({ onError }) {
  hooks.onError = onError;
  ui.list.addEventListener('click', (event) => {
    const button = event.target.closest('button.edited');
    const id = button?.closest('li.message')?.dataset.id;
    if (id !== undefined) void open(id, button);
  });
  ui.close.addEventListener('click', () => ui.dialog.close());
  ui.dialog.addEventListener('close', () => {
    opening++;
    if (opener?.isConnected) opener.focus();
    opener = null;
  });
}
