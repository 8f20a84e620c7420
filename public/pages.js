// Reading pages of a room's messages while its changes stream in. A change
// received while a page is read may or may not be in it; the page's
// Event-Seq says which are: `replay` applies those after it, by id and
// version, so one applied twice is harmless.
import { api, links } from './api.js';
import { applyChange } from './message-list.js';

const PAGE = 50;
/** Pages being read now, and the changes received meanwhile. */
let reading = 0;
let journal = [];

/** One page of `room` (`params`: order and bounds): { body, links, seq }. */
export async function readPage(room, params) {
  if (reading++ === 0) journal = [];
  try {
    const query = new URLSearchParams({ room, limit: String(PAGE), ...params });
    const { headers, body } = await api('GET', `/api/messages?${query}`);
    return { body, links: links(headers), seq: headers.get('event-seq') };
  } finally {
    reading--;
  }
}

/** A change of the open room's messages, kept while a page is being read. */
export function noteChange(kind, data, seq) {
  if (reading > 0) journal.push({ kind, data, seq });
}

/** Applies the changes received while `page` was read that it may not hold yet. */
export function replay(page) {
  for (const { kind, data, seq } of journal) {
    if (seq > Number(page.seq)) applyChange(kind, data);
  }
}
