/** Text a problem repeats from the request is cut to a bounded length. */

/** `text` cut to at most `max` UTF-16 units, ending in an ellipsis, never inside a surrogate pair. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max - 1;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}…`;
}
