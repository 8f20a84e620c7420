// How the page says when: a day separator names the day ("Today",
// "Yesterday", "Tuesday, November 17"), and a message shows its time today,
// its date and time before that. In the reader's own locale and time zone.

const TIME = { hour: '2-digit', minute: '2-digit' };

/** The local calendar day of a moment, as a sortable key. */
export function dayKey(date) {
  return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`;
}

function daysBefore(now, days) {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate() - days);
}

/** The name of a day for a separator. */
export function dayLabel(date, now = new Date()) {
  const key = dayKey(date);
  if (key === dayKey(now)) return 'Today';
  if (key === dayKey(daysBefore(now, 1))) return 'Yesterday';
  const options = { weekday: 'long', month: 'long', day: 'numeric' };
  if (date.getFullYear() !== now.getFullYear()) options.year = 'numeric';
  return date.toLocaleDateString([], options);
}

/** When a message was written: the time today, the date and time before (and in another year). */
export function whenLabel(date, now = new Date()) {
  if (dayKey(date) === dayKey(now)) return date.toLocaleTimeString([], TIME);
  const options = { month: 'short', day: 'numeric', ...TIME };
  if (date.getFullYear() !== now.getFullYear()) options.year = 'numeric';
  return date.toLocaleString([], options);
}
